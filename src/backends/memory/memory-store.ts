import {
  type BucketOperation,
  type CounterOperation,
  type FixedOperation,
  type ReserveOperation,
  type SlidingOperation,
  unknownOperation,
} from "../../engine/algorithms/counter-operation.js";
import { gcraStep } from "../../engine/algorithms/gcra-step.js";
import { LIMIT_ALGORITHMS } from "../../engine/algorithms/registry.js";
import {
  emptyHoldBook,
  type HoldBook,
  reservationRead,
  reservationStep,
} from "../../engine/algorithms/reservation-step.js";
import type {
  CounterIncrement,
  CounterStore,
  HealthListener,
  StoreSpanDescription,
} from "../../engine/counter-store.js";
import type { StoreLog } from "../store-context.js";

/** Where the store reports evictions: a counter (`ratelimit.memory.evictions`) and warn lines. */
export interface MemoryStoreReports {
  readonly evictions: { add(amount: number): void };
  readonly log: Pick<StoreLog, "warn">;
}

/** Options of the in-process store. */
export interface MemoryStoreOptions {
  /** Milliseconds since the epoch; injectable for tests. */
  readonly nowMs?: () => number;
  /** How often expired counters are swept, in ms (default 1000). */
  readonly sweepIntervalMs?: number;
  /** Most counters examined per sweep tick, so one tick never stalls the event loop (default 20000). */
  readonly sweepBatch?: number;
  /**
   * Most bytes the counters may take, as {@link memoryEntryBytes} counts them (MEMORY_MAX_BYTES, default
   * 256 MiB); beyond it the least recently used counters are evicted.
   */
  readonly maxBytes?: number;
  /** Receives evictions; nothing is reported when absent. */
  readonly reports?: MemoryStoreReports;
}

/** The default byte budget (MEMORY_MAX_BYTES). */
export const DEFAULT_MEMORY_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Heap bytes one counter takes beyond its key's characters: the Map slot, the entry object, the number
 * boxes and the key's string headers. Measured on Node 20 (x64) at 210–245 bytes; the upper end is used.
 */
export const MEMORY_ENTRY_OVERHEAD_BYTES = 248;

/**
 * Heap bytes one reservation hold takes beyond its id's characters: its Map slot, the hold object and its
 * numbers, the id string's header (the same measure as {@link MEMORY_ENTRY_OVERHEAD_BYTES}, rounded up).
 */
export const MEMORY_HOLD_OVERHEAD_BYTES = 160;

/** Touching a counter moves it to the recent end at most this often, so hot keys cost one lookup. */
const TOUCH_GRANULARITY_MS = 1000;
/** Shortest gap between two eviction warnings. */
const EVICTION_LOG_INTERVAL_MS = 60_000;

interface Entry {
  /** A window's count; for a token bucket, the whole microseconds of its theoretical arrival time. */
  value: number;
  /** Token bucket only: the TAT's fraction of a microsecond, in [0, 1). */
  fractionUs: number;
  /** A reservation's record (its count and holds); absent for the other kinds. */
  book?: HoldBook | undefined;
  expiresAtMs: number;
  /** When the entry last moved to the recent end of the map. */
  touchedAtMs: number;
  /** What it counts against the budget; a reservation's record adds its holds'. */
  bytes: number;
}

/**
 * The bytes a counter named `key` counts against the budget: its characters (V8 keeps a string one byte per
 * character when every character is below U+0100, else two) plus {@link MEMORY_ENTRY_OVERHEAD_BYTES}.
 */
export function memoryEntryBytes(key: string): number {
  const perCharacter = /[\u0100-\uffff]/.test(key) ? 2 : 1;
  return MEMORY_ENTRY_OVERHEAD_BYTES + key.length * perCharacter;
}

/**
 * `BACKEND_TYPE=memory`: counters in this process, with Redis semantics (INCRBY, and EXPIRE refreshed on
 * every hit). Node runs one request's increments without interleaving, so concurrent requests never lose
 * a hit. Expired counters are ignored on access and swept incrementally in the background. Counters are
 * per process: several replicas do not share them.
 *
 * Memory is bounded by `maxBytes`: the map is kept in least-recently-used order (to the second), and a new
 * counter that would go beyond the budget first evicts the least recently used ones — counters of finished
 * windows, idle clients — as Redis does under `maxmemory-policy allkeys-lru`. An evicted counter is
 * forgotten: its next hit starts its window from 0. Evictions are counted and warned about (at most a line
 * a minute, with the count since the previous line).
 */
export class MemoryStore implements CounterStore {
  readonly name = "memory";
  readonly capabilities = {
    readsWithoutCounting: true,
    reservations: true,
    // Every algorithm: it runs every kind of operation (the switches below).
    algorithms: LIMIT_ALGORITHMS,
    remote: false,
  };
  readonly #counters = new Map<string, Entry>();
  readonly #nowMs: () => number;
  readonly #sweepIntervalMs: number;
  readonly #sweepBatch: number;
  readonly #maxBytes: number;
  readonly #reports: MemoryStoreReports | undefined;
  #bytes = 0;
  #evictedSinceLine = 0;
  #lastLineMs = Number.NEGATIVE_INFINITY;
  #sweep: IterableIterator<[string, Entry]> | undefined;
  /**
   * Where eviction goes on: at the least recently used counter. A Map keeps deleted slots until it is
   * rehashed, so a new iterator for each eviction would walk every slot evicted before it.
   */
  #evictCursor: IterableIterator<[string, Entry]> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryStoreOptions = {}) {
    this.#nowMs = options.nowMs ?? Date.now;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 1000;
    this.#sweepBatch = options.sweepBatch ?? 20_000;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MEMORY_MAX_BYTES;
    this.#reports = options.reports;
  }

  /** Number of counters held, expired ones included until swept. */
  get size(): number {
    return this.#counters.size;
  }

  /** Bytes the counters held count against the budget ({@link memoryEntryBytes} each). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The budget, in bytes. */
  get maxBytes(): number {
    return this.#maxBytes;
  }

  /** Every operation counted in order (see {@link #apply}), their values as one flat list. */
  increment(increments: readonly CounterIncrement[]): number[] {
    const now = this.#nowMs();
    const values: number[] = [];
    for (let i = 0; i < increments.length; i++) this.#apply(increments[i]!, now, values);
    return values;
  }

  /** Gives refused sliding-window hits back; a counter that expired meanwhile stays absent. */
  release(operations: readonly SlidingOperation[]): void {
    const now = this.#nowMs();
    for (const { key, hits } of operations) {
      const entry = this.#counters.get(key);
      if (entry !== undefined && entry.expiresAtMs > now) entry.value -= hits;
    }
  }

  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription {
    return { name: "Memory Increment Execution", attributes: { "keys length": increments.length } };
  }

  /** Every operation's current values in order (see {@link #read}); nothing is written. */
  read(increments: readonly CounterIncrement[]): number[] {
    const now = this.#nowMs();
    const values: number[] = [];
    for (const operation of increments) this.#read(operation, now, values);
    return values;
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
    // Evictions since the last warning are not lost from the log.
    if (this.#evictedSinceLine > 0) this.#warnEvictions(this.#nowMs());
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
      if (entry.expiresAtMs <= now) this.#delete(key, entry);
    }
  }

  /**
   * One operation counted, its values appended: fixed → INCRBY + EXPIRE → [count]; sliding → the same plus
   * the previous window's count; bucket → one GCRA step on this process's clock → [allowed, debt µs]
   * (src/engine/algorithms/gcra-step.ts, the arithmetic the Redis script runs).
   */
  #apply(operation: CounterOperation, now: number, values: number[]): void {
    switch (operation.kind) {
      case undefined:
      case "fixed":
        values.push(this.#count(operation, now));
        return;
      case "sliding":
        values.push(this.#count(operation, now), this.#valueOf(operation.previousKey, now));
        return;
      case "bucket":
        values.push(...this.#takeTokens(operation, now));
        return;
      case "reserve":
        values.push(...this.#reserve(operation, now));
        return;
      default:
        unknownOperation(operation);
    }
  }

  /** One operation's values without writing: fixed → [count], sliding → [count, previous], bucket → [1, debt µs]. */
  #read(operation: CounterOperation, now: number, values: number[]): void {
    switch (operation.kind) {
      case undefined:
      case "fixed":
        values.push(this.#valueOf(operation.key, now));
        return;
      case "sliding":
        values.push(this.#valueOf(operation.key, now), this.#valueOf(operation.previousKey, now));
        return;
      case "bucket":
        values.push(...this.#takeTokens({ ...operation, hits: 0 }, now));
        return;
      case "reserve": {
        const entry = this.#counters.get(operation.key);
        const live = entry !== undefined && entry.expiresAtMs > now ? entry.book : undefined;
        values.push(...reservationRead(live, operation, Math.floor(now)));
        return;
      }
      default:
        unknownOperation(operation);
    }
  }

  /** INCRBY + EXPIRE: a missing or expired counter starts from 0; the TTL is refreshed on every hit. */
  #count({ key, hits, ttlSeconds }: FixedOperation | SlidingOperation, now: number): number {
    const entry = this.#liveEntry(key, now);
    entry.value += hits;
    entry.expiresAtMs = now + ttlSeconds * 1000;
    return entry.value;
  }

  /** One GCRA step at `floor(now × 1000)` µs → [allowed (1|0), debt µs]; hits 0 reads without writing. */
  #takeTokens(operation: BucketOperation, now: number): [number, number] {
    const nowUs = Math.floor(now * 1000);
    const found = this.#counters.get(operation.key);
    const stored =
      found !== undefined && found.expiresAtMs > now
        ? { wholeUs: found.value, fractionUs: found.fractionUs }
        : undefined;
    const step = gcraStep(stored, nowUs, operation.hits, operation.emissionIntervalUs, operation.burst);
    if (step.tat !== undefined) {
      const entry = this.#liveEntry(operation.key, now);
      entry.value = step.tat.wholeUs;
      entry.fractionUs = step.tat.fractionUs;
      entry.expiresAtMs = nowUs / 1000 + step.ttlMs;
    }
    return [step.allowed ? 1 : 0, step.debtUs];
  }

  /**
   * One reservation step on this process's clock (src/engine/algorithms/reservation-step.ts): the record
   * lives until its window ends or its last hold expires, whichever is later, plus the jitter.
   */
  #reserve(operation: ReserveOperation, now: number): number[] {
    const entry = this.#liveEntry(operation.key, now);
    entry.book ??= emptyHoldBook();
    const result = reservationStep(entry.book, operation, Math.floor(now));
    entry.value = result.values[1];
    entry.expiresAtMs = result.expiresAtMs + operation.jitterSeconds * 1000;
    // Holds count against MEMORY_MAX_BYTES like counters: a record grows and shrinks with them.
    let holdBytes = 0;
    for (const id of entry.book.holds.keys()) holdBytes += MEMORY_HOLD_OVERHEAD_BYTES + id.length;
    const bytes = memoryEntryBytes(operation.key) + holdBytes;
    this.#bytes += bytes - entry.bytes;
    entry.bytes = bytes;
    if (this.#bytes > this.#maxBytes) this.#makeRoom(0, now);
    return result.values;
  }

  /** The live value of `key`, 0 when absent or expired. */
  #valueOf(key: string, now: number): number {
    const entry = this.#counters.get(key);
    return entry === undefined || entry.expiresAtMs <= now ? 0 : entry.value;
  }

  /** The entry for `key`, created or reset to 0 when absent or expired, moved to the recent end when due. */
  #liveEntry(key: string, now: number): Entry {
    const entry = this.#counters.get(key);
    if (entry === undefined) return this.#add(key, now);
    if (entry.expiresAtMs <= now) {
      entry.value = 0;
      entry.fractionUs = 0;
      entry.book = undefined;
      this.#touch(key, entry, now);
    } else if (now - entry.touchedAtMs >= TOUCH_GRANULARITY_MS) this.#touch(key, entry, now);
    return entry;
  }

  /** A new counter at the recent end, after making room for it. */
  #add(key: string, now: number): Entry {
    const entry: Entry = {
      value: 0,
      fractionUs: 0,
      expiresAtMs: 0,
      touchedAtMs: now,
      bytes: memoryEntryBytes(key),
    };
    this.#makeRoom(entry.bytes, now);
    this.#counters.set(key, entry);
    this.#bytes += entry.bytes;
    return entry;
  }

  /** Moves an entry to the recent end of the map (insertion order is the eviction order). */
  #touch(key: string, entry: Entry, now: number): void {
    this.#counters.delete(key);
    this.#counters.set(key, entry);
    entry.touchedAtMs = now;
  }

  #delete(key: string, entry: Entry): void {
    this.#counters.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** Removes least recently used counters until `bytes` more fit; expired ones are not evictions. */
  #makeRoom(bytes: number, now: number): void {
    let evicted = 0;
    while (this.#bytes + bytes > this.#maxBytes && this.#counters.size > 0) {
      const [key, entry] = this.#leastRecentlyUsed();
      this.#delete(key, entry);
      if (entry.expiresAtMs > now) evicted++;
    }
    if (evicted > 0) this.#evicted(evicted, now);
  }

  /**
   * The first counter in map order (the map is not empty). Every counter the cursor passed was evicted, and
   * touched or new ones are appended after it, so what it reaches next is always the least recently used.
   */
  #leastRecentlyUsed(): [string, Entry] {
    this.#evictCursor ??= this.#counters.entries();
    let next = this.#evictCursor.next();
    if (next.done) {
      // The cursor ended (iterators do not see later insertions once done): start again from the front.
      this.#evictCursor = this.#counters.entries();
      next = this.#evictCursor.next();
    }
    return next.value as [string, Entry];
  }

  #evicted(count: number, now: number): void {
    this.#reports?.evictions.add(count);
    this.#evictedSinceLine += count;
    if (now - this.#lastLineMs >= EVICTION_LOG_INTERVAL_MS) this.#warnEvictions(now);
  }

  #warnEvictions(now: number): void {
    const count = this.#evictedSinceLine;
    const since =
      this.#lastLineMs === Number.NEGATIVE_INFINITY
        ? "since start"
        : `in the last ${Math.round((now - this.#lastLineMs) / 1000)} s`;
    this.#reports?.log.warn(
      `memory: ${count} counter${count === 1 ? "" : "s"} evicted ${since}, least recently used first, to stay within MEMORY_MAX_BYTES=${this.#maxBytes}: each starts its window again from 0`,
    );
    this.#evictedSinceLine = 0;
    this.#lastLineMs = now;
  }
}
