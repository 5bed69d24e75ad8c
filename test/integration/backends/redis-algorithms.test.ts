// Sliding windows and token buckets on Redis, in every topology (docs/backends.md "Redis"): a request mixing fixed,
// sliding and bucket operations answers the flat values of the in-process reference (applyOperations of
// src/engine/algorithms/apply-operation.ts), reads change nothing, releases give hits back, and a flushed
// script cache costs one extra round trip for the buckets alone, never a second count of the counters.
// Buckets run on Redis's clock (TIME in the script): a fresh bucket's debt is exactly hits × T, a later
// one's lies between the exact value and that minus the time that passed between the calls.
import t, { type Test } from "tap";
import {
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_SCRIPT_SHA1,
} from "../../../src/backends/redis/token-bucket-script.js";
import { applyOperations, type CounterCells } from "../../../src/engine/algorithms/apply-operation.js";
import type {
  BucketOperation,
  CounterOperation,
  FixedOperation,
  SlidingOperation,
} from "../../../src/engine/algorithms/counter-operation.js";
import type { CounterStore } from "../../../src/engine/counter-store.js";
import { startCluster } from "../../helpers/redis-cluster.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { startSentinelGroup } from "../../helpers/redis-sentinel.js";
import { type RedisServer, requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { startRoundTripProxy } from "../../helpers/round-trip-proxy.js";

/** One token a minute, burst 5: the clock's motion during a test (ms) stays far below a token. */
const T = 60_000_000;
const BURST = 5;

const fixed = (key: string, hits: number, perSecond = false): FixedOperation => ({
  key,
  hits,
  ttlSeconds: 60,
  perSecond,
});
const sliding = (key: string, previousKey: string, hits: number, perSecond = false): SlidingOperation => ({
  kind: "sliding",
  key,
  previousKey,
  hits,
  ttlSeconds: 120,
  perSecond,
});
const bucket = (key: string, hits: number, perSecond = false): BucketOperation => ({
  kind: "bucket",
  key,
  hits,
  emissionIntervalUs: T,
  burst: BURST,
  perSecond,
});

/** What a test reads and changes on the deployment itself, whatever its topology. */
interface Deployment {
  get(key: string): Promise<string>;
  set(key: string, value: string): Promise<void>;
  ttl(key: string): Promise<number>;
  /** SCRIPT FLUSH on every server, and CONFIG RESETSTAT so that commandstats count from zero. */
  flushScriptsAndStats(): Promise<void>;
  /** `calls` of `INFO commandstats` for `command`, summed over every server. */
  calls(command: string): Promise<number>;
}

function deploymentOf(servers: readonly RedisServer[], cliPrefix: readonly string[] = []): Deployment {
  const first = servers[0]!;
  return {
    get: (key) => first.cli(...cliPrefix, "GET", key),
    set: async (key, value) => void (await first.cli(...cliPrefix, "SET", key, value)),
    ttl: async (key) => Number(await first.cli(...cliPrefix, "TTL", key)),
    flushScriptsAndStats: async () => {
      for (const server of servers) {
        await server.cli("SCRIPT", "FLUSH");
        await server.cli("CONFIG", "RESETSTAT");
      }
    },
    calls: async (command) => {
      let calls = 0;
      for (const server of servers) {
        const stats = await server.cli("INFO", "commandstats");
        calls += Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(stats)?.[1] ?? 0);
      }
      return calls;
    },
  };
}

/** The in-process reference's answer, with `previous` already holding `previousCount`. */
function referenceOf(previous: string, previousCount: number): CounterCells {
  return new Map([
    [previous, { value: previousCount, fractionUs: 0, expiresAtMs: Number.POSITIVE_INFINITY }],
  ]);
}

/** A bucket's debt after `debtBeforeUs` plus `hits` tokens, on a clock that moved by at most `elapsedMs`. */
function assertDebt(t: Test, debtUs: number, expectedUs: number, elapsedMs: number, what: string): void {
  t.ok(
    debtUs <= expectedUs && debtUs >= expectedUs - (elapsedMs + 1) * 1000,
    `${what}: debt ${debtUs} µs within ${elapsedMs + 1} ms below ${expectedUs} µs`,
  );
}

/**
 * Keys in different cluster slots on different primaries ({user} → 5474, {tenant} → 14419): a sliding
 * window's previous window is read where its own slot lives.
 */
const keys = {
  fixed: "{user}_fixed",
  sliding: "{user}_sliding_1700000060",
  previous: "{tenant}_sliding_1700000000",
  bucket: "{tenant}_bucket",
  freshBucket: "{user}_bucket_after_flush",
  gone: "{tenant}_sliding_gone",
};

/**
 * The scenario every topology runs: mixed counting, a refused bucket request, a read, a release, and a
 * request after SCRIPT FLUSH. `roundTrips` (when the test can see them) counts client→server turns.
 */
async function mixedScenario(
  t: Test,
  store: CounterStore,
  redis: Deployment,
  roundTrips?: { reset(): void; count(): number },
): Promise<void> {
  await redis.set(keys.previous, "7");
  const cells = referenceOf(keys.previous, 7);
  const request = [
    fixed(keys.fixed, 2),
    sliding(keys.sliding, keys.previous, 3),
    bucket(keys.bucket, 2),
    fixed(keys.fixed, 1),
  ];
  const startedMs = Date.now();
  roundTrips?.reset();
  const first = await store.increment(request);
  t.strictSame(first, applyOperations(cells, request, Date.now()), "first request: the reference's values");
  t.strictSame(first, [2, 3, 7, 1, 2 * T, 3], "fresh bucket: debt = hits × T exactly");
  // A server that never ran the script answers NOSCRIPT once; EVAL caches it for every later request.
  if (roundTrips) t.equal(roundTrips.count(), 2, "a new server: one more round trip, for the bucket");

  roundTrips?.reset();
  const second = await store.increment(request);
  if (roundTrips) t.equal(roundTrips.count(), 1, "one round trip for the mixed request");
  const elapsedMs = Date.now() - startedMs;
  const expected = applyOperations(cells, request, Date.now());
  t.strictSame([...second.slice(0, 3), second[5]], [...expected.slice(0, 3), expected[5]], "counters");
  t.strictSame([...second.slice(0, 3), second[5]], [5, 6, 7, 6]);
  t.equal(second[3], 1, "the bucket allows 4 of 5 tokens");
  assertDebt(t, second[4]!, 4 * T, elapsedMs, "second request");

  const stored = await redis.get(keys.bucket);
  const refused = await store.increment([bucket(keys.bucket, BURST)]);
  t.equal(refused[0], 0, "5 more tokens do not fit");
  assertDebt(t, refused[1]!, 4 * T, Date.now() - startedMs, "refused: the debt before the request");
  t.equal(await redis.get(keys.bucket), stored, "a refused request leaves the bucket unchanged");

  const read = await store.read([
    fixed(keys.fixed, 9),
    sliding(keys.sliding, keys.previous, 9),
    bucket(keys.bucket, 9),
    fixed("{user}_absent", 9),
  ]);
  t.strictSame(
    [...read.slice(0, 4), read[5]],
    [6, 6, 7, 1, 0],
    "read: [count], [count, previous], [1, …], [0]",
  );
  assertDebt(t, read[4]!, 4 * T, Date.now() - startedMs, "read");
  t.strictSame(
    [await redis.get(keys.fixed), await redis.get(keys.sliding), await redis.get(keys.bucket)],
    ["6", "6", stored],
    "a read changes nothing",
  );

  store.release([sliding(keys.sliding, keys.previous, 3)]);
  await pollUntil("the release", async () => ((await redis.get(keys.sliding)) === "3" ? true : undefined), {
    timeoutMs: 5000,
    intervalMs: 20,
  });
  t.equal(await redis.get(keys.fixed), "6", "a release touches only its sliding window");
  // A counter gone before its release (evicted, flushed) comes back negative, but never without a TTL.
  store.release([sliding(keys.gone, keys.previous, 2)]);
  await pollUntil("the release", async () => ((await redis.get(keys.gone)) === "-2" ? true : undefined), {
    timeoutMs: 5000,
    intervalMs: 20,
  });
  const ttl = await redis.ttl(keys.gone);
  t.ok(ttl > 115 && ttl <= 120, `TTL ${ttl} s`);

  await redis.flushScriptsAndStats();
  const afterFlush = [
    fixed(keys.fixed, 1),
    sliding(keys.sliding, keys.previous, 1),
    bucket(keys.freshBucket, 3),
    fixed(keys.fixed, 1),
  ];
  roundTrips?.reset();
  t.strictSame(await store.increment(afterFlush), [7, 4, 7, 1, 3 * T, 8], "after SCRIPT FLUSH");
  if (roundTrips) t.equal(roundTrips.count(), 2, "one more round trip, for the bucket alone");
  t.equal(await redis.get(keys.fixed), "8", "the counters were counted once");
  t.equal(await redis.get(keys.sliding), "4");
  t.strictSame(
    {
      incrby: await redis.calls("incrby"),
      evalsha: await redis.calls("evalsha"),
      eval: await redis.calls("eval"),
    },
    { incrby: 3, evalsha: 1, eval: 1 },
    "INCRBY sent once each; EVALSHA refused, then EVAL",
  );
  roundTrips?.reset();
  const again = await store.increment([bucket(keys.freshBucket, 1), fixed(keys.fixed, 1)]);
  t.equal(again[2], 9);
  t.equal(await redis.calls("evalsha"), 2, "EVAL loaded the script: EVALSHA works again");
  if (roundTrips) t.equal(roundTrips.count(), 1, "back to one round trip");
}

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("single: mixed requests, reads, releases, NOSCRIPT, one round trip each", async (t) => {
    const server = await startRedis(t);
    const proxy = await startRoundTripProxy(t, { host: "127.0.0.1", port: server.port });
    const { store } = await redisStoreFrom(t, { REDIS_URL: proxy.url, REDIS_POOL_SIZE: "1" });
    t.strictSame(store.capabilities.algorithms, ["fixed_window", "sliding_window", "token_bucket"]);
    proxy.reset();
    t.strictSame(await store.increment([fixed("only_fixed", 1), fixed("only_fixed", 2)]), [1, 3]);
    t.equal(proxy.roundTrips(), 1, "fixed only: one round trip");
    await mixedScenario(t, store, deploymentOf([server]), {
      reset: () => proxy.reset(),
      count: () => proxy.roundTrips(),
    });
  });

  t.test(
    "single: a request's buckets share one EVALSHA, each stepped in key order (a key named twice sees its first step)",
    async (t) => {
      const server = await startRedis(t);
      const proxy = await startRoundTripProxy(t, { host: "127.0.0.1", port: server.port });
      const { store } = await redisStoreFrom(t, { REDIS_URL: proxy.url, REDIS_POOL_SIZE: "1" });
      const redis = deploymentOf([server]);
      const request = [bucket("mb_a", 2), fixed("mb_f", 1), bucket("mb_b", 6), bucket("mb_a", 3)];
      // The first call on a fresh server: NOSCRIPT, then one EVAL for all three steps.
      const first = await store.increment(request);
      // a: 2 fit (debt 2T); f: 1; b: 6 > burst 5, refused (debt 0); a again: 2 + 3 = 5 fit (debt 5T).
      t.strictSame(first, [1, 2 * T, 1, 0, 0, 1, 5 * T]);
      t.equal(await redis.calls("eval"), 1, "one EVAL for the three buckets");
      t.equal(await redis.calls("incrby"), 1, "the increment was not sent again");
      proxy.reset();
      const second = await store.increment([bucket("mb_b", 1), bucket("mb_a", 1), bucket("mb_c", 5)]);
      t.equal(proxy.roundTrips(), 1);
      t.equal(await redis.calls("evalsha"), 2, "one EVALSHA per request");
      t.strictSame([second[0], second[2], second[4], second[5]], [1, 0, 1, 5 * T]);
      assertDebt(t, second[1]!, T, 1000, "b: one token");
      assertDebt(t, second[3]!, 5 * T, 1000, "a: full, refused, nothing taken");
      const read = await store.read([bucket("mb_a", 4), bucket("mb_c", 4)]);
      t.strictSame([read[0], read[2]], [1, 1], "a read takes nothing");
      t.equal((await redis.get("mb_c")).split(":").length, 2, "the TAT is stored as whole:fraction");
    },
  );

  t.test("single: error replies fail the request as a BackendError", async (t) => {
    const server = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: server.url });
    await server.cli("SET", "text_previous", "not a number");
    await server.cli("HSET", "a_hash", "f", "1");
    await t.rejects(async () => store.increment([fixed("ok", 1), sliding("a_hash", "p", 1)]), {
      name: "BackendError",
      message: /^redis 127\.0\.0\.1:\d+: WRONGTYPE /,
    });
    await t.rejects(async () => store.increment([sliding("s", "text_previous", 1)]), {
      name: "BackendError",
      message: /unexpected reply "not a number" for a counter/,
    });
    await t.rejects(async () => store.increment([bucket("a_hash", 1)]), {
      name: "BackendError",
      message: /WRONGTYPE/,
    });
    t.strictSame(await store.increment([bucket("b", 1)]), [1, T], "the connection still serves");
  });

  t.test("a release that fails is logged, never thrown at the caller", async (t) => {
    const server = await startRedis(t);
    const { store, logs } = await redisStoreFrom(t, { REDIS_URL: server.url });
    t.strictSame(await store.increment([sliding("r_2", "r_1", 3)]), [3, 0]);
    await server.stop();
    t.doesNotThrow(() => store.release([sliding("r_2", "r_1", 3)]));
    await pollUntil(
      "the release's error line",
      async () => logs.find((line) => line.startsWith("error: failed to give back refused hits: ")),
      { timeoutMs: 5000, intervalMs: 20 },
    );
    t.match(
      logs.find((line) => line.startsWith("error: failed to give back")),
      /^error: failed to give back refused hits: redis 127\.0\.0\.1:\d+: /,
    );
  });

  t.test("sentinel: the same scenario on the group's primary", async (t) => {
    const group = await startSentinelGroup(t);
    const { store } = await redisStoreFrom(t, { REDIS_TYPE: "sentinel", REDIS_URL: group.sentinelUrl });
    await mixedScenario(t, store, deploymentOf([group.primary]));
  });

  t.test("cluster: the same scenario, a sliding window's two keys in different slots", async (t) => {
    const cluster = await startCluster(t);
    t.strictSame(
      await Promise.all(
        [keys.sliding, keys.previous].map((k) =>
          cluster.cli(cluster.nodes[0]!.port, "CLUSTER", "KEYSLOT", k),
        ),
      ),
      ["5474", "14419"],
    );
    const { store } = await redisStoreFrom(t, { REDIS_TYPE: "cluster", REDIS_URL: cluster.url });
    await mixedScenario(t, store, deploymentOf(cluster.nodes, ["-c"]));
  });

  t.test("REDIS_PERSECOND: each operation's values come back in order from its own deployment", async (t) => {
    const main = await startRedis(t);
    const perSecond = await startRedis(t);
    const { store } = await redisStoreFrom(t, {
      REDIS_URL: main.url,
      REDIS_PERSECOND: "true",
      REDIS_PERSECOND_SOCKET_TYPE: "tcp",
      REDIS_PERSECOND_URL: perSecond.url,
    });
    await perSecond.cli("SET", "prev_s", "4");
    await main.cli("SET", "prev_m", "9");
    const request: CounterOperation[] = [
      fixed("f_m", 2),
      sliding("s_s", "prev_s", 3, true),
      bucket("b_m", 1),
      bucket("b_s", 2, true),
      fixed("f_s", 5, true),
      sliding("s_m", "prev_m", 1),
      fixed("f_m", 1),
    ];
    const cells: CounterCells = new Map([
      ["prev_s", { value: 4, fractionUs: 0, expiresAtMs: Number.POSITIVE_INFINITY }],
      ["prev_m", { value: 9, fractionUs: 0, expiresAtMs: Number.POSITIVE_INFINITY }],
    ]);
    const countedMs = Date.now();
    const values = await store.increment(request);
    t.strictSame(values, applyOperations(cells, request, Date.now()));
    t.strictSame(values, [2, 3, 4, 1, T, 1, 2 * T, 5, 1, 9, 3]);
    const read = await store.read([
      bucket("b_s", 1, true),
      fixed("f_m", 1),
      sliding("s_s", "prev_s", 1, true),
    ]);
    t.strictSame(
      [read[0], ...read.slice(2)],
      [1, 3, 3, 4],
      "read: each operation's shape, from its deployment",
    );
    assertDebt(t, read[1]!, 2 * T, Date.now() - countedMs, "per-second bucket read");
    t.strictSame(
      [await main.cli("EXISTS", "s_s", "b_s", "f_s"), await perSecond.cli("EXISTS", "f_m", "b_m", "s_m")],
      ["0", "0"],
    );
    store.release([sliding("s_s", "prev_s", 3, true), sliding("s_m", "prev_m", 1)]);
    await pollUntil(
      "both releases",
      async () =>
        (await perSecond.cli("GET", "s_s")) === "0" && (await main.cli("GET", "s_m")) === "0"
          ? true
          : undefined,
      { timeoutMs: 5000, intervalMs: 20 },
    );
    const span = store.traceSpan(request);
    t.strictSame(span.attributes, {
      "pipeline length": 2 + 1 + 3 + 2,
      "perSecondPipeline length": 3 + 1 + 2,
    });
    t.strictSame(store.traceSpan([fixed("a", 1), fixed("b", 1, true)]).attributes, {
      "pipeline length": 2,
      "perSecondPipeline length": 2,
    });
  });

  t.test("pipeline window and limit: concurrent mixed requests each get their own values", async (t) => {
    const server = await startRedis(t);
    const settings: Record<string, string>[] = [
      { REDIS_PIPELINE_WINDOW: "20ms" },
      { REDIS_PIPELINE_LIMIT: "6" },
    ];
    for (const env of settings) {
      await server.cli("FLUSHALL");
      await server.cli("SET", "pw_prev", "11");
      t.equal(await server.cli("SCRIPT", "LOAD", TOKEN_BUCKET_SCRIPT), TOKEN_BUCKET_SCRIPT_SHA1);
      const proxy = await startRoundTripProxy(t, { host: "127.0.0.1", port: server.port });
      const { store } = await redisStoreFrom(t, { REDIS_URL: proxy.url, REDIS_POOL_SIZE: "1", ...env });
      proxy.reset();
      const answers = await Promise.all([
        store.increment([fixed("pw_f", 1), bucket("pw_b1", 1)]),
        store.increment([fixed("pw_f", 2)]),
        store.increment([sliding("pw_s", "pw_prev", 4), fixed("pw_f", 3), bucket("pw_b2", 3)]),
        store.increment([fixed("pw_f", 4)]),
      ]);
      t.strictSame(answers, [[1, 1, T], [3], [4, 11, 6, 1, 3 * T], [10]], JSON.stringify(env));
      // The window gathers all four in one write. A limit of 6 commands flushes after the first three
      // (2+1, 2, 3+2+1) and the fourth at the end of the turn: whether the server answered in between,
      // which makes it two turns, is a matter of timing.
      if ("REDIS_PIPELINE_WINDOW" in env) t.equal(proxy.roundTrips(), 1, "one batch");
      await server.cli("SCRIPT", "FLUSH");
      const afterFlush = await Promise.all([
        store.increment([bucket("pw_b3", 1), fixed("pw_f", 1)]),
        store.increment([fixed("pw_f", 1), bucket("pw_b4", 2)]),
      ]);
      t.strictSame(
        afterFlush,
        [
          [1, T, 11],
          [12, 1, 2 * T],
        ],
        "NOSCRIPT inside a batch",
      );
      t.equal(await server.cli("GET", "pw_f"), "12");
    }
  });
}
