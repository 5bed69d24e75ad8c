import type { LimitJson } from "../console/console-contract";

/** A per-second rate with one decimal (`12.0`). */
export function rate(value: number | undefined): string {
  return (value ?? 0).toFixed(1);
}

/** A count with thousands separators. */
export function count(value: number | undefined): string {
  return Math.round(value ?? 0).toLocaleString("en-US");
}

/** `10 / MINUTE`, `10 / 5 MINUTE` with a multiplier, `unlimited`. */
export function limitText(
  limit: Pick<LimitJson, "requestsPerUnit" | "unit" | "unitMultiplier" | "unlimited">,
): string {
  if (limit.unlimited) return "unlimited";
  const multiplier = limit.unitMultiplier > 1 ? `${limit.unitMultiplier} ` : "";
  return `${limit.requestsPerUnit} / ${multiplier}${limit.unit ?? "?"}`;
}

export function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

export function duration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** A moment as local date and time, `2026-11-26 16:40:05`. */
export function time(ms: number): string {
  const date = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}
