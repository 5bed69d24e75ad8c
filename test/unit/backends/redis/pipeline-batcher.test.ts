import t from "tap";
import { AnswerBatcher, PipelineBatcher } from "../../../../src/backends/redis/pipeline-batcher.js";
import type { FixedOperation } from "../../../../src/engine/algorithms/counter-operation.js";

// Implicit pipelining (docs/backends.md "Redis"): each request gets its own part of a flush's answer.
const fixed = (key: string): FixedOperation => ({ key, hits: 1, ttlSeconds: 60, perSecond: false });

t.test("a flush's values are cut per request", async (t) => {
  const runs: string[][] = [];
  const batcher = new PipelineBatcher(
    async (increments) => {
      runs.push(increments.map((i) => i.key));
      return increments.map((_, n) => n + 1);
    },
    0,
    0,
  );
  const answers = await Promise.all([batcher.submit([fixed("a"), fixed("b")]), batcher.submit([fixed("c")])]);
  t.strictSame(runs, [["a", "b", "c"]], "one flush");
  t.strictSame(answers, [[1, 2], [3]]);
});

t.test("an answer telling failures apart fails only the requests they belong to", async (t) => {
  type Answer = { values: number[]; failed: number[] };
  const batcher = new AnswerBatcher<Answer>(
    async (increments) => ({
      values: increments.map((_, n) => n + 1),
      failed: increments.flatMap((i, n) => (i.key.startsWith("lost") ? [n] : [])),
    }),
    0,
    0,
    (answer, { firstOperation, operations, firstResult, results }) => ({
      values: answer.values.slice(firstResult, firstResult + results),
      failed: answer.failed
        .filter((n) => n >= firstOperation && n < firstOperation + operations)
        .map((n) => n - firstOperation),
    }),
  );
  const answers = await Promise.all([
    batcher.submit([fixed("a")]),
    batcher.submit([fixed("b"), fixed("lost-1")]),
    batcher.submit([fixed("c")]),
  ]);
  t.strictSame(answers, [
    { values: [1], failed: [] },
    { values: [2, 3], failed: [1] },
    { values: [4], failed: [] },
  ]);
});

t.test("a flush that fails as a whole fails every request in it", async (t) => {
  const batcher = new PipelineBatcher(
    async () => {
      throw new Error("no client ready");
    },
    0,
    0,
  );
  const outcomes = await Promise.allSettled([batcher.submit([fixed("a")]), batcher.submit([fixed("b")])]);
  t.strictSame(
    outcomes.map((o) => (o.status === "rejected" ? (o.reason as Error).message : "answered")),
    ["no client ready", "no client ready"],
  );
});
