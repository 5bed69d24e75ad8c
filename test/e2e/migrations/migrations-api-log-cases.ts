// The logs of an execution: both paths, type filters, search, order, paging and their validation (docs/migrations-api.md).
import type { Test } from "tap";
import { ISO, type MigrationsApiContext } from "./migrations-api-context.js";

/** Reads the logs of the completed three-items run whose ID `executionId` gives when the case runs. */
export function logCases(
  t: Test,
  { api, expectError }: MigrationsApiContext,
  executionId: () => number,
): void {
  t.test("logs: both paths, filters, search, order and paging", async (t) => {
    const threeItems = executionId();
    const logs = async (query = "", path = `/executions/${threeItems}/logs`) => {
      const reply = await api.get(`${path}${query}`);
      t.equal(reply.status, 200, `${path}${query}`);
      return reply.json as {
        id: number;
        execution_id: number;
        type: string;
        message: string;
        data: unknown;
        created_at: string;
      }[];
    };
    const all = await logs("?order=asc&order-by=id");
    t.strictSame(
      all.map((l) => [l.type, l.message]),
      [
        ["info", "Migration scheduled for execution."],
        ["debug", "three-items up 1"],
        ["info", "Batch 1 of 3 processed: 1 items."],
        ["debug", "three-items up 2"],
        ["info", "Batch 2 of 3 processed: 1 items."],
        ["debug", "three-items up 3"],
        ["info", "Batch 3 of 3 processed: 1 items."],
        ["info", "Migration completed."],
      ],
    );
    t.strictSame(all[0], {
      id: all[0]?.id,
      execution_id: threeItems,
      type: "info",
      message: "Migration scheduled for execution.",
      data: { from_batch: 1, to_batch: 3, batch_size: 1 },
      created_at: all[0]?.created_at,
    });
    t.match(all[0]?.created_at, ISO);
    const ids = all.map((l) => l.id);
    t.strictSame(
      (await logs()).map((l) => l.id),
      [...ids].reverse(),
      "default: created_at DESC, ties by id",
    );
    t.strictSame(await logs("", `/migrations/executions/${threeItems}/logs`), await logs(), "both paths");
    t.strictSame(
      (await logs("?type=debug&order=ASC")).map((l) => l.message),
      ["three-items up 1", "three-items up 2", "three-items up 3"],
    );
    t.equal((await logs("?type=info,debug")).length, 8);
    t.equal((await logs("?not-type=debug")).length, 5);
    t.strictSame(
      (await logs("?search=BATCH%202")).map((l) => l.message),
      ["Batch 2 of 3 processed: 1 items."],
    );
    t.strictSame(await logs("?search=nothing-like-this"), []);
    t.strictSame(
      (await logs("?order=asc&order-by=id&limit=2&offset=1")).map((l) => l.id),
      ids.slice(1, 3),
    );
    t.strictSame(
      (await logs("?order-by=type&order=asc&limit=3")).map((l) => l.type),
      ["debug", "debug", "debug"],
    );
    t.equal((await logs("?limit=200")).length, 8);
    const bad: [string, string][] = [
      ["?type=info&not-type=debug", "Invalid parameters: type and not-type cannot be used together."],
      ["?type=bogus", 'Invalid parameter type: "bogus" is not one of info, warning, error, debug.'],
      ["?not-type=info,", 'Invalid parameter not-type: "" is not one of info, warning, error, debug.'],
      ["?limit=0", "Invalid parameter limit: must be an integer between 1 and 200."],
      ["?limit=201", "Invalid parameter limit: must be an integer between 1 and 200."],
      ["?limit=ten", "Invalid parameter limit: must be an integer between 1 and 200."],
      ["?offset=-1", "Invalid parameter offset: must be an integer greater than or equal to 0."],
      ["?order=sideways", "Invalid parameter order: must be ASC or DESC."],
      ["?order-by=message", "Invalid parameter order-by: must be one of id, type, created_at."],
      ["?search=%00", "Invalid parameter search: must not contain NUL characters."],
    ];
    for (const [query, message] of bad)
      expectError(t, await api.get(`/executions/${threeItems}/logs${query}`), 400, message);
    expectError(t, await api.get("/executions/99999/logs"), 404, "Execution with ID 99999 not found.");
    expectError(t, await api.get("/migrations/executions/abc/logs"), 404, "Execution with ID abc not found.");
    expectError(t, await api.get("/executions/0/logs"), 404, "Execution with ID 0 not found.");
    expectError(t, await api.get("/executions/a%20b/logs"), 404, "Execution with ID a b not found.");
  });
}
