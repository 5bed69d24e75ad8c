// What every part of the migrations API cases shares: one daemon under test, a client as the admin, and the
// assertion on the error body all of the API's failures use (docs/migrations-api.md).
import type { Test } from "tap";
import type { SqlDatabase } from "../../../src/database/sql-database.js";
import { migrationsClient } from "./migrations-harness.js";

/** A UTC timestamp as the API writes it: whole seconds, `+00:00`. */
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/;

/** The migrations API's error body: a stable `code`, `success: false`, and the message shown to users. */
export interface ErrorBody {
  code: string;
  success: boolean;
  message: string;
}

/** One daemon under test, as the case modules see it. */
export interface MigrationsApiContext {
  /** The daemon's HTTP port, for clients with other credentials than the admin's. */
  readonly port: number;
  /** A second connection to the daemon's database. */
  readonly db: SqlDatabase;
  /** A client authenticated as the admin. */
  readonly api: ReturnType<typeof migrationsClient>;
  /** The error body for a code and message. */
  readonly error: (code: string, message: string) => ErrorBody;
  /** Asserts `reply` is a `migrations_error` with this HTTP status and message. */
  readonly expectError: (
    t: Test,
    reply: { status: number; json: unknown },
    status: number,
    message: string,
  ) => void;
}

/** The context of the daemon listening on `port`, whose database `db` also opens. */
export function migrationsApiContext(port: number, db: SqlDatabase): MigrationsApiContext {
  const error = (code: string, message: string) => ({ code, success: false, message });
  const expectError = (
    t: Test,
    reply: { status: number; json: unknown },
    status: number,
    message: string,
  ) => {
    t.equal(reply.status, status, message);
    t.strictSame(reply.json, error("migrations_error", message));
  };
  return { port, db, api: migrationsClient(port), error, expectError };
}
