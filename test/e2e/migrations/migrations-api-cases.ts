// The migrations API's routes, statuses, bodies and scheduler behaviour (docs/migrations-api.md), run in
// order against a fresh daemon on each database.
import type { Test } from "tap";
import type { SqlDatabase } from "../../../src/database/sql-database.js";
import { authenticationCases } from "./migrations-api-auth-cases.js";
import { builtinMigrationCases } from "./migrations-api-builtin-cases.js";
import { migrationsApiContext } from "./migrations-api-context.js";
import { executionCases, scheduledRunCases } from "./migrations-api-execution-cases.js";
import { listingCases, routeCases } from "./migrations-api-listing-cases.js";
import { logCases } from "./migrations-api-log-cases.js";

/** Runs every case, in order; `db` is a second connection to the daemon's database. */
export function migrationsApiCases(t: Test, port: number, db: SqlDatabase): void {
  const context = migrationsApiContext(port, db);
  // The cases share one daemon and its state, so the order is part of them: the listing expects every
  // migration pending, the logs and later executions build on the first three-items run, and the routes
  // case schedules runs of its own, so it comes last.
  authenticationCases(t, context);
  listingCases(t, context);
  const threeItems = scheduledRunCases(t, context);
  logCases(t, context, threeItems);
  executionCases(t, context);
  builtinMigrationCases(t, context);
  routeCases(t, context);
}
