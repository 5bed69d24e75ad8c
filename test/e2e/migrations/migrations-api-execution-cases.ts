// Executions of the test migrations: scheduling, progress through the executions list, ranges of
// batches, rollbacks manual and automatic, retries, and one active execution per migration (docs/migrations-api.md).
import type { Test } from "tap";
import { ISO, type MigrationsApiContext } from "./migrations-api-context.js";
import { runsOf } from "./migrations-harness.js";

/** Runs three-items to completion; the returned function gives that execution's ID once it ran. */
export function scheduledRunCases(t: Test, { db, api }: MigrationsApiContext): () => number {
  let threeItems = 0;
  t.test("run: scheduled, polled through executions until completed", async (t) => {
    const scheduled = await api.post("/migrations/three-items/run");
    t.equal(scheduled.status, 200);
    const result = scheduled.json as { execution_id: number };
    threeItems = result.execution_id;
    t.strictSame(scheduled.json, {
      success: true,
      message: "Migration scheduled for execution.",
      execution_id: threeItems,
      operation: "up",
      from_batch: 1,
      to_batch: 3,
      batch_size: 1,
    });
    const done = await api.waitFor("three-items", threeItems, ["completed", "failed"]);
    t.match(done, {
      id: threeItems,
      migration_id: "three-items",
      operation: "up",
      parent_execution_id: null,
      status: "completed",
      items_total: 3,
      items_processed: 3,
    });
    t.strictSame(Object.keys(done), [
      "id",
      "migration_id",
      "operation",
      "parent_execution_id",
      "start_date_gmt",
      "end_date_gmt",
      "status",
      "items_total",
      "items_processed",
      "created_at",
    ]);
    for (const key of ["start_date_gmt", "end_date_gmt", "created_at"]) t.match(done[key], ISO, key);
    t.strictSame(await runsOf(db, "three-items"), ["up:1", "up:2", "up:3"]);
    const listed = (await api.get("/migrations?tags=batches")).json as { status: string }[];
    t.equal(listed[0]?.status, "completed");
  });
  return () => threeItems;
}

/** Ranges, rollbacks, failures, retries and conflicts; expects three-items to have run once in full. */
export function executionCases(t: Test, { db, api, expectError }: MigrationsApiContext): void {
  t.test("a range of batches: from-batch and to-batch are a hard range", async (t) => {
    const scheduled = (await api.post("/migrations/three-items/run", { "from-batch": 2, "to-batch": "2" }))
      .json as {
      execution_id: number;
      from_batch: number;
      to_batch: number;
    };
    t.match(scheduled, { from_batch: 2, to_batch: 2 });
    const done = await api.waitFor("three-items", scheduled.execution_id, ["completed", "failed"]);
    t.match(done, { status: "completed", items_total: 1, items_processed: 1 });
    t.strictSame(await runsOf(db, "three-items"), ["up:1", "up:2", "up:2", "up:3"]);
  });

  t.test("manual rollback ends reverted", async (t) => {
    const scheduled = await api.post("/migrations/three-items/rollback");
    t.match(scheduled.json, {
      success: true,
      message: "Rollback scheduled for execution.",
      operation: "down",
      from_batch: 1,
      to_batch: 3,
    });
    const id = (scheduled.json as { execution_id: number }).execution_id;
    t.match(await api.waitFor("three-items", id, ["reverted", "failed"]), {
      status: "reverted",
      operation: "down",
      items_processed: 3,
    });
    t.strictSame(
      (await runsOf(db, "three-items")).filter((r) => r.startsWith("down")),
      ["down:1", "down:2", "down:3"],
    );
    t.equal(
      ((await api.get("/migrations?tags=batches")).json as { status: string }[])[0]?.status,
      "reverted",
    );
    const again = `Migration three-items is already rolled back (execution ${id} reverted); run it again before another rollback.`;
    expectError(t, await api.post("/migrations/three-items/rollback"), 409, again);
    t.strictSame(
      (await runsOf(db, "three-items")).filter((r) => r.startsWith("down")),
      ["down:1", "down:2", "down:3"],
      "nothing was scheduled",
    );
  });

  t.test("a failing batch: the execution fails, and its automatic rollback runs as a child", async (t) => {
    const parentId = ((await api.post("/migrations/failing/run")).json as { execution_id: number })
      .execution_id;
    const parent = await api.waitFor("failing", parentId, ["failed", "completed"]);
    t.match(parent, { status: "failed", items_total: 3, items_processed: 1, parent_execution_id: null });
    const executions = (await api.get("/migrations/failing/executions")).json as Record<string, unknown>[];
    t.equal(executions.length, 2);
    const childId = executions[1]?.id as number;
    const child = await api.waitFor("failing", childId, ["reverted", "failed"]);
    t.match(child, {
      operation: "down",
      parent_execution_id: parentId,
      status: "reverted",
      items_total: 2,
      items_processed: 2,
    });
    const parentLogs = (await api.get(`/executions/${parentId}/logs?order=asc&order-by=id`)).json as Record<
      string,
      unknown
    >[];
    t.match(parentLogs.slice(-3), [
      { type: "info", message: "about to fail", data: { batch: 2 } },
      { type: "error", message: "Batch 2 failed: boom at batch 2", data: { batch: 2 } },
      { type: "warning", message: "Automatic rollback scheduled.", data: { execution_id: childId } },
    ]);
    t.match((await api.get(`/executions/${childId}/logs?order=asc&order-by=id`)).json, [
      {
        type: "info",
        message: `Automatic rollback of execution ${parentId}.`,
        data: { parent_execution_id: parentId },
      },
    ]);
    t.strictSame(await runsOf(db, "failing"), ["up:1", "down:1", "down:2"]);
    expectError(
      t,
      await api.post("/migrations/failing/rollback"),
      409,
      `Migration failing is already rolled back (execution ${childId} reverted); run it again before another rollback.`,
    );
    t.equal(
      ((await api.get("/migrations?tags=test")).json as { id: string; status: string }[]).find(
        (m) => m.id === "failing",
      )?.status,
      "reverted",
    );
  });

  t.test("a batch that fails once is retried with backoff and completes", async (t) => {
    const id = ((await api.post("/migrations/flaky/run")).json as { execution_id: number }).execution_id;
    t.match(await api.waitFor("flaky", id, ["completed", "failed"]), {
      status: "completed",
      items_processed: 1,
    });
    const logs = (await api.get(`/executions/${id}/logs?type=warning`)).json as Record<string, unknown>[];
    t.match(logs, [
      {
        message: "Batch 1 failed (attempt 1 of 3): transient failure Retrying in 0.1 s.",
        data: { batch: 1, attempt: 1, error: "transient failure", retry_in_seconds: 0.1 },
      },
    ]);
    t.strictSame(await runsOf(db, "flaky"), ["up:1"]);
  });

  t.test("one active execution per migration: a second run or rollback is a 409", async (t) => {
    const id = ((await api.post("/migrations/slow/run")).json as { execution_id: number }).execution_id;
    const conflict = "Migration slow already has an execution scheduled or running.";
    expectError(t, await api.post("/migrations/slow/run"), 409, conflict);
    expectError(t, await api.post("/migrations/slow/rollback"), 409, conflict);
    const running = await api.waitFor("slow", id, ["running", "completed"]);
    t.not(running.start_date_gmt, null);
    expectError(t, await api.post("/migrations/slow/run"), 409, conflict);
    t.match(await api.waitFor("slow", id, ["completed", "failed"]), {
      status: "completed",
      items_processed: 6,
    });
    t.strictSame(await runsOf(db, "slow"), ["up:1", "up:2", "up:3", "up:4", "up:5", "up:6"]);
    t.equal((await api.post("/migrations/slow/rollback")).status, 200, "free again once it ended");
  });
}
