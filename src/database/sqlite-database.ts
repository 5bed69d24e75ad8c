import { Worker } from "node:worker_threads";
import { DatabaseError } from "../errors.js";
import { workerEntry } from "../worker-entry.js";
import type { SqlDatabase, SqlExecutor, SqlResult, SqlValue } from "./sql-database.js";
import type { SqliteReply, SqliteRequest, SqliteWorkerData } from "./sqlite-protocol.js";

/** Options of {@link SqliteDatabase.open}. */
export interface SqliteDatabaseOptions {
  /** Database file (its directory is created), or `:memory:`. */
  readonly path: string;
  /** How long a statement waits for another process's write lock before failing. Default 5000. */
  readonly busyTimeoutMs?: number;
}

type Pending = { resolve: (reply: SqliteReply) => void };

const UNIQUE_CODES = new Set(["SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"]);

/**
 * SQLite through better-sqlite3 in a worker thread (WAL, synchronous=FULL): statements and commits never
 * block the event loop that serves rate-limit decisions. Statements are pipelined to the worker; a
 * transaction holds the connection, and other work waits until it ends.
 */
export class SqliteDatabase implements SqlDatabase {
  readonly dialect = "sqlite";
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #failure: DatabaseError | undefined;
  /** Resolves when the last transaction queued so far has ended. */
  #transactions: Promise<void> = Promise.resolve();

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on("message", (reply: SqliteReply) => {
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      pending?.resolve(reply);
    });
    const fail = (error: unknown) => {
      this.#failure ??= new DatabaseError("the SQLite worker stopped", { cause: error });
      for (const [id, pending] of this.#pending) {
        pending.resolve({ id, ok: false, message: this.#failure.message, code: "" });
      }
      this.#pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", fail);
  }

  /** Opens (creating if needed) the database; rejects with a {@link DatabaseError} naming the file. */
  static async open(options: SqliteDatabaseOptions): Promise<SqliteDatabase> {
    const workerData: SqliteWorkerData = { path: options.path, busyTimeoutMs: options.busyTimeoutMs ?? 5000 };
    const worker = new Worker(workerEntry("sqlite-worker", import.meta.url), { workerData });
    const opened = await new Promise<SqliteReply>((resolve) => {
      worker.once("message", resolve);
      worker.once("error", (error) => resolve({ id: 0, ok: false, message: error.message, code: "" }));
    });
    if (!opened.ok) {
      await worker.terminate();
      throw new DatabaseError(`cannot open SQLite database ${options.path}: ${opened.message}`);
    }
    return new SqliteDatabase(worker);
  }

  async query<Row>(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult<Row>> {
    await this.#transactions;
    return this.#query<Row>(sql, params);
  }

  async exec(script: string): Promise<void> {
    await this.#transactions;
    await this.#send({ id: 0, op: "exec", script });
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    // Queue behind every transaction before this one (set synchronously, so none can slip in between).
    const before = this.#transactions;
    let ended!: () => void;
    this.#transactions = new Promise((resolve) => (ended = resolve));
    await before;
    const tx: SqlExecutor = {
      query: (sql, params = []) => this.#query(sql, params),
      exec: async (script) => void (await this.#send({ id: 0, op: "exec", script })),
    };
    try {
      await this.#query("BEGIN IMMEDIATE", []);
      try {
        const result = await work(tx);
        await this.#query("COMMIT", []);
        return result;
      } catch (error) {
        // The transaction may already be gone (a failed COMMIT rolls back by itself): nothing to undo then.
        await this.#query("ROLLBACK", []).catch(() => undefined);
        throw error;
      }
    } finally {
      ended();
    }
  }

  async close(): Promise<void> {
    await this.#transactions;
    if (this.#failure === undefined) await this.#send({ id: 0, op: "close" }).catch(() => undefined);
    await this.#worker.terminate();
  }

  async #query<Row>(sql: string, params: readonly SqlValue[]): Promise<SqlResult<Row>> {
    const reply = await this.#send({ id: 0, op: "query", sql, params });
    return { rows: reply.rows as Row[], rowCount: reply.rowCount };
  }

  #send(request: SqliteRequest): Promise<Extract<SqliteReply, { ok: true }>> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, {
        resolve: (reply) =>
          reply.ok
            ? resolve(reply)
            : reject(
                new DatabaseError(`SQLite: ${reply.message}`, {
                  cause: reply,
                  uniqueViolation: UNIQUE_CODES.has(reply.code),
                }),
              ),
      });
      this.#worker.postMessage({ ...request, id });
    });
  }
}
