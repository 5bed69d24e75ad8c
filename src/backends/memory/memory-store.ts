import type { CounterIncrement, CounterStore, HealthListener } from "../counter-store.js";

/** Options of the in-process store. */
export interface MemoryStoreOptions {
  /** Milliseconds since the epoch; injectable for tests. */
  readonly nowMs?: () => number;
  /** How often expired counters are swept, in ms (default 1000). */
  readonly sweepIntervalMs?: number;
  /** Most counters examined per sweep tick, so one tick never stalls the event loop (default 20000). */
  readonly sweepBatch?: number;
}

interface Entry {
  value: number;
  expiresAtMs: number;
}

/**
 * `BACKEND_TYPE=memory`: counters in this process, with Redis semantics (INCRBY, and EXPIRE refreshed on
 * every hit). Node runs one request's increments without interleaving, so concurrent requests never lose
 * a hit. Expired counters are ignored on access and swept incrementally in the background. Counters are
 * per process: several replicas do not share them.
 */
export class MemoryStore implements CounterStore {
  readonly name = "memory";
  readonly #counters = new Map<string, Entry>();
  readonly #nowMs: () => number;
  readonly #sweepIntervalMs: number;
  readonly #sweepBatch: number;
  #sweep: IterableIterator<[string, Entry]> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryStoreOptions = {}) {
    this.#nowMs = options.nowMs ?? Date.now;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 1000;
    this.#sweepBatch = options.sweepBatch ?? 20_000;
  }

  /** Number of counters held, expired ones included until swept. */
  get size(): number {
    return this.#counters.size;
  }

  increment(increments: readonly CounterIncrement[]): number[] {
    const now = this.#nowMs();
    return increments.map(({ key, hits, ttlSeconds }) => {
      let entry = this.#counters.get(key);
      if (entry === undefined || entry.expiresAtMs <= now) {
        entry = { value: 0, expiresAtMs: 0 };
        this.#counters.set(key, entry);
      }
      entry.value += hits;
      entry.expiresAtMs = now + ttlSeconds * 1000;
      return entry.value;
    });
  }

  read(increments: readonly CounterIncrement[]): number[] {
    const now = this.#nowMs();
    return increments.map(({ key }) => {
      const entry = this.#counters.get(key);
      return entry === undefined || entry.expiresAtMs <= now ? 0 : entry.value;
    });
  }

  /** Seconds the counter has left (as Redis `TTL`): -2 when absent or expired. */
  ttlSecondsOf(key: string): number {
    const entry = this.#counters.get(key);
    const left = entry === undefined ? 0 : entry.expiresAtMs - this.#nowMs();
    return left > 0 ? Math.ceil(left / 1000) : -2;
  }

  start(): Promise<void> {
    this.#timer = setInterval(() => this.sweepExpired(), this.#sweepIntervalMs);
    this.#timer.unref();
    return Promise.resolve();
  }

  onHealthChange(listener: HealthListener): void {
    listener(true);
  }

  close(): Promise<void> {
    clearInterval(this.#timer);
    return Promise.resolve();
  }

  /** Examines up to `sweepBatch` counters, continuing where the previous tick stopped. */
  sweepExpired(): void {
    const now = this.#nowMs();
    this.#sweep ??= this.#counters.entries();
    for (let i = 0; i < this.#sweepBatch; i++) {
      const next = this.#sweep.next();
      if (next.done) {
        this.#sweep = undefined;
        return;
      }
      const [key, entry] = next.value;
      if (entry.expiresAtMs <= now) this.#counters.delete(key);
    }
  }
}
