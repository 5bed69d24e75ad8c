// `node bench/workers.mjs <scaling|balance> [options]`: WORKERS (docs/workers.md) measured.
//
//   scaling  for each backend (memory, redis) and each WORKERS value (1, 2, 4, 8): the peak decisions per
//            second of ShouldRateLimit with one descriptor over gRPC, then the p99 at 70 % of that peak;
//            with each run's CPU seconds per thread of the daemon (the main thread and the workers).
//   balance  WORKERS=N (4) with 4, 16 and 64 long-lived HTTP/2 connections: how many requests each worker
//            served (the kernel spreads connections, not requests).
//
// Options (all optional):
//   --workers 1,2,4,8        WORKERS values (scaling), or the one value (balance; default 4)
//   --backends memory,redis  backends (scaling)
//   --connections 4,16,64    connection counts (balance)
//   --seconds 5              length of each load run
//   --clients 32             h2load connections for scaling (at least 4 per worker spreads well)
//   --streams 16             requests in flight per connection
//   --server-cpus 0-7        taskset CPU list for the daemon (default: every CPU but the load's and Redis's)
//   --load-cpus 8-13         taskset CPU list for h2load; its threads = the CPUs in the list
//   --redis-cpus 14          taskset CPU list for redis-server
//   --baseline DIR           another checkout (built): its daemon runs the WORKERS=1 rows too, in the same run
//   --json FILE              also write the results as JSON
// Needs h2load (nghttp2-client), redis-server and taskset; runs from the portable bundle as
// `sh .portable-bench/run.sh node bench/workers.mjs scaling …` (../shared/tools/portable-bench.sh).
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { grpcFrame, rateLimitRequest } from "./lib/frames.mjs";
import { spawnPinned, stop, waitForPort } from "./lib/proc.mjs";

const mode = process.argv[2];
if (mode !== "scaling" && mode !== "balance") {
  process.stderr.write(readFileSync(new URL(import.meta.url), "utf8").split("\nimport ")[0]);
  process.exit(2);
}
const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const list = (text) =>
  text
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
const cpuCount = availableParallelism();
const SECONDS = Number(option("seconds", "5"));
const STREAMS = Number(option("streams", "16"));
const CLIENTS = Number(option("clients", "32"));
const LOAD_CPUS = option("load-cpus", cpuCount >= 12 ? `${cpuCount - 6}-${cpuCount - 3}` : "0");
const REDIS_CPUS = option("redis-cpus", cpuCount >= 12 ? `${cpuCount - 2}-${cpuCount - 1}` : "0");
const SERVER_CPUS = option("server-cpus", cpuCount >= 12 ? `0-${cpuCount - 7}` : `0-${cpuCount - 1}`);
const baseline = option("baseline", undefined);
const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const root = new URL("..", import.meta.url).pathname;
const CLK_TCK = 100;

/** CPUs in a taskset list ("0-3,8" → 5). */
function cpusIn(listText) {
  return list(listText).reduce((sum, part) => {
    const [a, b] = part.split("-").map(Number);
    return sum + (b === undefined ? 1 : b - a + 1);
  }, 0);
}

/** CPU seconds per thread of `pid` (/proc/<pid>/task/*), keyed by thread id, with each thread's name. */
function threadCpu(pid) {
  const threads = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      threads.set(tid, { name, seconds: (Number(fields[11]) + Number(fields[12])) / CLK_TCK });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

/** The threads that used at least 0.05 CPU-s between two readings, busiest first: `name(tid) 1.23`. */
function busyThreads(before, after, pid) {
  return [...after]
    .map(([tid, t]) => ({
      label: tid === String(pid) ? "main" : `${t.name}(${tid})`,
      seconds: t.seconds - (before.get(tid)?.seconds ?? 0),
    }))
    .filter((t) => t.seconds >= 0.05)
    .sort((a, b) => b.seconds - a.seconds);
}

async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "bench-redis-"));
  const child = spawnPinned(REDIS_CPUS, "redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
  ]);
  await waitForPort(port);
  return {
    port,
    stop: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function freePort() {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a daemon with `workers` threads; resolves once every worker listens. */
async function startDaemon({ workers, backend, redisPort, checkout = root }) {
  const [grpcPort, httpPort, debugPort] = [await freePort(), await freePort(), await freePort()];
  let logs = "";
  const env = {
    WORKERS: String(workers),
    BACKEND_TYPE: backend,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: String(grpcPort),
    HOST: "127.0.0.1",
    PORT: String(httpPort),
    DEBUG_HOST: "127.0.0.1",
    DEBUG_PORT: String(debugPort),
    USE_STATSD: "false",
    LOG_LEVEL: "warn",
    RUNTIME_ROOT: `${root}bench/rules`,
    RUNTIME_WATCH_ROOT: "false",
    RUNTIME_SUBDIRECTORY: "",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: `127.0.0.1:${redisPort ?? 6379}`,
    DATABASE_URL: "sqlite::memory:",
  };
  // A checkout from before WORKERS ignores the variable: it is the one-thread process of that build.
  const child = spawnPinned(SERVER_CPUS, "node", [`${checkout}dist/cmd/ratelimitd.js`], env, (text) => {
    logs += text;
  });
  const deadline = Date.now() + 30_000;
  const ready = () =>
    workers > 1 ? /worker threads serve gRPC/.test(logs) : /Listening for HTTP/.test(logs);
  while (!ready()) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`daemon did not start:\n${logs}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, grpcPort, httpPort, debugPort, logs: () => logs };
}

/** One h2load run of ShouldRateLimit calls; `rps` paces each connection. */
async function load({ port, clients, seconds, rps, streams = STREAMS }) {
  const dir = mkdtempSync(join(tmpdir(), "h2load-"));
  const bodyFile = join(dir, "body");
  const logFile = join(dir, "log");
  writeFileSync(bodyFile, grpcFrame(rateLimitRequest(1)));
  const threads = Math.min(cpusIn(LOAD_CPUS), clients);
  const args = [
    "-c",
    String(clients),
    "-m",
    String(streams),
    "-t",
    String(threads),
    "-D",
    String(seconds),
    "--warm-up-time",
    "1",
    "-d",
    bodyFile,
    "--log-file",
    logFile,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    ...(rps ? ["--rps", String(rps)] : []),
    `http://127.0.0.1:${port}${RLS}`,
  ];
  const output = await new Promise((resolve, reject) =>
    execFile(
      "taskset",
      ["-c", LOAD_CPUS, "h2load", ...args],
      { maxBuffer: 1 << 26 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`h2load failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    ),
  );
  const latencies = readFileSync(logFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split("\t"))
    .filter((f) => f.length >= 3 && f[1] === "200")
    .map((f) => Number(f[2]) / 1000)
    .sort((a, b) => a - b);
  rmSync(dir, { recursive: true, force: true });
  const done = Number(/requests: \d+ total, \d+ started, (\d+) done/.exec(output)?.[1] ?? 0);
  const succeeded = Number(/(\d+) succeeded/.exec(output)?.[1] ?? 0);
  const rps_ = Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(output)?.[1] ?? 0);
  const p99Ms = latencies[Math.min(latencies.length - 1, Math.floor(0.99 * latencies.length))] ?? Number.NaN;
  return { done, failed: done - succeeded, rps: rps_, p99Ms };
}

async function workerRequests(debugPort) {
  const response = await fetch(`http://127.0.0.1:${debugPort}/workers`);
  if (!response.ok) return undefined;
  return (await response.json()).workers.map((w) => w.requests);
}

async function scaling() {
  const workersList = list(option("workers", "1,2,4,8")).map(Number);
  const backends = list(option("backends", "memory,redis"));
  const rows = [];
  for (const backend of backends) {
    const redis = backend === "redis" ? await startRedis() : undefined;
    const variants = [
      ...(baseline ? [{ label: "baseline", checkout: `${baseline.replace(/\/?$/, "/")}`, workers: 1 }] : []),
      ...workersList.map((workers) => ({ label: "this build", checkout: root, workers })),
    ];
    for (const variant of variants) {
      const daemon = await startDaemon({
        workers: variant.workers,
        backend,
        redisPort: redis?.port,
        checkout: variant.checkout,
      });
      const pid = daemon.child.pid;
      const clients = Math.max(CLIENTS, variant.workers * 4);
      await load({ port: daemon.grpcPort, clients, seconds: 1 });
      const before = threadCpu(pid);
      const peak = await load({ port: daemon.grpcPort, clients, seconds: SECONDS });
      const afterPeak = threadCpu(pid);
      const threads = busyThreads(before, afterPeak, pid);
      const cpuUsed = [...afterPeak].reduce(
        (sum, [tid, t]) => sum + t.seconds - (before.get(tid)?.seconds ?? 0),
        0,
      );
      const paced = await load({
        port: daemon.grpcPort,
        clients,
        seconds: SECONDS,
        rps: Math.max(1, Math.floor((0.7 * peak.rps) / clients)),
      });
      await stop(daemon.child);
      const row = {
        backend,
        build: variant.label,
        workers: variant.workers,
        peakRps: Math.round(peak.rps),
        perCpuSecond: Math.round(peak.done / cpuUsed),
        failed: peak.failed + paced.failed,
        at70Rps: Math.round(paced.rps),
        p99At70Ms: Number(paced.p99Ms.toFixed(2)),
        threads: threads.map((t) => `${t.label} ${t.seconds.toFixed(2)}`),
      };
      rows.push(row);
      console.log(
        `${backend.padEnd(6)} ${variant.label.padEnd(10)} WORKERS=${String(variant.workers).padEnd(2)} ${String(row.peakRps).padStart(7)} decisions/s  ${String(row.perCpuSecond).padStart(7)} per CPU-s  p99 at 70 % ${row.p99At70Ms} ms${row.failed ? `  ${row.failed} FAILED` : ""}\n    CPU-s per thread: ${row.threads.join(", ")}`,
      );
    }
    await redis?.stop();
  }
  console.log(
    "\n| backend | build | WORKERS | decisions/s | × WORKERS=1 | per daemon CPU-s | p99 at 70 % (ms) | × WORKERS=1 |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows) {
    const one = rows.find((r) => r.backend === row.backend && r.build === "this build" && r.workers === 1);
    const ratio = (a, b) => (b ? (a / b).toFixed(2) : "–");
    console.log(
      `| ${row.backend} | ${row.build} | ${row.workers} | ${row.peakRps} | ${ratio(row.peakRps, one?.peakRps)} | ${row.perCpuSecond} | ${row.p99At70Ms} | ${ratio(row.p99At70Ms, one?.p99At70Ms)} |`,
    );
  }
  return rows;
}

async function balance() {
  const workers = Number(option("workers", "4"));
  const connections = list(option("connections", "4,16,64")).map(Number);
  const rows = [];
  for (const count of connections) {
    const daemon = await startDaemon({ workers, backend: "memory" });
    const before = await workerRequests(daemon.debugPort);
    // Long-lived: each h2load connection stays open for the whole run, as Envoy's do.
    const run = await load({ port: daemon.grpcPort, clients: count, seconds: SECONDS, streams: 4 });
    // Stats reach the main thread within 200 ms.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await workerRequests(daemon.debugPort);
    await stop(daemon.child);
    const served = after.map((n, i) => n - (before?.[i] ?? 0));
    const total = served.reduce((a, b) => a + b, 0);
    const shares = served.map((n) => (total ? (100 * n) / total : 0));
    const row = {
      workers,
      connections: count,
      requests: total,
      perWorker: served,
      sharesPercent: shares.map((s) => Number(s.toFixed(1))),
      maxOverMean: Number((Math.max(...served) / (total / workers)).toFixed(2)),
      failed: run.failed,
    };
    rows.push(row);
    console.log(
      `WORKERS=${workers} ${String(count).padStart(3)} connections: requests per worker ${served.join(" / ")} (shares ${row.sharesPercent.join(" / ")} %, busiest ÷ mean ${row.maxOverMean})`,
    );
  }
  console.log(`\n| connections | requests per worker (WORKERS=${workers}) | busiest ÷ mean |`);
  console.log("|---|---|---|");
  for (const row of rows)
    console.log(`| ${row.connections} | ${row.perWorker.join(" / ")} | ${row.maxOverMean} |`);
  return rows;
}

console.log(
  `${mode}: ${cpus()[0]?.model ?? "?"} × ${cpuCount}, node ${process.version}; daemon on CPUs ${SERVER_CPUS}, h2load on ${LOAD_CPUS}, redis on ${REDIS_CPUS}; ${SECONDS} s runs`,
);
const results = mode === "scaling" ? await scaling() : await balance();
const jsonFile = option("json", undefined);
if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ mode, cpus: cpuCount, results }, null, 2)}\n`);
