// The headline table of `npm run bench -- --table`: decisions per server CPU-second for the ceiling, memory,
// Redis and the naive limiter, 1 and 5 descriptors, ratios to the ceiling, and the compared build beside this
// one. Writes bench/RESULTS.md and bench/results.json.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";

const here = new URL("..", import.meta.url).pathname;
const firstLine = (command, args) => {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .trim()
      .split("\n")[0];
  } catch {
    return "unknown";
  }
};

/** Builds the table from the run's results; returns it (Markdown) for the console. */
export function writeTableReport({ results, rounds, seconds, load, cpus: pinned, compared, commands }) {
  const byRole = Object.fromEntries(results.map((r) => [r.role, r]));
  const perCpu = (role) => byRole[role]?.perCpuSecond;
  const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  const count = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "–");
  const cell = (role, ceiling) => {
    const value = perCpu(role);
    return ceiling === undefined ? count(value) : `${count(value)} (${fmt(value / perCpu(ceiling))})`;
  };
  const row = (label, one, five, withRatio = true) =>
    `| ${label} | ${cell(one, withRatio ? "ceiling" : undefined)} | ${cell(five, withRatio ? "ceiling5" : undefined)} |`;
  const rows = [
    row("canned `node:http2` gRPC (the ceiling)", "ceiling", "ceiling5", false),
    row("ratelimitd, memory", "memory1", "memory5"),
    row("ratelimitd, Redis", "redis1", "redis5"),
    ...(compared
      ? [
          row(`compared build (${compared}), memory`, "compareMemory1", "compareMemory5"),
          row(`compared build (${compared}), Redis`, "compare1", "compare5"),
        ]
      : []),
    row("naive grpc-js + ioredis", "naive1", "naive5", false),
  ];
  const table = ["| | 1 descriptor | 5 descriptors |", "|---|---:|---:|", ...rows].join("\n");

  const ratio = (a, b) => perCpu(a) / perCpu(b);
  const redisCpu = (role) => byRole[role]?.redisCpuPerRequestUs;
  const ratios = [
    "| ratio | 1 descriptor | 5 descriptors |",
    "|---|---:|---:|",
    `| Redis × the ceiling | ${fmt(ratio("redis1", "ceiling"))} | ${fmt(ratio("redis5", "ceiling5"))} |`,
    `| Redis × the naive limiter | ${fmt(ratio("redis1", "naive1"))} | ${fmt(ratio("redis5", "naive5"))} |`,
    `| Redis × memory | ${fmt(ratio("redis1", "memory1"))} | ${fmt(ratio("redis5", "memory5"))} |`,
    ...(compared
      ? [
          `| Redis, this build × the compared build | ${fmt(ratio("redis1", "compare1"))} | ${fmt(ratio("redis5", "compare5"))} |`,
          `| memory, this build × the compared build | ${fmt(ratio("memory1", "compareMemory1"))} | ${fmt(ratio("memory5", "compareMemory5"))} |`,
        ]
      : []),
    `| Redis CPU µs per decision, ratelimitd | ${fmt(redisCpu("redis1"), 1)} | ${fmt(redisCpu("redis5"), 1)} |`,
    ...(compared
      ? [
          `| Redis CPU µs per decision, compared build | ${fmt(redisCpu("compare1"), 1)} | ${fmt(redisCpu("compare5"), 1)} |`,
        ]
      : []),
    `| Redis CPU µs per decision, naive limiter | ${fmt(redisCpu("naive1"), 1)} | ${fmt(redisCpu("naive5"), 1)} |`,
  ].join("\n");
  const rounds_ = results.map(
    (r) => `| ${r.name} | ${r.all.join(", ")} | ${Math.round(r.rps)} | ${r.errors} |`,
  );

  const machine = {
    date: new Date().toISOString(),
    commit: firstLine("git", ["-C", here, "rev-parse", "--short", "HEAD"]),
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    h2load: firstLine("h2load", ["--version"]),
    redis: firstLine("redis-server", ["--version"]),
  };
  writeFileSync(
    `${here}results.json`,
    `${JSON.stringify({ machine, rounds, seconds, load, cpus: pinned, compared, results: results.map(strip) }, null, 2)}\n`,
  );
  const sharing =
    pinned.redis === pinned.load
      ? "Redis shares the load generator's CPU (this machine has too few to give it its own)"
      : "Redis on a CPU of its own";
  writeFileSync(
    `${here}RESULTS.md`,
    `# Benchmark results

Latest \`npm run bench -- --table\` (overwritten by each run; a full \`npm run bench\` writes the longer
report). ${machine.date}, commit ${machine.commit}.

Machine: ${machine.cpu}, ${machine.memoryGiB} GiB, Linux ${machine.kernel}, Node ${machine.node}, ${machine.h2load},
${machine.redis}.

Method: every server runs at once, pinned to CPU ${pinned.server}; h2load (${load.threads} thread(s)) runs on CPU ${pinned.load};
${sharing} (CPU ${pinned.redis}). Each scenario is loaded for ${seconds} s with ${load.clients} connections × ${load.streams}
concurrent streams, in ${rounds} round(s) alternating between scenarios; the table shows each scenario's median
round, as decisions per server CPU-second (user + system from \`/proc/<pid>/stat\`), and in brackets the ratio
to the ceiling with the same request.

## Decisions per server CPU-second

${table}

${ratios}

## Every round

| scenario | decisions per server CPU-second, each round | req/s (median round) | errors |
|---|---|---:|---:|
${rounds_.join("\n")}

## Commands

\`\`\`
${commands.join("\n")}
\`\`\`
`,
  );
  return `${table}\n\n${ratios}`;
}

function strip({ server, body, headers, ...rest }) {
  return rest;
}
