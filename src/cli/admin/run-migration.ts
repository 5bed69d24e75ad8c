import { executionJson, scheduleJson } from "../../migrations/api/migrations-json.js";
import type { ExecutionRecord } from "../../migrations/migration-records.js";
import type { ScheduleResult } from "../../migrations/migration-service.js";
import type { AdminCommand } from "./admin-command.js";
import type { AdminContext } from "./admin-context.js";
import { PROGRAM } from "./admin-help.js";
import type { AdminIo } from "./admin-io.js";
import { ExecutionFollower } from "./execution-follower.js";
import { createProgressDisplay } from "./progress-display.js";

/** Exit code after Ctrl-C (128 + SIGINT), as shells report it. */
export const INTERRUPTED_EXIT_CODE = 130;

type RunCommand = Extract<AdminCommand, { name: "migrations run" }>;

/**
 * `migrations run/rollback`: schedules the execution through the migration service (same checks and
 * refusals as the REST API), then, unless `--no-wait`, works through it in this process until it ends,
 * following an automatic rollback too. Exit code 1 when an execution ended `failed`.
 */
export async function runMigration(
  ctx: AdminContext,
  command: RunCommand,
  io: AdminIo,
  signal: AbortSignal,
): Promise<number> {
  const scheduled = await ctx.migrations.schedule(command.migrationId, command.operation, {
    fromBatch: command.fromBatch,
    toBatch: command.toBatch,
    batchSize: command.batchSize,
  });
  if (!command.wait) {
    if (command.json) io.out(JSON.stringify(scheduleJson(scheduled), null, 2));
    else io.out(`${scheduled.message} Execution ${scheduled.executionId}: ${rangeText(scheduled)}.`);
    return 0;
  }
  const display = createProgressDisplay(io);
  const follower = new ExecutionFollower({ ctx, display, signal });
  follower.start();
  let stopped = false;
  const stop = async (graceMs: number) => {
    if (!stopped) await follower.stop(graceMs);
    stopped = true;
  };
  try {
    display.begin(
      `execution ${scheduled.executionId}: ${command.migrationId} ${command.operation}, ${rangeText(scheduled)}`,
    );
    const ended = await follower.follow(scheduled.executionId);
    if (ended === undefined) return await interrupted(ctx, scheduled.executionId, io, () => stop(0));
    let rollback: ExecutionRecord | undefined;
    if (ended.status === "failed") {
      io.err(`${PROGRAM}: execution ${ended.id} failed: ${await failureOf(ctx, ended.id)}`);
      rollback = await automaticRollbackOf(ctx, ended);
      if (rollback !== undefined) {
        io.err(`${PROGRAM}: automatic rollback scheduled as execution ${rollback.id}`);
        display.begin(
          `execution ${rollback.id}: ${rollback.migrationId} down (automatic rollback of execution ${ended.id}), ${rangeText(rollback)}`,
        );
        const rolledBack = await follower.follow(rollback.id);
        if (rolledBack === undefined) return await interrupted(ctx, rollback.id, io, () => stop(0));
        rollback = rolledBack;
        if (rollback.status === "failed") {
          io.err(`${PROGRAM}: execution ${rollback.id} failed: ${await failureOf(ctx, rollback.id)}`);
        }
      }
    }
    await stop(ctx.shutdownGraceMs);
    if (command.json) {
      const automatic_rollback = rollback === undefined ? null : executionJson(rollback);
      io.out(JSON.stringify({ execution: executionJson(ended), automatic_rollback }, null, 2));
    } else for (const execution of [ended, rollback]) if (execution) io.out(resultText(execution));
    return ended.status === "failed" || rollback?.status === "failed" ? 1 : 0;
  } finally {
    await stop(0);
  }
}

/** After Ctrl-C: the worker stops (its batch goes back to the queue) and the execution is left to a daemon. */
async function interrupted(
  ctx: AdminContext,
  executionId: number,
  io: AdminIo,
  stop: () => Promise<void>,
): Promise<number> {
  await stop();
  const execution = await ctx.migrations.execution(executionId);
  const state = execution === undefined ? "gone" : `${execution.status} (${progressText(execution)})`;
  io.err(
    `${PROGRAM}: interrupted: execution ${executionId} is ${state}; a daemon's migration worker (MIGRATIONS_WORKER=true) will finish it`,
  );
  return INTERRUPTED_EXIT_CODE;
}

/** The message of the execution's latest error log entry. */
async function failureOf(ctx: AdminContext, executionId: number): Promise<string> {
  const [error] = await ctx.migrations.logs(executionId, {
    types: ["error"],
    limit: 1,
    offset: 0,
    order: "DESC",
    orderBy: "id",
  });
  return error?.message ?? "no error was logged";
}

async function automaticRollbackOf(ctx: AdminContext, failed: ExecutionRecord) {
  const executions = await ctx.migrations.executions(failed.migrationId);
  return executions.find((execution) => execution.parentExecutionId === failed.id);
}

function rangeText(range: Pick<ScheduleResult, "fromBatch" | "toBatch" | "batchSize">): string {
  return `batches ${range.fromBatch}-${range.toBatch}, batch size ${range.batchSize}`;
}

function progressText(execution: ExecutionRecord): string {
  return `${execution.itemsProcessed}/${execution.itemsTotal} items`;
}

/** `execution 3 (normalize-user-emails up) completed: 3/3 items` */
function resultText(execution: ExecutionRecord): string {
  const what = `${execution.migrationId} ${execution.operation}`;
  return `execution ${execution.id} (${what}) ${execution.status}: ${progressText(execution)}`;
}
