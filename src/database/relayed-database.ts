import type { MessagePort } from "node:worker_threads";
import { DatabaseError, messageOf } from "../errors.js";
import type { SqlDatabase, SqlExecutor, SqlResult, SqlValue } from "./sql-database.js";

/**
 * A statement for the thread that owns the database (docs/workers.md): worker threads send these over a
 * MessagePort, and {@link serveRelayedDatabase} answers each with one {@link RelayReply} of the same id.
 * `tx` names a transaction opened by `begin`.
 */
export type RelayRequest =
  | {
      readonly id: number;
      readonly op: "query";
      readonly sql: string;
      readonly params: readonly SqlValue[];
      readonly tx: number;
    }
  | { readonly id: number; readonly op: "exec"; readonly script: string; readonly tx: number }
  | { readonly id: number; readonly op: "begin" }
  | { readonly id: number; readonly op: "commit" | "rollback"; readonly tx: number };

/** The owner's answer; `tx` is the transaction `begin` opened. */
export type RelayReply =
  | {
      readonly id: number;
      readonly ok: true;
      readonly rows: unknown[];
      readonly rowCount: number;
      readonly tx: number;
    }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly uniqueViolation: boolean };

/** No transaction. */
const NONE = 0;

/**
 * The users/migrations database as a worker thread sees it: every statement runs on the owning thread's
 * one connection (pool), so SQLite is written by one connection only and transactions keep their
 * meaning. Failures come back as {@link DatabaseError}s with the owner's message.
 */
export class RelayedDatabase implements SqlDatabase {
  readonly #port: MessagePort;
  readonly #pending = new Map<number, (reply: RelayReply) => void>();
  #nextId = 1;
  #closed = false;

  constructor(
    readonly dialect: "sqlite" | "postgres",
    port: MessagePort,
  ) {
    this.#port = port;
    port.on("message", (reply: RelayReply) => {
      const resolve = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      resolve?.(reply);
    });
  }

  async query<Row>(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult<Row>> {
    const reply = await this.#send({ id: 0, op: "query", sql, params, tx: NONE });
    return { rows: reply.rows as Row[], rowCount: reply.rowCount };
  }

  async exec(script: string): Promise<void> {
    await this.#send({ id: 0, op: "exec", script, tx: NONE });
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const { tx } = await this.#send({ id: 0, op: "begin" });
    const executor: SqlExecutor = {
      query: async <Row>(sql: string, params: readonly SqlValue[] = []) => {
        const reply = await this.#send({ id: 0, op: "query", sql, params, tx });
        return { rows: reply.rows as Row[], rowCount: reply.rowCount };
      },
      exec: async (script) => void (await this.#send({ id: 0, op: "exec", script, tx })),
    };
    let result: T;
    try {
      result = await work(executor);
    } catch (error) {
      await this.#send({ id: 0, op: "rollback", tx }).catch(() => undefined);
      throw error;
    }
    await this.#send({ id: 0, op: "commit", tx });
    return result;
  }

  /** Stops relaying; statements still waiting fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const [id, resolve] of this.#pending) {
      resolve({ id, ok: false, message: "the database relay closed", uniqueViolation: false });
    }
    this.#pending.clear();
    this.#port.close();
  }

  #send(request: RelayRequest): Promise<Extract<RelayReply, { ok: true }>> {
    if (this.#closed) return Promise.reject(new DatabaseError("the database relay closed"));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (reply) =>
        reply.ok
          ? resolve(reply)
          : reject(new DatabaseError(reply.message, { uniqueViolation: reply.uniqueViolation })),
      );
      this.#port.postMessage({ ...request, id });
    });
  }
}

/** A transaction a worker holds open on the owner's connection. */
interface OpenTransaction {
  readonly executor: SqlExecutor;
  readonly end: (commit: boolean) => void;
  readonly done: Promise<void>;
}

/**
 * The owner's side of {@link RelayedDatabase}: runs what arrives on `port` against `database`. A
 * transaction stays open until its worker commits or rolls back; when the port closes (the worker ended),
 * the transactions it left open are rolled back, so the write lock is never kept by a thread that is gone.
 */
export function serveRelayedDatabase(database: SqlDatabase, port: MessagePort): void {
  const open = new Map<number, OpenTransaction>();
  let nextTx = 1;
  const reply = (message: RelayReply) => port.postMessage(message);
  const fail = (id: number, error: unknown) =>
    reply({
      id,
      ok: false,
      message: messageOf(error),
      uniqueViolation: error instanceof DatabaseError && error.uniqueViolation,
    });
  const executorOf = (tx: number): SqlExecutor => {
    if (tx === NONE) return database;
    const found = open.get(tx);
    if (found === undefined) throw new DatabaseError(`no open transaction ${tx}`);
    return found.executor;
  };
  const begin = (id: number) => {
    const tx = nextTx++;
    let end!: (commit: boolean) => void;
    const ended = new Promise<boolean>((resolve) => (end = resolve));
    let begun = false;
    const done: Promise<void> = database
      .transaction(async (executor) => {
        begun = true;
        open.set(tx, { executor, end, done });
        reply({ id, ok: true, rows: [], rowCount: 0, tx });
        if (!(await ended)) throw ROLLED_BACK;
      })
      .finally(() => open.delete(tx));
    // A transaction that could not begin answers the `begin` with its error.
    done.catch((error: unknown) => {
      if (!begun) fail(id, error);
    });
  };
  const finish = async (id: number, tx: number, commit: boolean) => {
    const found = open.get(tx);
    if (found === undefined) return fail(id, new DatabaseError(`no open transaction ${tx}`));
    found.end(commit);
    try {
      await found.done;
      reply({ id, ok: true, rows: [], rowCount: 0, tx });
    } catch (error) {
      if (error === ROLLED_BACK) reply({ id, ok: true, rows: [], rowCount: 0, tx });
      else fail(id, error);
    }
  };
  port.on("message", (request: RelayRequest) => {
    const { id } = request;
    switch (request.op) {
      case "begin":
        return begin(id);
      case "commit":
      case "rollback":
        return void finish(id, request.tx, request.op === "commit");
      case "query":
        return void run(id, () => executorOf(request.tx).query(request.sql, request.params));
      case "exec":
        return void run(id, async () => {
          await executorOf(request.tx).exec(request.script);
          return { rows: [], rowCount: 0 };
        });
    }
  });
  const run = async (id: number, work: () => Promise<SqlResult<unknown>>) => {
    try {
      const result = await work();
      reply({ id, ok: true, rows: result.rows, rowCount: result.rowCount, tx: NONE });
    } catch (error) {
      fail(id, error);
    }
  };
  port.on("close", () => {
    for (const transaction of open.values()) transaction.end(false);
  });
}

const ROLLED_BACK = new Error("rolled back by the worker thread");
