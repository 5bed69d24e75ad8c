import { executionJson, logJson, migrationJson } from "../../migrations/api/migrations-json.js";
import { isoWithOffset } from "../../migrations/migration-records.js";
import type { AdminCommand } from "./admin-command.js";
import type { AdminContext } from "./admin-context.js";
import type { AdminIo } from "./admin-io.js";
import { orDash, textTable } from "./text-table.js";

type Command<Name extends AdminCommand["name"]> = Extract<AdminCommand, { name: Name }>;

const yesNo = (value: boolean) => (value ? "yes" : "no");

/** `migrations list`: the REST list's fields; the descriptions only in `--json`. */
export async function listMigrations(
  ctx: AdminContext,
  command: Command<"migrations list">,
  io: AdminIo,
): Promise<number> {
  const migrations = await ctx.migrations.list(command.tags);
  if (command.json) io.out(JSON.stringify(migrations.map(migrationJson), null, 2));
  else if (migrations.length === 0) io.out("No migrations.");
  else {
    const rows = migrations.map((m) => [
      m.id,
      m.status,
      String(m.totalBatches),
      yesNo(m.canRun),
      yesNo(m.isApplicable),
      m.tags.join(","),
      m.label,
    ]);
    const headers = ["id", "status", "batches", "can run", "applicable", "tags", "label"];
    for (const line of textTable(headers, rows)) io.out(line);
  }
  return 0;
}

/** `migrations executions`: oldest first, with progress and batch range. */
export async function listExecutions(
  ctx: AdminContext,
  command: Command<"migrations executions">,
  io: AdminIo,
): Promise<number> {
  const executions = await ctx.migrations.executions(command.migrationId);
  if (command.json) io.out(JSON.stringify(executions.map(executionJson), null, 2));
  else if (executions.length === 0) io.out(`No executions of ${command.migrationId}.`);
  else {
    const rows = executions.map((e) => [
      String(e.id),
      e.operation,
      e.status,
      `${e.itemsProcessed}/${e.itemsTotal}`,
      `${e.fromBatch}-${e.toBatch}`,
      String(e.batchSize),
      orDash(e.parentExecutionId),
      isoWithOffset(e.createdAtMs),
      e.startMs === null ? "-" : isoWithOffset(e.startMs),
      e.endMs === null ? "-" : isoWithOffset(e.endMs),
    ]);
    const headers = [
      "id",
      "operation",
      "status",
      "items",
      "batches",
      "size",
      "parent",
      "created",
      "started",
      "ended",
    ];
    for (const line of textTable(headers, rows)) io.out(line);
  }
  return 0;
}

/** `migrations logs`: the REST route's filters, newest first by default. */
export async function listLogs(
  ctx: AdminContext,
  command: Command<"migrations logs">,
  io: AdminIo,
): Promise<number> {
  const logs = await ctx.migrations.logs(command.executionId, command.query);
  if (command.json) io.out(JSON.stringify(logs.map(logJson), null, 2));
  else if (logs.length === 0) io.out(`No log entries of execution ${command.executionId} match.`);
  else {
    const rows = logs.map((l) => [
      String(l.id),
      isoWithOffset(l.createdAtMs),
      l.type,
      l.message,
      Object.keys(l.data).length === 0 ? "" : JSON.stringify(l.data),
    ]);
    for (const line of textTable(["id", "created", "type", "message", "data"], rows)) io.out(line);
  }
  return 0;
}
