import { messageOf } from "../../errors.js";
import {
  changeCapability,
  createAppPassword,
  listAppPasswords,
  listCapabilities,
  revokeAppPassword,
} from "./account-actions.js";
import type { AdminCommand } from "./admin-command.js";
import type { AdminContext, OpenAdminContext } from "./admin-context.js";
import { PROGRAM } from "./admin-help.js";
import type { AdminIo } from "./admin-io.js";
import { listExecutions, listLogs, listMigrations } from "./migration-queries.js";
import { runMigration } from "./run-migration.js";

/** True for the commands that stop gracefully on Ctrl-C (`signal`); the others just end. */
export function handlesInterrupts(command: AdminCommand): boolean {
  return command.name === "migrations run" && command.wait;
}

/**
 * Runs one parsed command against the database `open` opens and returns the exit code: 0 done,
 * 1 failed or refused (the reason on stderr: an unknown e-mail, the migration service's 404/400/409
 * messages, an unreachable database), 130 interrupted.
 */
export async function runAdminCommand(
  command: AdminCommand,
  open: OpenAdminContext,
  io: AdminIo,
  signal: AbortSignal,
): Promise<number> {
  let ctx: AdminContext | undefined;
  try {
    ctx = await open({ operatorMigrations: command.name.startsWith("migrations ") });
    return await dispatch(ctx, command, io, signal);
  } catch (error) {
    // Refusals, an unreachable database and a bad MIGRATIONS_DIR module all say what is wrong.
    io.err(`${PROGRAM}: ${messageOf(error)}`);
    return 1;
  } finally {
    await ctx?.close();
  }
}

function dispatch(
  ctx: AdminContext,
  command: AdminCommand,
  io: AdminIo,
  signal: AbortSignal,
): Promise<number> {
  switch (command.name) {
    case "capability grant":
    case "capability revoke":
      return changeCapability(ctx, command, io);
    case "capability list":
      return listCapabilities(ctx, command, io);
    case "app-password create":
      return createAppPassword(ctx, command, io);
    case "app-password list":
      return listAppPasswords(ctx, command, io);
    case "app-password revoke":
      return revokeAppPassword(ctx, command, io);
    case "migrations list":
      return listMigrations(ctx, command, io);
    case "migrations run":
      return runMigration(ctx, command, io, signal);
    case "migrations executions":
      return listExecutions(ctx, command, io);
    case "migrations logs":
      return listLogs(ctx, command, io);
  }
}
