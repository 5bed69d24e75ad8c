// `npm run bench:outage`: ratelimitd while its Redis freezes, for each BACKEND_FAILURE_MODE (docs/settings.md,
// the "Backend outages (ratelimitd)" table). Per mode: a private redis-server and this process's load on CPU 0,
// the built daemon (dist/) on CPU 1 with BACKEND_TYPE=redis, REDIS_TIMEOUT=1s and bench/rules/outage, and an
// open-loop gRPC load (half `plain`, half `tight` descriptors) recorded call by call. Phases: before (Redis
// healthy), during (redis-server stopped with SIGSTOP), after (SIGCONT). "During" is split where the circuit
// breaker opened, "after" where decisions use Redis again (the breaker closed: its `counter store recovered`
// line, or the `ratelimit.backend.breaker_open` gauge of /stats back at 0). Writes bench/OUTAGE.md and
// bench/outage.json.
//
//   node bench/outage.mjs [--modes healthy,error,local,allow] [--env K=V ...]
//   (`healthy` is the control run: the same daemon and load, Redis never frozen, for the RSS comparison)
//   env: OUTAGE_SECONDS (60), OUTAGE_BEFORE_SECONDS (15), OUTAGE_AFTER_SECONDS (15), OUTAGE_RPS (1000),
//        OUTAGE_WARMUP_SECONDS (5), OUTAGE_DUMP=<prefix> (also writes every call and sample to <prefix>.<mode>.json)
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  encodeRequest,
  extraEnv,
  grpcFrame,
  option,
  RLS_PATH,
  rssMiB,
  startDaemon,
} from "./hostile/hostile-daemon.mjs";
import { OUTCOME, startLoad } from "./lib/grpc-load.mjs";
import { outageMarkdown, phaseStats } from "./lib/outage-report.mjs";
import { startRedis } from "./lib/redis.mjs";

const root = new URL("..", import.meta.url).pathname;
const seconds = (name, fallback) => Number(process.env[name] ?? fallback);
const OUTAGE = seconds("OUTAGE_SECONDS", 60);
const BEFORE = seconds("OUTAGE_BEFORE_SECONDS", 15);
const AFTER = seconds("OUTAGE_AFTER_SECONDS", 15);
const WARMUP = seconds("OUTAGE_WARMUP_SECONDS", 5);
const RPS = seconds("OUTAGE_RPS", 1000);
/** After SIGCONT the run waits this much longer for the breaker to close (the longest cooldown is 30 s). */
const RECOVERY_WAIT_SECONDS = 45;
/** `healthy` is the control: the same daemon (mode error) and load, its Redis never frozen. */
const MODES = option("modes", process.env.OUTAGE_MODES ?? "healthy,error,local,allow").split(",");
const CONTROL = "healthy";
const EXTRA_ENV = extraEnv();
const LOAD_CPU = 0;
const DAEMON_CPU = 1;
const BODIES = [[["plain", "a"]], [["tight", "b"]]].map((d) => grpcFrame(encodeRequest("outage", [d])));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * The daemon's own view of latency: its `ratelimit_server.ShouldRateLimit.response_time` timer as a Prometheus
 * histogram with sub-millisecond buckets (PROMETHEUS_MAPPER_YAML), scraped from /metrics with every sample. It
 * leaves out the load generator's own stalls, which the client-side quantiles include.
 */
const SERVER_BUCKETS_S = [0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 2.5];
const MAPPER = join(mkdtempSync(join(tmpdir(), "ratelimitd-outage-")), "mapper.yaml");
writeFileSync(
  MAPPER,
  `mappings:
  - match: "ratelimit_server.*.response_time"
    name: "response_time_seconds"
    timer_type: histogram
    scale: 0.001
    histogram_options:
      buckets: [${SERVER_BUCKETS_S.join(", ")}]
    labels:
      grpc_method: "$1"
`,
);
const now = () => performance.now();

// The load generator keeps off the daemon's core, as bench/run.mjs keeps h2load off it.
execFileSync("taskset", ["-a", "-p", "-c", String(LOAD_CPU), String(process.pid)], { stdio: "ignore" });

const results = [];
for (const mode of MODES) results.push(await runMode(mode));
const commit = execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
const machine = `${cpus()[0].model}, ${cpus().length} cores, Node ${process.version}, commit ${commit}, ${new Date().toISOString().slice(0, 16)}Z`;
const settings =
  `${RPS} calls/s open loop over 4 HTTP/2 connections (one descriptor each, half \`plain\` never over its ` +
  `limit, half \`tight\` at 100/s); REDIS_TIMEOUT=1s; phases ${BEFORE} s before, ${OUTAGE} s frozen ` +
  `(SIGSTOP), at least ${AFTER} s after SIGCONT (longer until the breaker closed, up to ` +
  `${RECOVERY_WAIT_SECONDS} s). Latency is the client's, per call, by send time; RSS is the daemon's VmRSS ` +
  `every 100 ms; client lag is how late the load generator's 100 ms timer fired (its own stalls, in the tail)${Object.keys(EXTRA_ENV).length ? `; extra env ${JSON.stringify(EXTRA_ENV)}` : ""}.`;
const command = `node bench/outage.mjs${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}`;
writeFileSync(
  `${root}bench/outage.json`,
  `${JSON.stringify({ machine, settings, modes: results }, null, 2)}\n`,
);
writeFileSync(`${root}bench/OUTAGE.md`, outageMarkdown({ machine, settings, command, modes: results }));
console.log("written: bench/OUTAGE.md, bench/outage.json");
process.exit(0);

async function runMode(mode) {
  console.log(`mode ${mode}: starting`);
  const redis = await startRedis(LOAD_CPU);
  // A run that throws still takes its redis-server with it (a stopped one too: SIGKILL ends it as it is).
  const killRedis = () => process.kill(redis.pid, "SIGKILL");
  process.once("exit", killRedis);
  const daemon = await startDaemon(
    root,
    {
      BACKEND_TYPE: "redis",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: `127.0.0.1:${redis.port}`,
      REDIS_TIMEOUT: "1s",
      RUNTIME_SUBDIRECTORY: "outage",
      BACKEND_FAILURE_MODE: mode === CONTROL ? "error" : mode,
      PROMETHEUS_MAPPER_YAML: MAPPER,
      ...EXTRA_ENV,
    },
    DAEMON_CPU,
  );
  let stopping = false;
  void daemon.exited.then(({ code, signal }) => {
    if (stopping) return;
    console.error(`mode ${mode}: the daemon exited (${code ?? signal}):\n${daemon.logs()}`);
    process.exit(1);
  });
  const monitor = startMonitor(daemon);
  const load = startLoad({ port: daemon.grpcPort, path: RLS_PATH, bodies: BODIES, rps: RPS });
  await sleep(WARMUP * 1000);
  const beforeAt = now();
  await sleep(BEFORE * 1000);
  const stopAt = now();
  if (mode !== CONTROL) process.kill(redis.pid, "SIGSTOP");
  console.log(`mode ${mode}: ${mode === CONTROL ? "control: Redis left running" : "redis-server stopped"}`);
  await sleep(OUTAGE * 1000);
  const contAt = now();
  if (mode !== CONTROL) process.kill(redis.pid, "SIGCONT");
  if (mode !== CONTROL) console.log(`mode ${mode}: redis-server continued`);
  for (;;) {
    const closedAt = monitor.closedSince();
    if (now() > contAt + (AFTER + RECOVERY_WAIT_SECONDS) * 1000) break;
    if (closedAt !== undefined && now() >= Math.max(contAt + AFTER * 1000, closedAt + 5000)) break;
    // A build without the breaker has no gauge to wait for, and the control run nothing to recover from.
    if ((mode === CONTROL || monitor.gauge.length === 0) && now() >= contAt + AFTER * 1000) break;
    await sleep(100);
  }
  const endAt = now();
  const records = await load.stop();
  if (process.env.OUTAGE_DUMP)
    writeFileSync(
      `${process.env.OUTAGE_DUMP}.${mode}.json`,
      JSON.stringify({ beforeAt, stopAt, contAt, records, samples: monitor.samples }),
    );
  monitor.stop();
  stopping = true;
  daemon.child.kill("SIGKILL");
  process.off("exit", killRedis);
  await redis.stop();
  const control = results.find((r) => r.mode === CONTROL);
  const result = analyse(mode, records, monitor, { beforeAt, stopAt, contAt, endAt }, control);
  result.loadAverage = loadavg().map((l) => Number(l.toFixed(2)));
  result.recoveryText += `; machine load average at the end ${result.loadAverage.join(", ")}`;
  for (const p of result.phases)
    console.log(
      `  ${p.phase.padEnd(34)} ${String(p.decisionsPerSecond).padStart(6)} decisions/s  p50 ${p.p50Ms} ms  ` +
        `p99 ${p.p99Ms} ms  errors ${p.errors}  RSS max ${p.rssMaxMiB} MiB`,
    );
  console.log(`  ${result.recoveryText}`);
  return result;
}

/**
 * Every 100 ms: the daemon's RSS, this process's event-loop lag, and the daemon's `ratelimit.backend.breaker_open` gauge from /stats (absent before
 * issue 16's breaker exists); every warn line about the counter store as it arrives.
 */
function startMonitor(daemon) {
  const samples = [];
  const gauge = [];
  const histograms = [];
  const lines = [];
  let polling = false;
  let lastTick = now();
  const timer = setInterval(async () => {
    // The client's own event-loop lag: how much of a latency tail is this process, not the daemon.
    const t = now();
    if (daemon.child.exitCode !== null || daemon.child.signalCode !== null) return;
    samples.push({ t, rssMiB: rssMiB(daemon.pid), lagMs: Math.max(0, t - lastTick - 100) });
    lastTick = t;
    if (polling) return;
    polling = true;
    try {
      const text = await fetch(`http://127.0.0.1:${daemon.debugPort}/stats`).then((r) => r.text());
      const value = /^ratelimit\.backend\.breaker_open: (\d+)$/m.exec(text)?.[1];
      if (value !== undefined) gauge.push({ t: now(), open: Number(value) });
      const metrics = await fetch(`http://127.0.0.1:${daemon.debugPort}/metrics`).then((r) => r.text());
      histograms.push({ t: now(), buckets: shouldRateLimitBuckets(metrics) });
    } catch {
      // A daemon too busy to answer /stats within the poll is itself a measurement; the next poll tries again.
    } finally {
      polling = false;
    }
  }, 100);
  let partial = "";
  daemon.child.stderr.on("data", (chunk) => {
    const text = partial + chunk;
    const all = text.split("\n");
    partial = all.pop();
    for (const line of all) if (/counter store/.test(line)) lines.push({ t: now(), line });
  });
  return {
    samples,
    gauge,
    histograms,
    lines,
    /** When the gauge last went from 1 to 0 (or undefined while it is 1 or absent). */
    closedSince() {
      const last = gauge.at(-1);
      if (last === undefined || last.open !== 0) return undefined;
      const lastOpen = gauge.findLast((g) => g.open === 1);
      return lastOpen === undefined ? last.t : gauge[gauge.indexOf(lastOpen) + 1].t;
    },
    stop: () => clearInterval(timer),
  };
}

function analyse(mode, records, monitor, { beforeAt, stopAt, contAt, endAt }, control) {
  const { samples, gauge, lines } = monitor;
  const firstLine = (pattern, from) => lines.find((l) => l.t >= from && pattern.test(l.line));
  const openAt =
    firstLine(/counter store unavailable/, stopAt)?.t ?? gauge.find((g) => g.t >= stopAt && g.open === 1)?.t;
  const closeAt =
    firstLine(/counter store recovered/, contAt)?.t ?? gauge.find((g) => g.t >= contAt && g.open === 0)?.t;
  // Without a breaker (older builds), recovery is the first call sent after SIGCONT that got a decision.
  const firstDecision = records.find(
    (r) => r.sentMs >= contAt && (r.outcome === OUTCOME.OK || r.outcome === OUTCOME.OVER_LIMIT),
  )?.sentMs;
  const recoveredAt = openAt !== undefined ? closeAt : firstDecision;
  const split = openAt ?? stopAt + 2000;
  // The daemon's histogram counts a call when it is answered: the calls that waited for REDIS_TIMEOUT when the
  // breaker opened are answered up to 1 s into the open phase, so its daemon-side window starts after them.
  const phase = (name, from, to, serverFrom = from) => ({
    ...phaseStats(name, records, samples, from, to),
    serverP99Ms: serverP99(monitor.histograms, serverFrom, to),
  });
  const phases = [
    phase("before", beforeAt, stopAt),
    phase(openAt ? "during, until the breaker opened" : "during, first 2 s", stopAt, split),
    phase(openAt ? "during, breaker open" : "during, rest", split, contAt, split + 1500),
    phase("during (all)", stopAt, contAt),
    ...(recoveredAt !== undefined && recoveredAt > contAt + 200
      ? [phase("after, until recovered", contAt, recoveredAt), phase("after, recovered", recoveredAt, endAt)]
      : []),
    phase("after (all)", contAt, endAt),
  ];
  const cooldownS = cooldownAt(lines, contAt);
  const recoveryS = recoveredAt === undefined ? undefined : Math.max(0, (recoveredAt - contAt) / 1000);
  const recoveryText =
    recoveryS === undefined
      ? `not recovered within ${((endAt - contAt) / 1000).toFixed(1)} s of SIGCONT`
      : `recovery: ${recoveryS.toFixed(2)} s after SIGCONT` +
        (openAt !== undefined
          ? ` (breaker closed; cooldown then ${cooldownS} s); breaker opened ${((openAt - stopAt) / 1000).toFixed(2)} s after SIGSTOP`
          : " (first decision; no breaker seen)");
  return {
    mode,
    breakerOpenedAfterS: openAt === undefined ? null : Number(((openAt - stopAt) / 1000).toFixed(3)),
    recoveryS: recoveryS === undefined ? null : Number(recoveryS.toFixed(3)),
    cooldownAtContS: cooldownS,
    recoveryText,
    phases,
    targets: mode === CONTROL ? [] : targets(mode, phases, openAt, recoveryS, cooldownS, control),
    breakerLog: lines.map((l) => ({ atS: Number(((l.t - stopAt) / 1000).toFixed(3)), line: l.line })),
  };
}

/** The cooldown running at SIGCONT: the last `next probe in Y s` before it, else BACKEND_BREAKER_COOLDOWN. */
function cooldownAt(lines, contAt) {
  const last = lines.findLast((l) => l.t < contAt && /next probe in ([\d.]+) s/.test(l.line));
  if (last) return Number(/next probe in ([\d.]+) s/.exec(last.line)[1]);
  const setting = /^([\d.]+)(ms|s|m)$/.exec(EXTRA_ENV.BACKEND_BREAKER_COOLDOWN ?? "1s");
  return setting ? Number(setting[1]) * { ms: 0.001, s: 1, m: 60 }[setting[2]] : null;
}

function targets(mode, phases, openAt, recoveryS, cooldownS, control) {
  const [before, , open, during] = phases;
  const growth = (mib) => {
    const percent = (mib / before.rssEndMiB - 1) * 100;
    return {
      percent,
      text: `${mib} MiB vs ${before.rssEndMiB} MiB (${percent >= 0 ? "+" : ""}${percent.toFixed(1)} %)`,
    };
  };
  const [peak, end] = [growth(during.rssMaxMiB), growth(during.rssEndMiB)];
  const yes = (ok) => (ok ? "yes" : "**no**");
  return [
    {
      mode,
      target: "p99 with the breaker open ≤ 2 ms",
      measured:
        openAt === undefined
          ? "breaker never opened"
          : `client ${open.p99Ms} ms, daemon ${open.serverP99Ms} ms (p50 ${open.p50Ms} ms; Redis healthy, before: client ${before.p99Ms} ms, daemon ${before.serverP99Ms} ms)`,
      met:
        openAt === undefined
          ? "**no**"
          : yes(open.p99Ms <= 2) + (open.serverP99Ms === "≤ 2" ? " (daemon: yes)" : ""),
    },
    {
      mode,
      target: "RSS during the outage within 10 % of before: peak",
      measured: peak.text,
      met: yes(peak.percent <= 10),
    },
    { mode, target: "… at the end of the outage", measured: end.text, met: yes(end.percent <= 10) },
    ...(control === undefined ? [] : [controlRow(mode, during, control)]),
    {
      mode,
      target: "recovery within one cooldown",
      measured:
        recoveryS === undefined
          ? "not recovered"
          : `${recoveryS.toFixed(2)} s after SIGCONT (cooldown ${cooldownS} s)`,
      met: openAt === undefined || recoveryS === undefined ? "**no**" : yes(recoveryS <= cooldownS),
    },
  ];
}

/**
 * RSS at the end of the outage beside the control run's at the same moment (Redis healthy, same load): V8
 * grows its heap under steady load whether or not Redis fails, which "before" alone does not show.
 */
function controlRow(mode, during, control) {
  const same = control.phases.find((p) => p.phase === "during (all)");
  const percent = (during.rssEndMiB / same.rssEndMiB - 1) * 100;
  return {
    mode,
    target: "… at the end of the outage, beside the control run (Redis never frozen) at the same moment",
    measured: `${during.rssEndMiB} MiB vs ${same.rssEndMiB} MiB (${percent >= 0 ? "+" : ""}${percent.toFixed(1)} %)`,
    met: percent <= 10 ? "yes" : "**no**",
  };
}

/** The cumulative bucket counts of ShouldRateLimit's response-time histogram in a /metrics text. */
function shouldRateLimitBuckets(text) {
  const counts = new Map();
  for (const m of text.matchAll(
    /^response_time_seconds_bucket\{grpc_method="ShouldRateLimit",le="([^"]+)"\} (\d+)$/gm,
  ))
    counts.set(m[1], Number(m[2]));
  return counts;
}

/**
 * The daemon-side p99 of the calls it answered in [fromMs, toMs), as the upper bound of the histogram bucket
 * it falls in ("≤ 2" ms), from the scrapes nearest the two ends.
 */
function serverP99(histograms, fromMs, toMs) {
  const first = histograms.findLast((h) => h.t <= fromMs) ?? histograms.find((h) => h.t >= fromMs);
  const last = histograms.findLast((h) => h.t <= toMs);
  if (first === undefined || last === undefined || last.t <= first.t) return null;
  const total = (last.buckets.get("+Inf") ?? 0) - (first.buckets.get("+Inf") ?? 0);
  if (total <= 0) return null;
  for (const bound of SERVER_BUCKETS_S) {
    const le = String(bound);
    const within = (last.buckets.get(le) ?? 0) - (first.buckets.get(le) ?? 0);
    if (within >= 0.99 * total) return `≤ ${bound * 1000}`;
  }
  return `> ${SERVER_BUCKETS_S.at(-1) * 1000}`;
}
