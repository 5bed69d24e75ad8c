/**
 * operationFor / outcomeFor: each algorithm's store operation (keys, TTL, per-second routing) and the
 * outcome read from its place in the store's flat list of values.
 */
import t from "tap";
import { resultCountOf } from "../../../../src/engine/algorithms/counter-operation.js";
import { operationFor, outcomeFor } from "../../../../src/engine/algorithms/limit-decision.js";
import { cacheKeyFor, windowStart } from "../../../../src/engine/cache-key.js";
import type { DecisionEntry } from "../../../../src/engine/decision-request.js";
import { limitOf, NOW_MS } from "./algorithm-fixtures.js";

const ENTRIES: DecisionEntry[] = [
  { key: "key2", value: "value2" },
  { key: "subkey2", value: "subvalue2" },
];
const BASE = "prefix:domain_key2_value2_subkey2_subvalue2_";

t.test("operations carry the keys: 5-minute windows are epoch-aligned to 300 s", async (t) => {
  // NOW_MS + 7 min 30 s lies in the 5-minute window that started 5 minutes after NOW_MS.
  const nowMs = NOW_MS + 450_000;
  const start = NOW_MS / 1000 + 300;
  const fixed = operationFor(
    limitOf("fixed_window", 10, "minute", { unitMultiplier: 5 }),
    BASE,
    0,
    1,
    nowMs,
    0,
  );
  t.strictSame(fixed, {
    kind: "fixed",
    key: `${BASE}${start}_x5`,
    hits: 1,
    ttlSeconds: 300,
    perSecond: false,
  });
  const sliding = operationFor(
    limitOf("sliding_window", 10, "minute", { unitMultiplier: 5 }),
    BASE,
    1,
    2,
    nowMs,
    3,
  );
  t.strictSame(sliding, {
    kind: "sliding",
    key: `${BASE}${start}_x5_l1`,
    previousKey: `${BASE}${start - 300}_x5_l1`,
    hits: 2,
    ttlSeconds: 603,
    perSecond: false,
  });
  const bucket = operationFor(limitOf("token_bucket", 3, "second", { burst: 6 }), BASE, 0, 4, nowMs, 3);
  t.strictSame(bucket, {
    kind: "bucket",
    key: `${BASE}gcra333333.3333333333`,
    hits: 4,
    emissionIntervalUs: 1_000_000 / 3,
    burst: 6,
    perSecond: true,
  });
});

t.test("fixed and sliding windows of one unit share the reference's key", async (t) => {
  const nowMs = NOW_MS + 1234;
  const reference = cacheKeyFor("prefix:", "domain", ENTRIES, undefined, windowStart(nowMs / 1000, 60));
  const fixed = operationFor(limitOf("fixed_window", 10, "minute"), BASE, 0, 1, nowMs, 0);
  const sliding = operationFor(limitOf("sliding_window", 10, "minute"), BASE, 0, 1, nowMs, 0);
  t.equal(fixed?.key, reference);
  t.equal(sliding?.key, reference);
  t.equal(sliding?.kind === "sliding" && sliding.previousKey, `${BASE}${NOW_MS / 1000 - 60}`);
});

t.test("a token bucket whose rate is 0 needs no store operation", async (t) => {
  t.equal(operationFor(limitOf("token_bucket", 0, "second"), BASE, 0, 1, NOW_MS, 0), undefined);
});

t.test("outcomeFor reads each algorithm's values at its offset in the flat results", async (t) => {
  const results = [99, 4, 1, 6, 1, 100_000];
  const fixed = outcomeFor(limitOf("fixed_window", 10, "minute"), 1, results, 1, NOW_MS + 1000);
  t.match(fixed, { over: false, before: 3, after: 4, remaining: 6, resetSeconds: 59 });
  // Half-way through the minute, current 1 and previous 6: floor(6 × 0.5) + 1 = 4.
  const sliding = outcomeFor(limitOf("sliding_window", 10, "minute"), 1, results, 2, NOW_MS + 30_000);
  t.match(sliding, { over: false, before: 3, after: 4, remaining: 6, resetSeconds: 90 });
  const bucket = outcomeFor(limitOf("token_bucket", 10, "second"), 1, results, 4, NOW_MS);
  t.match(bucket, { over: false, before: 0, after: 1, remaining: 9, resetSeconds: 1 });
});

t.test("outcomeFor: a token bucket whose rate is 0 refuses every hit without any results", async (t) => {
  t.strictSame(outcomeFor(limitOf("token_bucket", 0, "minute"), 2, [], 0, NOW_MS), {
    over: true,
    limit: 0,
    before: 0,
    after: 2,
    remaining: 0,
    resetSeconds: 60,
    overLimitCacheMs: 60_000,
  });
  t.strictSame(outcomeFor(limitOf("token_bucket", 0, "minute"), 0, [], 0, NOW_MS), {
    over: false,
    limit: 0,
    before: 0,
    after: 0,
    remaining: 0,
    resetSeconds: 60,
    overLimitCacheMs: 0,
  });
});

t.test("resultCountOf: fixed 1, sliding 2, bucket 2", async (t) => {
  const operations = [
    operationFor(limitOf("fixed_window", 1, "second"), BASE, 0, 1, NOW_MS, 0)!,
    operationFor(limitOf("sliding_window", 1, "second"), BASE, 0, 1, NOW_MS, 0)!,
    operationFor(limitOf("token_bucket", 1, "second"), BASE, 0, 1, NOW_MS, 0)!,
  ];
  t.strictSame(operations.map(resultCountOf), [1, 2, 2]);
});
