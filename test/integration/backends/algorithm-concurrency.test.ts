// Many clients hammering one key at once, on the real clock: 20 Redis stores (as 20 daemons sharing one
// Redis), each looping request after request for 2 s. Whatever the interleaving, a token bucket never
// allows more than it holds plus what it refilled meanwhile, and a sliding window's allowed requests,
// replayed in time order through the estimate's definition, never exceed the limit. The memory store's
// bucket, shared by 20 loops of one process, is held to the same bound.
import t, { type Test } from "tap";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import type { AlgorithmLimit } from "../../../src/engine/algorithms/algorithm-limit.js";
import { operationFor, outcomeFor } from "../../../src/engine/algorithms/limit-decision.js";
import type { CounterStore } from "../../../src/engine/counter-store.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { limitOf } from "../../unit/engine/algorithms/algorithm-fixtures.js";

const CLIENTS = 20;
const DURATION_MS = 2000;

interface Run {
  /** The clock reading (ms) each allowed request was planned with. */
  readonly allowedAtMs: number[];
  readonly refused: number;
  /** From a reading before the first request to one after the last answer. */
  readonly elapsedMs: number;
}

/**
 * One loop per store (a store may appear several times), each sending one-hit requests on `key` until
 * `durationMs` has passed, as the service does: plan at Date.now(), decide, release a refused sliding hit.
 */
async function hammer(
  stores: readonly CounterStore[],
  limit: AlgorithmLimit,
  key: string,
  durationMs: number,
): Promise<Run> {
  const allowedAtMs: number[] = [];
  let refused = 0;
  const startMs = Date.now();
  const deadlineMs = startMs + durationMs;
  await Promise.all(
    stores.map(async (store) => {
      while (Date.now() < deadlineMs) {
        const nowMs = Date.now();
        const operation = operationFor(limit, key, 0, 1, nowMs, 0)!;
        const outcome = outcomeFor(limit, 1, await store.increment([operation]), 0, nowMs);
        if (!outcome.over) allowedAtMs.push(nowMs);
        else {
          refused++;
          if (operation.kind === "sliding") store.release([operation]);
        }
      }
    }),
  );
  return { allowedAtMs, refused, elapsedMs: Date.now() - startMs };
}

/**
 * GCRA allows n requests between its first and last clock readings t₁ and t₂ only if n ≤ burst +
 * (t₂ − t₁) / T (the bucket starts full; every allowed hit moves its arrival time T on). Both stores read
 * the wall clock the test reads with Date.now(), which truncates to whole ms: t₂ − t₁ can exceed the
 * measured elapsed time by less than 1 ms, hence the `+ 1` ms. GCRA's own tolerance (a billionth of a
 * token, src/engine/algorithms/gcra-step.ts) is added too.
 */
function assertBucketBound(t: Test, limit: AlgorithmLimit, run: Run): void {
  const tokensPerMs = limit.requestsPerUnit / (limit.windowSeconds * 1000);
  const bound = Math.floor(limit.burst + tokensPerMs * (run.elapsedMs + 1) + 1e-9);
  const allowed = run.allowedAtMs.length;
  t.comment(`${allowed} allowed, ${run.refused} refused in ${run.elapsedMs} ms; bound ${bound}`);
  t.ok(allowed <= bound, `${allowed} allowed ≤ burst + rate × elapsed = ${bound}`);
  t.ok(allowed >= limit.burst, `the full bucket's ${limit.burst} tokens were all allowed`);
  t.ok(run.refused > 0, "some requests were refused");
}

const BUCKET = limitOf("token_bucket", 100, "second", { burst: 20 });

/**
 * Replays the allowed requests in the order of their planned times through the estimate's definition,
 * in exact integers: floor(previous × (window − elapsed) / window) + current, this request included, must
 * stay within the limit at each of them. Sound whatever order Redis saw them in: of the allowed requests
 * planned up to some moment in one window, the one whose increment landed last counted them all, at a
 * weight of the previous window at least as high; and refused hits only ever made the counts larger.
 */
function firstExcess(limit: AlgorithmLimit, allowedAtMs: readonly number[]): string | undefined {
  const windowMs = limit.windowSeconds * 1000;
  const counts = new Map<number, number>();
  for (const atMs of [...allowedAtMs].sort((a, b) => a - b)) {
    const index = Math.floor(atMs / windowMs);
    const current = (counts.get(index) ?? 0) + 1;
    counts.set(index, current);
    const previous = counts.get(index - 1) ?? 0;
    const elapsedMs = atMs - index * windowMs;
    const estimate = Math.floor((previous * (windowMs - elapsedMs)) / windowMs) + current;
    if (estimate > limit.requestsPerUnit) {
      // Also what the same estimate gives in doubles, to tell rounding from a lost count.
      const inDoubles = Math.floor(previous * (1 - elapsedMs / windowMs)) + current;
      return `at ${elapsedMs} ms into window ${index}: previous ${previous}, current ${current}, estimate ${estimate} (${inDoubles} in doubles)`;
    }
  }
  return undefined;
}

const SLIDING = limitOf("sliding_window", 100, "second");

t.test(`memory store: ${CLIENTS} loops on one token bucket (100/second, burst 20) for 1 s`, async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  const run = await hammer(Array(CLIENTS).fill(store), BUCKET, "conc_mem_", 1000);
  assertBucketBound(t, BUCKET, run);
});

if (requireBinaries(t, ["redis-server"])) {
  t.test(`redis: ${CLIENTS} stores, one server`, async (t) => {
    const server = await startRedis(t);
    const stores: CounterStore[] = [];
    for (let i = 0; i < CLIENTS; i++) stores.push((await redisStoreFrom(t, { REDIS_URL: server.url })).store);

    await t.test(`one token bucket (100/second, burst 20) for ${DURATION_MS} ms`, async (t) => {
      assertBucketBound(t, BUCKET, await hammer(stores, BUCKET, "conc_bucket_", DURATION_MS));
    });

    await t.test(`one sliding window (100/second) for ${DURATION_MS} ms`, async (t) => {
      const run = await hammer(stores, SLIDING, "conc_sliding_", DURATION_MS);
      t.comment(`${run.allowedAtMs.length} allowed, ${run.refused} refused in ${run.elapsedMs} ms`);
      t.equal(firstExcess(SLIDING, run.allowedAtMs), undefined, "the estimate never exceeded the limit");
      t.ok(run.allowedAtMs.length >= SLIDING.requestsPerUnit, "at least the limit was allowed");
      t.ok(run.refused > 0, "some requests were refused");
    });
  });
}
