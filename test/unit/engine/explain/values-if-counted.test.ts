import t from "tap";
import { applyOperations, readOperation } from "../../../../src/engine/algorithms/apply-operation.js";
import type { CounterOperation } from "../../../../src/engine/algorithms/counter-operation.js";
import { valuesIfCounted } from "../../../../src/engine/explain/values-if-counted.js";

// What an increment would answer, from a read: checked against the memory store's own operations
// (src/engine/algorithms/apply-operation.ts) on the same cells, for every kind and a key named twice.
const NOW_MS = 1_800_000_000_500;
const operations: CounterOperation[] = [
  { key: "f", hits: 3, ttlSeconds: 60, perSecond: false },
  { kind: "sliding", key: "s", previousKey: "s0", hits: 2, ttlSeconds: 120, perSecond: false },
  { kind: "bucket", key: "b", hits: 1, emissionIntervalUs: 1_000_000, burst: 2, perSecond: false },
  { key: "f", hits: 4, ttlSeconds: 60, perSecond: false },
  { kind: "bucket", key: "b", hits: 1, emissionIntervalUs: 1_000_000, burst: 2, perSecond: false },
  { kind: "bucket", key: "b", hits: 1, emissionIntervalUs: 1_000_000, burst: 2, perSecond: false },
];

t.test("equal to applying the operations, from any starting state", async (t) => {
  for (const seed of [0, 1, 2]) {
    const cells = new Map();
    // Some history first: counts, a previous window, a half-empty bucket.
    applyOperations(cells, operations.slice(0, seed * 2), NOW_MS - 100);
    const read = operations.flatMap((operation) => readOperation(cells, operation, NOW_MS));
    const expected = applyOperations(new Map(structuredClone([...cells])), operations, NOW_MS);
    t.strictSame(valuesIfCounted(operations, read), expected, `after ${seed * 2} operations`);
  }
});
