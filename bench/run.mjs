// `npm run bench`: ratelimitd against its baselines, all on this machine in one run, alternating.
// Servers, the load generator (h2load) and Redis are pinned to CPUs of their own where the machine has them
// (taskset); throughput is normalised by the server's CPU seconds read from /proc. Writes bench/RESULTS.md,
// bench/results.json and bench/results.svg.
// Options: --rounds N (3), --seconds S (5), --quick (1 round of 2 s, for a smoke test);
//   --compare DIR   another build, whose daemons run the memory and Redis scenarios beside this one
//                   (before/after numbers from one run): a checkout with dist/ built, or a dist/ folder itself;
//   --table         only the scenarios of the headline table (the ceiling, memory, Redis and the naive limiter,
//                   1 and 5 descriptors, and the compared build's), written as that table to bench/RESULTS.md;
//   --server-cpu C, --load-cpus LIST, --redis-cpu C   taskset CPU lists; by default, on 4 CPUs or more: servers
//                   on 1, Redis on 2, h2load on 3 and up (at most 4 threads); on fewer: servers on 1, h2load and
//                   Redis sharing 0.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { grpcFrame, jsonBody, protoBody, rateLimitRequest } from "./lib/frames.mjs";
import { h2load } from "./lib/h2load.mjs";
import { cpuSeconds, spawnPinned, stop, waitForPort } from "./lib/proc.mjs";
import { startRedis } from "./lib/redis.mjs";
import { writeReport } from "./lib/report.mjs";
import { writeTableReport } from "./lib/table-report.mjs";

const text = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const argument = (name, fallback) => Number(text(name, fallback));
const quick = process.argv.includes("--quick");
const tableOnly = process.argv.includes("--table");
const root = new URL("..", import.meta.url).pathname;
const compareRoot = compareCheckout(text("compare"));
const ROUNDS = quick ? 1 : argument("rounds", 3);
const SECONDS = quick ? 2 : argument("seconds", 5);
const CPUS = cpuPlan();
const LOAD = {
  clients: Math.max(4, CPUS.loadThreads),
  streams: 16,
  warmupSeconds: 0,
  cpu: CPUS.load,
  threads: CPUS.loadThreads,
};
/** Latency runs keep fewer streams in flight: with 64, h2load's own queueing dominates the tail. */
const LATENCY_LOAD = { ...LOAD, streams: 4 };
const SERVER_CPU = CPUS.server;
/** The roles of the headline table (`--table`), in the order they run. */
const TABLE_ORDER = [
  ...["ceiling", "ceiling5", "naive1", "naive5", "memory1", "compareMemory1", "memory5", "compareMemory5"],
  ...["redis1", "compare1", "redis5", "compare5"],
];
/** Side load of the users scenario: each create hashes a password with scrypt (ln=15, ~0.1 CPU-s). */
const USERS_PER_SECOND = 2;
const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const GRPC_HEADERS = { "content-type": "application/grpc", te: "trailers" };

ensureTools();
const redis = await startRedis(CPUS.redis);
const servers = await startServers(redis.port);
const defined = defineScenarios(servers);
// --table: each of the compared build's scenarios right after this build's same one, so both see the same machine.
const scenarios = tableOnly
  ? TABLE_ORDER.map((role) => defined.find((s) => s?.role === role)).filter(Boolean)
  : defined.filter(Boolean);
console.log(
  `servers on CPU ${CPUS.server}, h2load on ${CPUS.load} (${LOAD.threads} thread(s)), Redis on ${CPUS.redis}` +
    (compareRoot ? `; compared build: ${compareLabel()}` : ""),
);
for (const scenario of scenarios) await preflight(scenario);

const runs = new Map(scenarios.map((s) => [s.name, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const scenario of scenarios) {
    const result = await measure(scenario, { ...LOAD, seconds: SECONDS });
    runs.get(scenario.name).push(result);
    console.log(
      `round ${round}/${ROUNDS}  ${scenario.name.padEnd(42)} ${String(Math.round(result.perCpuSecond)).padStart(7)} req/CPU-s  ` +
        `${String(Math.round(result.rps)).padStart(6)} req/s  p99 ${result.p99Ms.toFixed(2)} ms${result.errors ? `  ${result.errors} ERRORS` : ""}`,
    );
  }
}
const results = scenarios.map((scenario) => ({ ...scenario, ...median(runs.get(scenario.name)) }));
if (tableOnly) {
  for (const server of Object.values(servers)) await stop(server.child);
  await redis.stop();
  const table = writeTableReport({
    results,
    rounds: ROUNDS,
    seconds: SECONDS,
    load: LOAD,
    cpus: CPUS,
    compared: compareRoot ? compareLabel() : undefined,
    commands: scenarios.map(commandOf),
  });
  console.log(`\n${table}\nwritten: bench/RESULTS.md, bench/results.json`);
  process.exit(0);
}
for (const result of results.filter((r) => r.latencyRun)) {
  const peak = await measure(result, { ...LATENCY_LOAD, seconds: SECONDS });
  const rate = Math.max(1, Math.floor((0.7 * peak.rps) / LATENCY_LOAD.clients));
  const paced = await measure(result, { ...LATENCY_LOAD, seconds: SECONDS, rps: rate });
  result.at70 = { rps: paced.rps, p50Ms: paced.p50Ms, p99Ms: paced.p99Ms };
  console.log(
    `70 % load  ${result.name.padEnd(40)} ${Math.round(paced.rps)} req/s  p50 ${paced.p50Ms.toFixed(2)} ms  p99 ${paced.p99Ms.toFixed(2)} ms`,
  );
}

for (const server of Object.values(servers)) await stop(server.child);
await redis.stop();
const micro = JSON.parse(
  execFileSync("taskset", ["-c", String(SERVER_CPU), "node", `${root}bench/micro/engine.mjs`, "--json"], {
    encoding: "utf8",
  }),
);
const table = writeReport({
  results,
  micro,
  rounds: ROUNDS,
  seconds: SECONDS,
  load: LOAD,
  latencyLoad: LATENCY_LOAD,
  cpus: CPUS,
  commands: scenarios.map(commandOf),
});
console.log(`\n${table}\nwritten: bench/RESULTS.md, bench/results.json, bench/results.svg`);

/** h2load and wrk must be present; on a Debian machine we may install h2load ourselves. */
function ensureTools() {
  const has = (tool) => {
    try {
      execFileSync("which", [tool], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (!has("h2load") && process.getuid?.() === 0) {
    console.log("installing h2load (nghttp2-client)…");
    execFileSync("sh", ["-c", "apt-get update -qq && apt-get install -y -qq nghttp2-client"], {
      stdio: "inherit",
    });
  }
  for (const tool of ["h2load", "redis-server", "taskset"]) {
    if (!has(tool))
      throw new Error(`${tool} is needed: apt-get install -y nghttp2-client redis-server util-linux`);
  }
  try {
    execFileSync("test", ["-f", `${root}dist/cmd/ratelimitd.js`]);
  } catch {
    throw new Error("dist/ is missing: run `npm run build` (or `npm run bench` from the root, which builds)");
  }
}

async function startServers(redisPort) {
  let port = 19200;
  const node = (script, args = [], env = {}) => {
    const at = port;
    port += 10;
    return { port: at, child: spawnPinned(SERVER_CPU, "node", [script, String(at), ...args], env) };
  };
  const daemon = (env, checkout = root) => {
    const at = port;
    port += 10;
    const child = spawnPinned(SERVER_CPU, "node", [`${checkout}dist/cmd/ratelimitd.js`], {
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: String(at),
      HOST: "127.0.0.1",
      PORT: String(at + 1),
      DEBUG_HOST: "127.0.0.1",
      DEBUG_PORT: String(at + 2),
      USE_STATSD: "false",
      LOG_LEVEL: "warn",
      RUNTIME_ROOT: `${root}bench/rules`,
      RUNTIME_WATCH_ROOT: "false",
      RUNTIME_SUBDIRECTORY: "",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: `127.0.0.1:${redisPort}`,
      DATABASE_URL: "sqlite::memory:",
      ...env,
    });
    return { port: at, httpPort: at + 1, debugPort: at + 2, child };
  };
  const servers = {
    canned: node(`${root}bench/servers/canned-http2.mjs`),
    naive: node(`${root}bench/servers/naive-limiter.mjs`, [String(redisPort)]),
    memory: daemon({ BACKEND_TYPE: "memory" }),
    redis: daemon({ BACKEND_TYPE: "redis" }),
  };
  if (!tableOnly) Object.assign(servers, otherServers(node, daemon));
  if (compareRoot) {
    servers.compareMemory = daemon({ BACKEND_TYPE: "memory" }, compareRoot);
    servers.compareRedis = daemon({ BACKEND_TYPE: "redis" }, compareRoot);
  }
  for (const server of Object.values(servers)) await waitForPort(server.port);
  return servers;
}

/** The servers of the scenarios beyond the headline table. */
function otherServers(node, daemon) {
  return {
    grpcJs: node(`${root}bench/servers/bare-grpc-js.mjs`),
    redisCached: daemon({ BACKEND_TYPE: "redis", LOCAL_CACHE_SIZE_IN_BYTES: "16777216" }),
    redisBatched: daemon({ BACKEND_TYPE: "redis", REDIS_PIPELINE_WINDOW: "100us", REDIS_POOL_SIZE: "2" }),
    // Sliding windows, token buckets and a stacked rule: bench/rules/extensions/.
    redisAlgorithms: daemon({ BACKEND_TYPE: "redis", RUNTIME_SUBDIRECTORY: "extensions" }),
    // Users created while deciding: a real SQLite file and production-strength password hashes.
    memoryUsers: daemon({
      BACKEND_TYPE: "memory",
      DATABASE_URL: `sqlite:${mkdtempSync(join(tmpdir(), "bench-"))}/users.db`,
    }),
  };
}

function defineScenarios(s) {
  // A scenario whose server this run did not start (`--table`) is left out.
  const grpc = (name, server, descriptors, extra = {}) =>
    server && {
      name,
      server,
      url: `http://127.0.0.1:${server.port}${RLS}`,
      body: grpcFrame(rateLimitRequest(descriptors, extra.key)),
      headers: GRPC_HEADERS,
      ...extra,
    };
  const compared = compareRoot
    ? [
        grpc(`compared build (${compareLabel()}) memory, 1 descriptor`, s.compareMemory, 1, {
          role: "compareMemory1",
        }),
        grpc(`compared build (${compareLabel()}) memory, 5 descriptors`, s.compareMemory, 5, {
          role: "compareMemory5",
        }),
        grpc(`compared build (${compareLabel()}) redis, 1 descriptor`, s.compareRedis, 1, {
          role: "compare1",
          redis: true,
        }),
        grpc(`compared build (${compareLabel()}) redis, 5 descriptors`, s.compareRedis, 5, {
          role: "compare5",
          redis: true,
        }),
      ]
    : [];
  return [
    ...compared,
    grpc("ceiling: canned node:http2 gRPC", s.canned, 1, { role: "ceiling", latencyRun: true }),
    grpc("ceiling: canned node:http2 gRPC, 5 descriptors", s.canned, 5, { role: "ceiling5" }),
    grpc("bare @grpc/grpc-js", s.grpcJs, 1, { role: "grpcJs", latencyRun: true }),
    grpc("naive limiter (grpc-js + ioredis), 1 descriptor", s.naive, 1, { role: "naive1", redis: true }),
    grpc("naive limiter (grpc-js + ioredis), 5 descriptors", s.naive, 5, { role: "naive5", redis: true }),
    grpc("ratelimitd memory, 1 descriptor", s.memory, 1, { role: "memory1", latencyRun: true }),
    grpc("ratelimitd memory, 5 descriptors", s.memory, 5, { role: "memory5" }),
    grpc(`ratelimitd memory, 1 descriptor, creating ${USERS_PER_SECOND} users/s`, s.memoryUsers, 1, {
      role: "memoryUsers",
      latencyRun: true,
      usersPerSecond: USERS_PER_SECOND,
    }),
    grpc("ratelimitd redis, 1 descriptor", s.redis, 1, { role: "redis1", redis: true, latencyRun: true }),
    grpc("ratelimitd redis, 5 descriptors", s.redis, 5, { role: "redis5", redis: true }),
    grpc("ratelimitd redis, sliding window, 1 descriptor", s.redisAlgorithms, 1, {
      role: "sliding1",
      key: "sw",
      redis: true,
    }),
    grpc("ratelimitd redis, sliding window, 5 descriptors", s.redisAlgorithms, 5, {
      role: "sliding5",
      key: "sw",
      redis: true,
    }),
    grpc("ratelimitd redis, token bucket, 1 descriptor", s.redisAlgorithms, 1, {
      role: "bucket1",
      key: "tb",
      redis: true,
    }),
    grpc("ratelimitd redis, token bucket, 5 descriptors", s.redisAlgorithms, 5, {
      role: "bucket5",
      key: "tb",
      redis: true,
    }),
    grpc("ratelimitd redis, stacked burst + sustained, 1 descriptor", s.redisAlgorithms, 1, {
      role: "stacked",
      key: "st",
      redis: true,
    }),
    grpc("ratelimitd redis, over limit (local cache)", s.redisCached, 1, {
      role: "cached",
      key: "over",
      redis: true,
    }),
    grpc("ratelimitd redis, 100 µs pipeline window", s.redisBatched, 1, { role: "batched", redis: true }),
    {
      name: "ratelimitd /json over HTTP/1.1 (memory)",
      role: "json",
      server: s.memory,
      url: `http://127.0.0.1:${s.memory.httpPort}/json`,
      body: jsonBody(rateLimitRequest(1)),
      headers: { "content-type": "application/json" },
      h1: true,
    },
    {
      name: "ratelimitd Connect protocol, HTTP/2 (memory)",
      role: "connect",
      server: s.memory,
      url: `http://127.0.0.1:${s.memory.port}${RLS}`,
      body: protoBody(rateLimitRequest(1)),
      headers: { "content-type": "application/proto" },
    },
  ];
}

/** The compared checkout as `<folder>@<commit>`. */
function compareLabel() {
  const folder = compareRoot.replace(/\/$/, "").split("/").at(-1);
  if (!existsSync(join(compareRoot, ".git"))) return folder;
  try {
    const commit = execFileSync("git", ["-C", compareRoot, "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
    });
    return `${folder}@${commit.trim()}`;
  } catch {
    return folder;
  }
}

/** One short run per scenario before measuring: warms the JIT and checks the answers are successes. */
async function preflight(scenario) {
  await h2load(scenario, { ...LOAD, seconds: 1 });
  const errors = await errorCount(scenario);
  if (errors > 0) throw new Error(`${scenario.name}: the service answered ${errors} errors during warm-up`);
}

/** gRPC errors arrive with HTTP 200, which h2load counts as success: ratelimitd's own error counters tell. */
async function errorCount(scenario) {
  if (scenario.server.debugPort === undefined) return 0;
  const stats = await fetch(`http://127.0.0.1:${scenario.server.debugPort}/stats`).then((r) => r.text());
  const value = (name) =>
    Number(
      new RegExp(`^ratelimit\\.service\\.call\\.should_rate_limit\\.${name}: (\\d+)$`, "m").exec(
        stats,
      )?.[1] ?? 0,
    );
  return value("redis_error") + value("service_error");
}

async function measure(scenario, load) {
  const errorsBefore = await errorCount(scenario);
  const cpuBefore = cpuSeconds(scenario.server.child.pid);
  const redisBefore = redis.cpuSeconds();
  const side = scenario.usersPerSecond
    ? createUsers(scenario.server.httpPort, scenario.usersPerSecond)
    : undefined;
  const result = await h2load(scenario, load);
  const users = await side?.stop();
  if (users && users.failed > 0) throw new Error(`${scenario.name}: ${users.failed} user creates failed`);
  const cpu = cpuSeconds(scenario.server.child.pid) - cpuBefore;
  const redisCpu = redis.cpuSeconds() - redisBefore;
  const errors = (await errorCount(scenario)) - errorsBefore + result.failed;
  return {
    rps: result.rps,
    done: result.done,
    cpu,
    perCpuSecond: result.done / cpu,
    redisCpuPerRequestUs: scenario.redis ? (redisCpu / result.done) * 1e6 : undefined,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    errors,
  };
}

/** Creates users at `perSecond` through the REST API until stopped; counts successes and failures. */
function createUsers(httpPort, perSecond) {
  let created = 0;
  let failed = 0;
  const inFlight = new Set();
  const timer = setInterval(() => {
    createUsers.serial = (createUsers.serial ?? 0) + 1;
    const n = createUsers.serial;
    const request = fetch(`http://127.0.0.1:${httpPort}/users`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: `Bench ${n}`, email: `bench${n}@example.com`, password: `password ${n}` }),
    })
      .then((r) => (r.status === 200 ? created++ : failed++))
      .catch(() => failed++)
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  }, 1000 / perSecond);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return { created, failed };
    },
  };
}

function median(list) {
  const sorted = [...list].sort((a, b) => a.perCpuSecond - b.perCpuSecond);
  return { ...sorted[Math.floor(sorted.length / 2)], all: list.map((r) => Math.round(r.perCpuSecond)) };
}

function commandOf(scenario) {
  const headers = Object.entries(scenario.headers)
    .map(([k, v]) => `-H '${k}: ${v}'`)
    .join(" ");
  return `taskset -c ${LOAD.cpu} h2load -c ${LOAD.clients} -m ${scenario.h1 ? 1 : LOAD.streams} -t ${LOAD.threads} -D ${SECONDS} ${scenario.h1 ? "--h1 " : ""}-d <body> ${headers} ${scenario.url}`;
}

/**
 * The compared build's checkout root: DIR itself when it holds dist/, or, for a dist/ folder given alone, a
 * copy of it under bench/.compare/ (inside this project, so that it finds this project's node_modules).
 */
function compareCheckout(dir) {
  if (dir === undefined) return undefined;
  const given = resolve(dir);
  if (existsSync(join(given, "dist", "cmd", "ratelimitd.js"))) return `${given}/`;
  if (!existsSync(join(given, "cmd", "ratelimitd.js"))) {
    throw new Error(`--compare ${dir}: neither a checkout with dist/ built nor a dist/ folder`);
  }
  const name = basename(given) === "dist" ? basename(resolve(given, "..")) : basename(given);
  const copy = join(root, "bench", ".compare", name);
  rmSync(copy, { recursive: true, force: true });
  cpSync(given, join(copy, "dist"), { recursive: true });
  return `${copy}/`;
}

/** Which CPUs the servers, h2load and Redis get (taskset lists); see the options at the top. */
function cpuPlan() {
  const count = availableParallelism();
  const spare = count >= 4;
  const lastLoad = Math.min(count - 1, 6);
  const load = text("load-cpus", spare ? (lastLoad > 3 ? `3-${lastLoad}` : "3") : "0");
  return {
    server: text("server-cpu", "1"),
    redis: text("redis-cpu", spare ? "2" : "0"),
    load,
    loadThreads: Math.min(4, cpuCount(load)),
  };
}

/** How many CPUs a taskset list names: `3`, `3-6`, `0,2-3`. */
function cpuCount(list) {
  return list
    .split(",")
    .map((part) => part.split("-").map(Number))
    .reduce((sum, [from, to = from]) => sum + (to - from + 1), 0);
}
