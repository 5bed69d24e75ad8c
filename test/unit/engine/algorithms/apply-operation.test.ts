/**
 * The in-process store operations over a plain map, with Redis's semantics: INCRBY + EXPIRE (refreshed on
 * every hit), GET of the previous window, the sliding release (DECRBY), and the GCRA step with its TTL.
 */
import t from "tap";
import {
  applyBucketOperation,
  applyOperation,
  applyOperations,
  type CounterCells,
  readOperation,
  releaseOperation,
} from "../../../../src/engine/algorithms/apply-operation.js";
import type {
  BucketOperation,
  FixedOperation,
  SlidingOperation,
} from "../../../../src/engine/algorithms/counter-operation.js";
import { NOW_MS } from "./algorithm-fixtures.js";

const FIXED: FixedOperation = { kind: "fixed", key: "d_k_v_60", hits: 2, ttlSeconds: 60, perSecond: false };
const SLIDING: SlidingOperation = {
  kind: "sliding",
  key: "d_k_v_120",
  previousKey: "d_k_v_60",
  hits: 1,
  ttlSeconds: 120,
  perSecond: false,
};
/** 10/s, burst 10. */
const BUCKET: BucketOperation = {
  kind: "bucket",
  key: "d_k_v_gcra100000",
  hits: 3,
  emissionIntervalUs: 100_000,
  burst: 10,
  perSecond: true,
};

t.test("fixed: 2 hits on an empty map → [2], 2 more → [4], TTL refreshed on each", async (t) => {
  const cells: CounterCells = new Map();
  t.strictSame(applyOperation(cells, FIXED, NOW_MS), [2]);
  t.strictSame(applyOperation(cells, FIXED, NOW_MS + 10_000), [4]);
  t.strictSame(cells.get(FIXED.key), { value: 4, fractionUs: 0, expiresAtMs: NOW_MS + 70_000 });
});

t.test("fixed: a counter is gone at its expiry instant: 2 hits then → [2]", async (t) => {
  const cells: CounterCells = new Map();
  applyOperation(cells, FIXED, NOW_MS);
  t.strictSame(readOperation(cells, FIXED, NOW_MS + 59_999), [2]);
  t.strictSame(readOperation(cells, FIXED, NOW_MS + 60_000), [0]);
  t.strictSame(applyOperation(cells, FIXED, NOW_MS + 60_000), [2]);
});

t.test("sliding: 1 hit with the previous window at 4 → [1, 4]; previous absent → [n, 0]", async (t) => {
  const cells: CounterCells = new Map([["d_k_v_60", { value: 4, fractionUs: 0, expiresAtMs: NOW_MS + 1 }]]);
  t.strictSame(applyOperation(cells, SLIDING, NOW_MS), [1, 4]);
  t.strictSame(applyOperation(cells, SLIDING, NOW_MS + 1), [2, 0], "the previous counter expired");
  t.strictSame(cells.get(SLIDING.key), { value: 2, fractionUs: 0, expiresAtMs: NOW_MS + 120_001 });
});

t.test(
  "sliding release: 3 hits, one request of 1 released → 2; an expired counter stays absent",
  async (t) => {
    const cells: CounterCells = new Map();
    applyOperation(cells, { ...SLIDING, hits: 2 }, NOW_MS);
    applyOperation(cells, SLIDING, NOW_MS);
    releaseOperation(cells, SLIDING, NOW_MS + 5);
    t.strictSame(readOperation(cells, SLIDING, NOW_MS + 5), [2, 0]);
    releaseOperation(cells, SLIDING, NOW_MS + 120_000);
    t.equal(cells.get(SLIDING.key)?.value, 2, "not decremented once expired");
    t.strictSame(readOperation(cells, SLIDING, NOW_MS + 120_000), [0, 0]);
  },
);

t.test("bucket at nowMs: 3 hits → [1, 300 000]; the TAT lives ceil(300 000 µs / 1000) + 1 ms", async (t) => {
  const cells: CounterCells = new Map();
  t.strictSame(applyOperation(cells, BUCKET, NOW_MS), [1, 300_000]);
  t.strictSame(cells.get(BUCKET.key), {
    value: NOW_MS * 1000 + 300_000,
    fractionUs: 0,
    expiresAtMs: NOW_MS + 301,
  });
});

t.test("bucket: 9 hits with 3 taken → refused [0, 300 000], nothing stored", async (t) => {
  const cells: CounterCells = new Map();
  applyOperation(cells, BUCKET, NOW_MS);
  const before = structuredClone(cells.get(BUCKET.key));
  t.strictSame(applyOperation(cells, { ...BUCKET, hits: 9 }, NOW_MS), [0, 300_000]);
  t.strictSame(cells.get(BUCKET.key), before);
});

t.test("bucket in µs: 3 hits at +123.457 ms → debt 300 000 µs from that microsecond", async (t) => {
  const cells: CounterCells = new Map();
  const nowUs = NOW_MS * 1000 + 123_457;
  t.strictSame(applyBucketOperation(cells, BUCKET, nowUs), [1, 300_000]);
  t.equal(cells.get(BUCKET.key)?.value, nowUs + 300_000);
  t.strictSame(applyBucketOperation(cells, BUCKET, nowUs + 50_000), [1, 550_000]);
});

t.test("bucket read → [1, debt now], nothing taken; an empty bucket → [1, 0]", async (t) => {
  const cells: CounterCells = new Map();
  t.strictSame(readOperation(cells, BUCKET, NOW_MS), [1, 0]);
  t.equal(cells.size, 0);
  applyOperation(cells, BUCKET, NOW_MS);
  t.strictSame(readOperation(cells, BUCKET, NOW_MS + 100), [1, 200_000]);
  t.strictSame(readOperation(cells, BUCKET, NOW_MS + 100), [1, 200_000]);
});

t.test("applyOperations: one flat list, each operation's values in order", async (t) => {
  const cells: CounterCells = new Map();
  t.strictSame(applyOperations(cells, [FIXED, SLIDING, BUCKET, FIXED], NOW_MS), [2, 1, 2, 1, 300_000, 4]);
});
