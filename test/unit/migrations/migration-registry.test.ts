import t from "tap";
import { BUILTIN_MIGRATIONS } from "../../../src/migrations/builtin/builtin-migrations.js";
import { batchCount } from "../../../src/migrations/migration.js";
import { definitionProblem, MigrationRegistry } from "../../../src/migrations/migration-registry.js";
import { retryDelayMs } from "../../../src/migrations/retry-backoff.js";

const valid = {
  id: "ok_id-1",
  label: "L",
  description: "D",
  tags: ["a"],
  defaultBatchSize: 5,
  totalItems: () => 1,
  isApplicable: () => true,
  canRun: () => true,
  isDone: () => false,
  up: () => 1,
};

t.test("definitions are checked field by field", async (t) => {
  t.equal(definitionProblem(valid), undefined);
  for (const definition of BUILTIN_MIGRATIONS)
    t.equal(definitionProblem(definition), undefined, definition.id);
  const cases: [unknown, string][] = [
    [null, "not an object"],
    [{ ...valid, id: "has space" }, "id must match [a-zA-Z0-9_-]+ (at most 191 characters)"],
    [{ ...valid, id: "x".repeat(192) }, "id must match [a-zA-Z0-9_-]+ (at most 191 characters)"],
    [{ ...valid, label: 1 }, "label must be a string"],
    [{ ...valid, tags: "a" }, "tags must be strings"],
    [{ ...valid, defaultBatchSize: 0 }, "defaultBatchSize must be a whole number ≥ 1"],
    [{ ...valid, retriesPerBatch: -1 }, "retriesPerBatch must be a whole number ≥ 0"],
    [{ ...valid, isDone: true }, "isDone must be a function"],
    [{ ...valid, down: "no" }, "down must be a function when present"],
  ];
  for (const [definition, problem] of cases) t.equal(definitionProblem(definition), problem, problem);
});

t.test("the registry refuses invalid and duplicate definitions, naming the source", async (t) => {
  const registry = new MigrationRegistry();
  registry.register(valid, "a.mjs");
  t.throws(() => registry.register(valid, "b.mjs"), new Error('b.mjs: duplicate migration id "ok_id-1"'));
  t.throws(
    () => registry.register({ ...valid, id: "other", up: undefined } as never, "c.mjs"),
    new Error("c.mjs: invalid migration definition: up must be a function"),
  );
  t.strictSame(
    registry.all().map((d) => d.id),
    ["ok_id-1"],
  );
});

t.test("batches and retry delays", async (t) => {
  t.equal(batchCount(0, 10), 1);
  t.equal(batchCount(10, 10), 1);
  t.equal(batchCount(11, 10), 2);
  t.strictSame(
    [1, 2, 3, 4].map((n) => retryDelayMs(n, 30_000, 21_600_000)),
    [30_000, 60_000, 120_000, 240_000],
  );
  t.equal(retryDelayMs(20, 30_000, 21_600_000), 21_600_000, "capped at 6 h");
});
