// The outage benchmark's numbers: per-phase statistics of the recorded calls and RSS samples, and the
// bench/OUTAGE.md table.
import { OUTCOME } from "./grpc-load.mjs";

const round = (value, digits) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);

function quantile(sorted, p) {
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/**
 * Statistics of the calls sent in [fromMs, toMs) and of the daemon's RSS samples ({ t, rssMiB }) taken then:
 * counts by outcome, decisions (OK + OVER_LIMIT) per second, latency quantiles of every answer, RSS max and last,
 * and the load generator's worst event-loop lag (samples' `lagMs`).
 */
export function phaseStats(phase, records, samples, fromMs, toMs) {
  const seconds = Math.max(0, toMs - fromMs) / 1000;
  const counts = { [OUTCOME.OK]: 0, [OUTCOME.OVER_LIMIT]: 0, [OUTCOME.ERROR]: 0, [OUTCOME.SKIPPED]: 0 };
  const latencies = [];
  const messages = new Map();
  for (const r of records) {
    if (r.sentMs < fromMs || r.sentMs >= toMs) continue;
    counts[r.outcome]++;
    if (r.outcome !== OUTCOME.SKIPPED) latencies.push(r.ms);
    if (r.outcome === OUTCOME.ERROR) messages.set(r.message, (messages.get(r.message) ?? 0) + 1);
  }
  latencies.sort((a, b) => a - b);
  const inPhase = samples.filter((s) => s.t >= fromMs && s.t < toMs);
  const rss = inPhase.map((s) => s.rssMiB);
  const decisions = counts[OUTCOME.OK] + counts[OUTCOME.OVER_LIMIT];
  return {
    phase,
    seconds: round(seconds, 1),
    sent: latencies.length,
    ok: counts[OUTCOME.OK],
    overLimit: counts[OUTCOME.OVER_LIMIT],
    errors: counts[OUTCOME.ERROR],
    notSent: counts[OUTCOME.SKIPPED],
    decisionsPerSecond: round(seconds > 0 ? decisions / seconds : Number.NaN, 0),
    p50Ms: round(quantile(latencies, 0.5), 2),
    p99Ms: round(quantile(latencies, 0.99), 2),
    maxMs: round(latencies.at(-1) ?? Number.NaN, 1),
    rssMaxMiB: round(rss.length ? Math.max(...rss) : Number.NaN, 1),
    rssEndMiB: round(rss.at(-1) ?? Number.NaN, 1),
    clientLagMaxMs: round(inPhase.length ? Math.max(...inPhase.map((s) => s.lagMs)) : Number.NaN, 1),
    errorMessages: Object.fromEntries([...messages].sort((a, b) => b[1] - a[1]).slice(0, 3)),
  };
}

const COLUMNS = [
  ["phase", "phase"],
  ["seconds", "s"],
  ["decisionsPerSecond", "decisions/s"],
  ["ok", "OK"],
  ["overLimit", "OVER_LIMIT"],
  ["errors", "errors"],
  ["p50Ms", "p50 ms"],
  ["p99Ms", "p99 ms"],
  ["serverP99Ms", "daemon p99 ms"],
  ["maxMs", "max ms"],
  ["rssMaxMiB", "RSS max MiB"],
  ["rssEndMiB", "RSS end MiB"],
  ["clientLagMaxMs", "client lag max ms"],
];

const LEFT = new Set(["phase", "mode", "target", "measured", "met"]);

/** A Markdown table with padded cells, as the project's formatter (Biome) writes them. */
function table(rows, columns) {
  const cells = [
    columns.map(([, title]) => title),
    ...rows.map((row) => columns.map(([key]) => String(row[key] ?? "—"))),
  ];
  const widths = columns.map((_, i) => Math.max(3, ...cells.map((line) => line[i].length)));
  const pad = (text, i) => (LEFT.has(columns[i][0]) ? text.padEnd(widths[i]) : text.padStart(widths[i]));
  const rule = widths.map((w, i) => (LEFT.has(columns[i][0]) ? "-".repeat(w) : `${"-".repeat(w - 1)}:`));
  const line = (texts) => `| ${texts.join(" | ")} |`;
  return [line(cells[0].map(pad)), line(rule), ...cells.slice(1).map((texts) => line(texts.map(pad)))].join(
    "\n",
  );
}

/** bench/OUTAGE.md: the set-up, one table per mode, its error messages, and the targets. */
export function outageMarkdown({ machine, settings, command, modes }) {
  const lines = [
    "# ratelimitd while Redis freezes",
    "",
    `Written by \`${command}\` (bench/outage.mjs) on ${machine}.`,
    "",
    `Set-up: ${settings}`,
    "",
    "A call counts in the phase it was sent in: those sent before the breaker opened wait for REDIS_TIMEOUT, and",
    "the failure mode answers them then. decisions/s counts OK and OVER_LIMIT answers; errors are gRPC errors.",
    "",
  ];
  for (const mode of modes) {
    lines.push(`## BACKEND_FAILURE_MODE=${mode.mode}`, "", table(mode.phases, COLUMNS), "");
    for (const p of mode.phases.filter((p) => Object.keys(p.errorMessages).length > 0)) {
      const list = Object.entries(p.errorMessages).map(([m, n]) => `\`${m}\` × ${n}`);
      lines.push(`- errors, ${p.phase}: ${list.join(", ")}`);
    }
    lines.push(`- ${mode.recoveryText}`, "");
  }
  lines.push(
    "## Targets (issue 16)",
    "",
    table(
      modes.flatMap((m) => m.targets),
      TARGET_COLUMNS,
    ),
    "",
  );
  return lines.join("\n");
}

const TARGET_COLUMNS = [
  ["mode", "mode"],
  ["target", "target"],
  ["measured", "measured"],
  ["met", "met"],
];
