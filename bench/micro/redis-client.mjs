// The Redis store's client side alone, per request: batches of `--batch` requests of `--descriptors`
// fixed-window increments each, all asked in one event-loop turn (as a busy daemon does), one batch after
// another, against a private redis-server; measures the daemon-side CPU per request (process.cpuUsage) and
// Redis's own. No HTTP/2, no engine: only encoding, the socket and the replies, which is what the RESP client
// changes. A fixed batch size keeps builds comparable: a closed loop would let each build's speed change its
// own batch sizes. Needs a built dist/ and redis-server.
// With --spread, the requests of a batch are asked one per event-loop turn instead (each then leaves in a
// write of its own, as it would without the RESP client's batching by turn), still all in flight together.
// Usage: node micro/redis-client.mjs [--descriptors 5] [--batch 16] [--seconds 3] [--rounds 3] [--spread]
//        [--compare DIST]   another build's dist/ folder, run alternately with this one (before/after)
// The store runs pinned to CPU 1, Redis to CPU 0 (as in run.mjs); --json for machine output.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { startRedis } from "../lib/redis.mjs";

const argument = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const DESCRIPTORS = Number(argument("descriptors", 5));
const BATCH = Number(argument("batch", 16));
const SPREAD = process.argv.includes("--spread");
const SECONDS = Number(argument("seconds", 3));
const ROUNDS = Number(argument("rounds", 3));
const here = new URL("../../dist", import.meta.url).pathname;

if (argument("child") !== undefined) await child(resolve(argument("child")), Number(argument("port")));
else await parent();

/** Alternates the builds for ROUNDS rounds against one Redis; prints the median round of each. */
async function parent() {
  const compare = argument("compare");
  const builds = [{ name: "this build", dist: here }];
  if (compare !== undefined) builds.unshift({ name: `compared (${compare})`, dist: resolve(compare) });
  const redis = await startRedis(0);
  const runs = new Map(builds.map((b) => [b.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of builds) {
      const redisBefore = redis.cpuSeconds();
      const result = await runChild(build.dist, redis.port);
      result.redisUsPerRequest = ((redis.cpuSeconds() - redisBefore) / result.requests) * 1e6;
      runs.get(build.name).push(result);
    }
  }
  await redis.stop();
  const rows = builds.map((build) => {
    const sorted = runs.get(build.name).sort((a, b) => a.cpuUsPerRequest - b.cpuUsPerRequest);
    return { name: build.name, ...sorted[Math.floor(sorted.length / 2)] };
  });
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  console.log(
    `${DESCRIPTORS} descriptor(s), batches of ${BATCH} requests${SPREAD ? ", one request a turn" : ", one turn"}, median of ${ROUNDS} × ${SECONDS} s`,
  );
  for (const row of rows) {
    console.log(
      `${row.cpuUsPerRequest.toFixed(2).padStart(7)} µs client CPU/request  ${row.redisUsPerRequest.toFixed(2).padStart(6)} µs Redis CPU/request  ${String(Math.round(row.requestsPerSecond)).padStart(7)} req/s  ${row.name}`,
    );
  }
}

function runChild(dist, port) {
  return new Promise((done, fail) => {
    const args = [new URL(import.meta.url).pathname, "--child", dist, "--port", String(port)];
    args.push(
      "--descriptors",
      String(DESCRIPTORS),
      "--batch",
      String(BATCH),
      "--seconds",
      String(SECONDS),
      ...(SPREAD ? ["--spread"] : []),
    );
    const process_ = spawn("taskset", ["-c", "1", process.execPath, ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    process_.stdout.on("data", (d) => (out += d));
    process_.once("exit", (code) =>
      code === 0 ? done(JSON.parse(out)) : fail(new Error(`child exited ${code}`)),
    );
  });
}

/** One build's store: warm up for a second, then measure SECONDS of batches. */
async function child(dist, port) {
  const { createCounterStore } = await import(`${dist}/src/backends/create-counter-store.js`);
  const { counterStoreOptions } = await import(`${dist}/src/daemon/counter-store-options.js`);
  const { loadSettings } = await import(`${dist}/src/settings/load-settings.js`);
  const { Logger } = await import(`${dist}/src/observability/logger.js`);
  const { StatsRegistry } = await import(`${dist}/src/observability/stats-registry.js`);
  const { ThrottledLog } = await import(`${dist}/src/observability/throttled-log.js`);
  const settings = loadSettings({
    BACKEND_TYPE: "redis",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: `127.0.0.1:${port}`,
    REDIS_POOL_SIZE: "1",
  });
  const logger = new Logger({ level: "warn", format: "json", write: () => {} });
  const store = createCounterStore(counterStoreOptions(settings), {
    stats: new StatsRegistry({ maxDynamicKeys: 100 }),
    logger,
    throttledLog: new ThrottledLog({ logger }),
  });
  await store.start();
  // Keys as the engine makes them: domain_key_value_<window start>, a fresh array per request.
  const window = Math.floor(Date.now() / 3_600_000) * 3600;
  const request = () =>
    Array.from({ length: DESCRIPTORS }, (_, i) => ({
      key: `bench_k${i}_v_${window}`,
      hits: 1,
      ttlSeconds: 3600,
      perSecond: false,
    }));
  let requests = 0;
  const measure = async (seconds) => {
    requests = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const until = started + seconds * 1000;
    const batch = new Array(BATCH);
    while (performance.now() < until) {
      for (let n = 0; n < BATCH; n++) {
        if (SPREAD && n > 0) await new Promise(setImmediate);
        batch[n] = store.increment(request());
      }
      await Promise.all(batch);
      requests += BATCH;
    }
    const used = process.cpuUsage(cpu);
    const elapsed = (performance.now() - started) / 1000;
    return {
      requests,
      cpuUsPerRequest: (used.user + used.system) / requests,
      requestsPerSecond: requests / elapsed,
    };
  };
  await measure(1);
  const result = await measure(SECONDS);
  await store.close();
  process.stdout.write(JSON.stringify(result));
}
