/**
 * Worker-thread side of {@link SqliteDatabase}: owns the better-sqlite3 connection, whose calls are
 * synchronous (and fsync on commit), so that they never run on the daemon's event loop.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import Sqlite from "better-sqlite3";
import type { SqliteReply, SqliteRequest, SqliteWorkerData } from "./sqlite-protocol.js";

const MAX_CACHED_STATEMENTS = 256;

const port = parentPort;
if (port === null) throw new Error("sqlite-worker.js must run in a worker thread");
const { path, busyTimeoutMs } = workerData as SqliteWorkerData;

let db: Sqlite.Database;
try {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  db = new Sqlite(path, { timeout: busyTimeoutMs });
  if (path !== ":memory:") db.pragma("journal_mode = WAL");
  // FULL: a commit is on disk before it is acknowledged (an acknowledged write survives a power cut too).
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  port.postMessage({ id: 0, ok: true, rows: [], rowCount: 0 } satisfies SqliteReply);
} catch (error) {
  port.postMessage(failure(0, error));
  process.exit(0);
}

const statements = new Map<string, Sqlite.Statement>();

function prepared(sql: string): Sqlite.Statement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    if (statements.size >= MAX_CACHED_STATEMENTS) statements.clear();
    statements.set(sql, statement);
  }
  return statement;
}

function run(request: SqliteRequest): SqliteReply {
  switch (request.op) {
    case "exec":
      db.exec(request.script);
      return { id: request.id, ok: true, rows: [], rowCount: 0 };
    case "query": {
      const statement = prepared(request.sql);
      // `$1`, `$2`… are named parameters to SQLite: bind them by their numbers.
      const named = Object.fromEntries(request.params.map((value, index) => [String(index + 1), value]));
      const args = request.params.length > 0 ? [named] : [];
      if (statement.reader) {
        const rows = statement.all(...args) as unknown[];
        return { id: request.id, ok: true, rows, rowCount: rows.length };
      }
      const info = statement.run(...args);
      return { id: request.id, ok: true, rows: [], rowCount: info.changes };
    }
    case "close":
      db.close();
      return { id: request.id, ok: true, rows: [], rowCount: 0 };
  }
}

function failure(id: number, error: unknown): SqliteReply {
  const { message, code } = error as { message?: string; code?: unknown };
  return { id, ok: false, message: message ?? String(error), code: typeof code === "string" ? code : "" };
}

port.on("message", (request: SqliteRequest) => {
  let reply: SqliteReply;
  try {
    reply = run(request);
  } catch (error) {
    reply = failure(request.id, error);
  }
  port.postMessage(reply);
  if (request.op === "close") port.close();
});
