import type { FixedOperation } from "../../engine/algorithms/counter-operation.js";
import type { Counter } from "../../engine/rule-set.js";
import { messageOf } from "../../errors.js";
import type { StoreThrottledLog } from "../store-context.js";
import type { MemcachedConnection } from "./memcached-connection.js";
import { exptimeFor } from "./memcached-key.js";

/**
 * `ratelimit.memcache.*` (docs/backends.md "Memcached"), counted as the reference's stats-collecting client
 * counts them.
 */
export interface MemcacheStats {
  readonly multigetSuccess: Counter;
  readonly multigetError: Counter;
  readonly incrementSuccess: Counter;
  readonly incrementMiss: Counter;
  readonly incrementError: Counter;
  readonly addSuccess: Counter;
  readonly addError: Counter;
  readonly addNotStored: Counter;
  readonly keysRequested: Counter;
  readonly keysFound: Counter;
}

/** Increments waiting for memcached at once; beyond, new ones are dropped (and counted as errors). */
const MAX_PENDING = 10_000;

/**
 * The reference's asynchronous counting (`increaseAsync`): `increment key hits`; when the key is missing,
 * `add key hits` with the TTL; when that add loses a race with another replica's, `increment` again.
 * Failures are logged and counted, never reported to a request (the answer was already given).
 */
export class BackgroundIncrements {
  readonly #stats: MemcacheStats;
  readonly #errors: StoreThrottledLog;
  readonly #nowMs: () => number;
  readonly #pending = new Set<Promise<void>>();
  /** Keys that were absent when read, with the work creating them. */
  readonly #creating = new Map<string, Promise<void>>();

  constructor(stats: MemcacheStats, errors: StoreThrottledLog, nowMs: () => number) {
    this.#stats = stats;
    this.#errors = errors;
    this.#nowMs = nowMs;
  }

  /** Increments in flight. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Starts counting one increment on `connection` (undefined: no node); its first command is written
   * before this returns. `absentAtRead` marks a key this replica is about to create.
   */
  start(increment: FixedOperation, connection: MemcachedConnection | undefined, absentAtRead: boolean): void {
    if (this.#pending.size >= MAX_PENDING) {
      this.#stats.incrementError.add(1);
      this.#errors.error(
        "memcache increment",
        () => `Failed to increment key ${increment.key}: ${MAX_PENDING} increments already in flight`,
      );
      return;
    }
    const work = this.#count(increment, connection);
    this.#pending.add(work);
    void work.then(() => this.#pending.delete(work));
    if (!absentAtRead) return;
    const previous = this.#creating.get(increment.key);
    const gate = previous === undefined ? work : Promise.all([previous, work]).then(() => {});
    this.#creating.set(increment.key, gate);
    void gate.then(() => {
      if (this.#creating.get(increment.key) === gate) this.#creating.delete(increment.key);
    });
  }

  /**
   * Resolves once this replica has finished creating any of `keys`, or undefined when none is being
   * created. A read waiting for it sees the created counter rather than a key about to appear.
   */
  creationOf(keys: readonly string[]): Promise<unknown> | undefined {
    if (this.#creating.size === 0) return undefined;
    const waits: Promise<void>[] = [];
    for (const key of keys) {
      const gate = this.#creating.get(key);
      if (gate !== undefined) waits.push(gate);
    }
    return waits.length === 0 ? undefined : Promise.all(waits);
  }

  /** Resolves once every increment started so far (and any started meanwhile) has been answered. */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  async #count({ key, hits, ttlSeconds }: FixedOperation, connection: MemcachedConnection | undefined) {
    if (connection === undefined) {
      this.#stats.incrementError.add(1);
      this.#errors.error(
        "memcache increment",
        () => `Failed to increment key ${key}: memcache: no servers configured or available`,
      );
      return;
    }
    let step: "increment" | "add" | "increment after add" = "increment";
    try {
      if (await this.#increment(connection, key, hits)) return;
      step = "add";
      if (await this.#add(connection, key, hits, ttlSeconds)) return;
      // Another replica added the key between our increment and our add: it exists now.
      step = "increment after add";
      if (!(await this.#increment(connection, key, hits))) throw new Error("memcache: cache miss");
    } catch (error) {
      const text =
        step === "add"
          ? `Failed to add key ${key}: ${messageOf(error)}`
          : step === "increment"
            ? `Failed to increment key ${key}: ${messageOf(error)}`
            : `Failed to increment key ${key} after failing to add: ${messageOf(error)}`;
      this.#errors.error(`memcache ${step}`, () => text);
    }
  }

  async #increment(connection: MemcachedConnection, key: string, hits: number): Promise<boolean> {
    try {
      const found = await connection.increment(key, hits);
      (found ? this.#stats.incrementSuccess : this.#stats.incrementMiss).add(1);
      return found;
    } catch (error) {
      this.#stats.incrementError.add(1);
      throw error;
    }
  }

  async #add(
    connection: MemcachedConnection,
    key: string,
    hits: number,
    ttlSeconds: number,
  ): Promise<boolean> {
    try {
      const exptime = exptimeFor(ttlSeconds, this.#nowMs() / 1000);
      const stored = await connection.add(key, String(hits), exptime);
      (stored ? this.#stats.addSuccess : this.#stats.addNotStored).add(1);
      return stored;
    } catch (error) {
      this.#stats.addError.add(1);
      throw error;
    }
  }
}
