// The reservation step on Redis (src/backends/redis/reservation-script.ts) on every topology, held to the
// memory store's step (src/engine/algorithms/reservation-step.ts): one script call per step on Redis's
// clock, NOSCRIPT answered by EVAL, holds that expire by themselves, and the record's key and fields.
import t, { type Test } from "tap";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import type { ReserveOperation } from "../../../src/engine/algorithms/counter-operation.js";
import type { CounterStore } from "../../../src/engine/counter-store.js";
import { startCluster } from "../../helpers/redis-cluster.js";
import { startSentinelGroup } from "../../helpers/redis-sentinel.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { sleep } from "../../helpers/rules-dir.js";

/** A step of the 10,000-per-hour limit with estimate 2,000 and a hold ttl of `ttlMs`. */
function step(
  key: string,
  hits: number,
  requestId = "",
  ttlMs = 300_000,
  perSecond = false,
): ReserveOperation {
  return {
    kind: "reserve",
    key,
    hits,
    charge: hits > 0,
    limit: 10_000,
    estimate: 2_000,
    holdTtlMs: ttlMs,
    windowSeconds: perSecond ? 1 : 3600,
    sliding: false,
    bucket: false,
    refill: 0,
    requestId,
    jitterSeconds: 0,
    perSecond,
  };
}

/** The step's `[ok, U, R, holds, heldOrReleased]` (msToWindowEnd left out: it depends on the clock). */
async function run(store: CounterStore, operation: ReserveOperation, reading = false): Promise<number[]> {
  const values = reading ? await store.read([operation]) : await store.increment([operation]);
  return [values[0]!, values[1]!, values[2]!, values[3]!, values[5]!];
}

/**
 * The same step on a token bucket of 10,000 tokens refilled at 10,000 a day (one token each 8.64 s, so
 * the scenario's answers are a window's), or at `refill` per `windowSeconds`.
 */
function bucketStep(
  key: string,
  hits: number,
  requestId = "",
  refill = 10_000,
  windowSeconds = 86_400,
): ReserveOperation {
  return { ...step(key, hits, requestId), bucket: true, refill, windowSeconds };
}

/** The same scenario on any store: checks, a refresh, charges by id and by age, a refusal, a read. */
async function scenario(
  t: Test,
  store: CounterStore,
  key: string,
  make: (key: string, hits: number, requestId?: string) => ReserveOperation = step,
): Promise<void> {
  const step = make;
  const answers: number[][] = [];
  answers.push(await run(store, step(key, 0, "a")));
  answers.push(await run(store, step(key, 0, "b")));
  answers.push(await run(store, step(key, 0, "a")));
  answers.push(await run(store, step(key, 0)));
  answers.push(await run(store, step(key, 0)));
  answers.push(await run(store, step(key, 0)));
  answers.push(await run(store, step(key, 0, "c")));
  answers.push(await run(store, step(key, 0, "b"), true));
  answers.push(await run(store, step(key, 2500, "b")));
  answers.push(await run(store, step(key, 300)));
  answers.push(await run(store, step(key, 9000, "zzz")));
  answers.push(await run(store, step(key, 0, "d")));
  t.same(answers, [
    [1, 0, 2000, 1, 2000],
    [1, 0, 4000, 2, 2000],
    [1, 0, 4000, 2, 0], // a's hold refreshed, nothing more held
    [1, 0, 6000, 3, 2000],
    [1, 0, 8000, 4, 2000],
    [1, 0, 10000, 5, 2000],
    [0, 0, 10000, 5, 0], // U + R + estimate > L: refused, nothing held
    [1, 0, 10000, 5, 0], // a read: b's hold is live, nothing written
    [0, 2500, 8000, 4, 2000], // b settles its own hold; 2500 + 8000 > 10000: OVER_LIMIT
    [1, 2800, 6000, 3, 2000], // no id: a's, the oldest, goes
    [0, 11800, 6000, 3, 0], // an id without a hold: counts in full, settles nothing
    [0, 11800, 6000, 3, 0],
  ]);
}

t.test("memory: the scenario", async (t) => {
  await scenario(t, new MemoryStore(), "mem_resv3600");
});

t.test("memory: the scenario on a token bucket, and its refill on the store's clock", async (t) => {
  let nowMs = 1_800_000_000_000;
  const store = new MemoryStore({ nowMs: () => nowMs });
  await scenario(t, store, "mem_resvgcra86400", bucketStep);
  // 10,000 a second: 10 tokens a ms, U rounded up to whole tokens.
  const fast = (hits: number, id = "") => bucketStep("fast_resvgcra1", hits, id, 10_000, 1);
  t.same(await run(store, fast(10_000)), [1, 10_000, 0, 0, 0], "a charge takes the whole bucket");
  t.same(await run(store, fast(0)), [0, 10_000, 0, 0, 0], "an empty bucket refuses a check");
  nowMs += 300;
  t.same(await run(store, fast(0, "a")), [1, 7000, 2000, 1, 2000], "300 ms refilled 3,000 tokens");
  t.same((await store.read([fast(0)]))[4], 700, "full again in 700 ms");
  nowMs += 150;
  t.same(await run(store, fast(1, "a")), [1, 5501, 0, 0, 2000], "1,500 more refilled; a settles its hold");
  nowMs += 10_000;
  t.same(await run(store, fast(0), true), [0, 0, 0, 0, 0], "full again: the record is gone");
  const huge = (hits: number) => bucketStep("huge_resvgcra3153600000", hits, "", 4e9, 3_153_600_000);
  t.same(await run(store, huge(4e9)), [0, 4e9, 0, 0, 0], "a bucket refilled over 100 years");
  t.same(await run(store, huge(1)), [0, 4e9 + 1, 0, 0, 0]);
});

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("single Redis: the same answers, the record's fields, NOSCRIPT, expiry by itself", async (t) => {
    const redis = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: redis.url });
    await scenario(t, store, "single_resv3600");
    t.equal(await redis.cli("HGET", "single_resv3600", "u"), "11800");
    t.equal(await redis.cli("HGET", "single_resv3600", "o"), "5");
    t.same(
      (await redis.cli("HKEYS", "single_resv3600")).split("\n").sort(),
      ["#3", "#4", "#5", "o", "p", "u", "w"],
      "c's refused check placed nothing, b's own hold and a's (the oldest) are settled",
    );
    t.match(await redis.cli("HGET", "single_resv3600", "#5"), /^2000:\d{13}:5$/);
    const ttl = Number(await redis.cli("PTTL", "single_resv3600"));
    t.ok(ttl > 299_000 && ttl <= 3_600_000, `the record lives as long as its window or holds (${ttl} ms)`);

    await scenario(t, store, "single_resvgcra86400", bucketStep);
    // Tokens not yet refilled × the refill period in ms: 11,800 less what the last ms refilled.
    const taken = Number(await redis.cli("HGET", "single_resvgcra86400", "u"));
    t.ok(taken > 11_799 * 86_400_000 && taken <= 11_800 * 86_400_000, `the bucket's record (${taken})`);

    const fast = (hits: number, id = "") => bucketStep("fast_resvgcra1", hits, id, 10_000, 1);
    const chargedAt = Date.now();
    t.same(await run(store, fast(10_000)), [1, 10_000, 0, 0, 0], "a charge takes the whole bucket");
    const chargedBy = Date.now();
    await sleep(300);
    const readAt = Date.now();
    const refilled = 10_000 - (await store.read([fast(0)]))[1]!;
    const readBy = Date.now();
    t.ok(
      refilled >= (readAt - chargedBy - 2) * 10 && refilled <= (readBy - chargedAt + 2) * 10,
      `the bucket refilled 10 tokens a ms on Redis's clock (${refilled} in ${readAt - chargedBy}–${readBy - chargedAt} ms)`,
    );

    // 4·10⁹ tokens taken from a bucket refilled over 100 years: u is 1.26·10²², beyond `%d`.
    const huge = (hits: number) => bucketStep("huge_resvgcra3153600000", hits, "", 4e9, 3_153_600_000);
    t.same(await run(store, huge(4e9)), [0, 4e9, 0, 0, 0]);
    t.same(await run(store, huge(1)), [0, 4e9 + 1, 0, 0, 0], "read back whole");
    t.match(await redis.cli("HGET", "huge_resvgcra3153600000", "u"), /^1\.261\d+e\+22$/);

    await redis.cli("SCRIPT", "FLUSH");
    t.same(await run(store, step("flushed_resv3600", 0, "x")), [1, 0, 2000, 1, 2000], "EVAL after NOSCRIPT");
    t.same(await run(store, step("flushed_resv3600", 0, "y")), [1, 0, 4000, 2, 2000]);

    t.same(await run(store, step("short_resv3600", 0, "p", 1000)), [1, 0, 2000, 1, 2000]);
    await sleep(1_100);
    t.same(await run(store, step("short_resv3600", 0, "q", 1000)), [1, 0, 2000, 1, 2000], "p's hold expired");
  });

  t.test("cluster: each record runs whole on the node owning its slot", async (t) => {
    const cluster = await startCluster(t);
    const { store } = await redisStoreFrom(t, { REDIS_TYPE: "cluster", REDIS_URL: cluster.url });
    await scenario(t, store, "cluster_resv3600");
    await scenario(t, store, "cluster_resvgcra86400", bucketStep);
    // Two records in different slots in one request.
    const values = await store.increment([step("{user}_resv3600", 0, "a"), step("{tenant}_resv3600", 100)]);
    t.same([values[0], values[2], values[6], values[7]], [1, 2000, 1, 100]);
    t.equal(await cluster.cli(cluster.nodes[0]!.port, "-c", "HGET", "{tenant}_resv3600", "u"), "100");
    for (const node of cluster.nodes) await node.cli("SCRIPT", "FLUSH");
    t.same(await run(store, step("{user}_resv3600", 0, "b")), [1, 0, 4000, 2, 2000], "EVAL after NOSCRIPT");
  });

  t.test("sentinel: the primary runs the step", async (t) => {
    const group = await startSentinelGroup(t);
    const { store } = await redisStoreFrom(t, { REDIS_TYPE: "sentinel", REDIS_URL: group.sentinelUrl });
    await scenario(t, store, "sentinel_resv3600");
  });

  t.test(
    "REDIS_PERSECOND: a SECOND-unit reservation's record lives on the per-second instance",
    async (t) => {
      const main = await startRedis(t);
      const perSecond = await startRedis(t);
      const { store } = await redisStoreFrom(t, {
        REDIS_URL: main.url,
        REDIS_PERSECOND: "true",
        REDIS_PERSECOND_SOCKET_TYPE: "tcp",
        REDIS_PERSECOND_URL: perSecond.url,
      });
      const values = await store.increment([
        step("ps_resv1", 0, "a", 300_000, true),
        step("main_resv3600", 0, "a"),
      ]);
      t.same([values[0], values[2], values[6], values[8]], [1, 2000, 1, 2000]);
      t.equal(await perSecond.cli("EXISTS", "ps_resv1"), "1");
      t.equal(await main.cli("EXISTS", "ps_resv1"), "0");
      t.equal(await main.cli("EXISTS", "main_resv3600"), "1");
    },
  );
}
