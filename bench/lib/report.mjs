// Writes the benchmark report: bench/RESULTS.md (Markdown), bench/results.json and bench/results.svg (chart).
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";

const here = new URL("..", import.meta.url).pathname;
const run = (command, args) => {
  try {
    return execFileSync(command, args, { encoding: "utf8" }).trim().split("\n")[0];
  } catch {
    return "unknown";
  }
};

/** Builds every output from the run's results; returns the ratio table (Markdown) for the console. */
export function writeReport({ results, micro, rounds, seconds, load, latencyLoad, cpus: pinned, commands }) {
  const byRole = Object.fromEntries(results.map((r) => [r.role, r]));
  const ratio = (a, b) => (a && b ? a.perCpuSecond / b.perCpuSecond : Number.NaN);
  const naiveFor = (r) => (r.name.includes("5 descriptors") ? byRole.naive5 : byRole.naive1);
  const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  const rows = results.map((r) => {
    const vsNaive = r.role.startsWith("naive") ? Number.NaN : ratio(r, naiveFor(r));
    return `| ${r.name} | ${Math.round(r.perCpuSecond)} | ${fmt(ratio(r, byRole.ceiling))} | ${fmt(ratio(r, byRole.grpcJs))} | ${fmt(vsNaive)} | ${Math.round(r.rps)} | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ${r.redisCpuPerRequestUs === undefined ? "–" : fmt(r.redisCpuPerRequestUs, 1)} |`;
  });
  const table = [
    "| scenario | req per server CPU-s | × ceiling | × bare grpc-js | × naive | req/s | p50 ms | p99 ms | Redis CPU µs/req |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
  ].join("\n");

  const target = (label, value, goal, ok) =>
    `| ${label} | ${fmt(value)} | ${goal} | ${ok ? "met" : "**not met**"} |`;
  const batched = byRole.batched;
  const redisCpuRatio = batched.redisCpuPerRequestUs / byRole.naive1.redisCpuPerRequestUs;
  const tableOf = (r, label) => [
    target(`${label}: × ceiling`, ratio(r, byRole.ceiling), "≥ 0.8", ratio(r, byRole.ceiling) >= 0.8),
    target(`${label}: × bare grpc-js`, ratio(r, byRole.grpcJs), "≈ 1.2", ratio(r, byRole.grpcJs) >= 1.2),
    target(`${label}: × naive`, ratio(r, byRole.naive1), "≈ 1.9", ratio(r, byRole.naive1) >= 1.9),
  ];
  const targets = [
    "| target | measured | goal | |",
    "|---|---:|---|---|",
    ...tableOf(byRole.redis1, "Redis, 1 descriptor, per-request pipelines (default)"),
    ...tableOf(batched, "Redis, 1 descriptor, REDIS_PIPELINE_WINDOW=100us"),
    target(
      "Redis, 5 descriptors: × ceiling",
      ratio(byRole.redis5, byRole.ceiling),
      "≥ 0.5",
      ratio(byRole.redis5, byRole.ceiling) >= 0.5,
    ),
    target(
      "Redis, 5 descriptors: × naive",
      ratio(byRole.redis5, byRole.naive5),
      "≥ 3",
      ratio(byRole.redis5, byRole.naive5) >= 3,
    ),
    target(
      "local cache answering: × ceiling",
      ratio(byRole.cached, byRole.ceiling),
      "≥ 0.9",
      ratio(byRole.cached, byRole.ceiling) >= 0.9,
    ),
    target(
      "memory backend: × ceiling",
      ratio(byRole.memory1, byRole.ceiling),
      "≥ 0.9",
      ratio(byRole.memory1, byRole.ceiling) >= 0.9,
    ),
    ...results
      .filter((r) => r.at70 && r.role !== "ceiling" && r.role !== "grpcJs")
      .map((r) => target(`p99 at 70 % of peak, ${r.name} (ms)`, r.at70.p99Ms, "≤ 2", r.at70.p99Ms <= 2)),
    target(
      `decisions/s at full load while creating ${byRole.memoryUsers.usersPerSecond} users/s ÷ without (memory, 1 descriptor, same core)`,
      byRole.memoryUsers.rps / byRole.memory1.rps,
      "≥ 0.75",
      byRole.memoryUsers.rps / byRole.memory1.rps >= 0.75,
    ),
    // The extensions against the fixed window of the same descriptor count (docs/algorithms.md).
    ...[
      ["sliding1", "redis1", "sliding window, 1 descriptor"],
      ["sliding5", "redis5", "sliding window, 5 descriptors"],
      ["bucket1", "redis1", "token bucket, 1 descriptor"],
      ["bucket5", "redis5", "token bucket, 5 descriptors"],
    ].flatMap(([role, fixed, label]) => {
      const speed = ratio(byRole[role], byRole[fixed]);
      const redisCpu = byRole[role].redisCpuPerRequestUs / byRole[fixed].redisCpuPerRequestUs;
      return [
        target(`Redis ${label}: decisions per CPU-s × fixed window`, speed, "≥ 0.85", speed >= 0.85),
        target(`Redis ${label}: Redis CPU per decision × fixed window`, redisCpu, "≤ 2", redisCpu <= 2),
      ];
    }),
    target(
      "Redis CPU per decision, batched, vs naive (1 descriptor)",
      redisCpuRatio,
      "≤ 0.25",
      redisCpuRatio <= 0.25,
    ),
  ].join("\n");

  const latency = [
    "| scenario | offered (70 % of peak) req/s | p50 ms | p99 ms |",
    "|---|---:|---:|---:|",
    ...results
      .filter((r) => r.at70)
      .map((r) => `| ${r.name} | ${Math.round(r.at70.rps)} | ${fmt(r.at70.p50Ms)} | ${fmt(r.at70.p99Ms)} |`),
  ].join("\n");
  const microTable = [
    "| engine / codec operation | ns per call |",
    "|---|---:|",
    ...micro.map((m) => `| ${m.name} | ${Math.round(m.nsPerOp)} |`),
  ].join("\n");

  const machine = {
    date: new Date().toISOString(),
    commit: run("git", ["-C", here, "rev-parse", "--short", "HEAD"]),
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    h2load: run("h2load", ["--version"]),
    redis: run("redis-server", ["--version"]),
  };
  writeFileSync(
    `${here}results.json`,
    `${JSON.stringify({ machine, rounds, seconds, load, results: results.map(stripForJson), micro }, null, 2)}\n`,
  );
  writeFileSync(`${here}results.svg`, chart(results));
  writeFileSync(
    `${here}RESULTS.md`,
    `# Benchmark results

Latest \`npm run bench\` (overwritten by each run). ${machine.date}, commit ${machine.commit}.

Machine: ${machine.cpu}, ${machine.memoryGiB} GiB, Linux ${machine.kernel}, Node ${machine.node}, ${machine.h2load},
${machine.redis}.

Method: every server runs at once, pinned to CPU ${pinned.server}; h2load (${load.threads} thread(s)) runs pinned to CPU
${pinned.load}, Redis to CPU ${pinned.redis}. Each scenario is
loaded for ${seconds} s with ${load.clients} connections × ${load.streams} concurrent streams (HTTP/1.1: 1 per
connection), in ${rounds} rounds alternating between scenarios; the table shows each scenario's median round.
Throughput is normalised by the server's CPU seconds from \`/proc/<pid>/stat\` (user + system, all threads), so
scenarios compare fairly even where the single-threaded load generator, not the server, sets the pace; the
ratios are the point, absolute numbers vary between runs on this shared machine. Latency at 70 % of peak: each
server's peak is measured again with ${latencyLoad.clients} connections × ${latencyLoad.streams} streams (with 64
in flight, h2load's own queueing dominates the tail), then 70 % of it is offered with h2load's \`--rps\` pacing.

![throughput and p99 per scenario](results.svg)

## Ratios

${table}

## Targets (issue #4)

${targets}

## Latency at 70 % of each server's peak

${latency}

## Micro-benchmarks (one core, per call)

${microTable}

## Commands

\`\`\`
${commands.join("\n")}
\`\`\`
`,
  );
  return `${table}\n\n${targets}`;
}

function stripForJson({ server, body, headers, ...rest }) {
  return rest;
}

/** Horizontal bars: requests per server CPU-second, with p99 printed at the end of each bar. */
function chart(results) {
  const width = 900;
  const barHeight = 22;
  const labelWidth = 360;
  const top = 40;
  const max = Math.max(...results.map((r) => r.perCpuSecond));
  const height = top + results.length * (barHeight + 8) + 30;
  const bars = results
    .map((r, i) => {
      const y = top + i * (barHeight + 8);
      const w = Math.max(1, ((width - labelWidth - 170) * r.perCpuSecond) / max);
      const color = r.name.startsWith("ratelimitd") ? "#2f6fdf" : "#9a9a9a";
      const label = r.name.replace(/&/g, "&amp;").replace(/</g, "&lt;");
      return (
        `<text x="${labelWidth - 8}" y="${y + 15}" text-anchor="end" font-size="12">${label}</text>` +
        `<rect x="${labelWidth}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${color}"/>` +
        `<text x="${labelWidth + w + 6}" y="${y + 15}" font-size="12">${Math.round(r.perCpuSecond)} req/CPU-s · p99 ${r.p99Ms.toFixed(2)} ms</text>`
      );
    })
    .join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" role="img">
<title>ratelimitd benchmark: requests per server CPU-second and p99 latency per scenario</title>
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="22" font-size="15" font-weight="bold">Requests per server CPU-second (higher is better), and p99 latency at full load</text>
${bars}
</svg>
`;
}
