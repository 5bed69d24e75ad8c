import { type Parsed, parseGoInt } from "./value-parsers.js";

/** `WORKERS`: a number of decision threads, or `auto` (the CPUs the process may use, found at start). */
export type WorkersSetting = number | "auto";

/** The most worker threads `WORKERS` may ask for: far beyond any pod, well below what would exhaust memory. */
export const MAX_WORKERS = 256;

/** `WORKERS`: `auto` (any case), or an integer from 1 to {@link MAX_WORKERS}. */
export function parseWorkers(text: string): Parsed<WorkersSetting> {
  if (text.trim().toLowerCase() === "auto") return { ok: true, value: "auto" };
  const parsed = parseGoInt(text.trim());
  if (!parsed.ok || parsed.value < 1 || parsed.value > MAX_WORKERS) {
    return { ok: false, reason: `want auto or a whole number from 1 to ${MAX_WORKERS}` };
  }
  return parsed;
}
