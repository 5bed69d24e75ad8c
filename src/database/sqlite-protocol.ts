import type { SqlValue } from "./sql-database.js";

/** What {@link SqliteDatabase} passes to its worker at start. */
export interface SqliteWorkerData {
  readonly path: string;
  readonly busyTimeoutMs: number;
}

/** A message to the SQLite worker; answered by one {@link SqliteReply} with the same id. */
export type SqliteRequest =
  | { readonly id: number; readonly op: "query"; readonly sql: string; readonly params: readonly SqlValue[] }
  | { readonly id: number; readonly op: "exec"; readonly script: string }
  | { readonly id: number; readonly op: "close" };

/** The worker's answer. Id 0 is the answer to opening the database. */
export type SqliteReply =
  | { readonly id: number; readonly ok: true; readonly rows: unknown[]; readonly rowCount: number }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly code: string };
