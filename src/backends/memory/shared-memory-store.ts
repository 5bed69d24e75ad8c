import { createHash } from "node:crypto";
import { threadId } from "node:worker_threads";
import {
  type BucketOperation,
  type CounterOperation,
  type FixedOperation,
  type SlidingOperation,
  unknownOperation,
} from "../../engine/algorithms/counter-operation.js";
import { gcraStep } from "../../engine/algorithms/gcra-step.js";
import { LIMIT_ALGORITHMS } from "../../engine/algorithms/registry.js";
import type {
  CounterIncrement,
  CounterStore,
  HealthListener,
  StoreSpanDescription,
} from "../../engine/counter-store.js";
import type { MemoryStoreReports } from "./memory-store.js";

/**
 * The counter table every worker thread shares (`WORKERS` > 1, docs/workers.md): one SharedArrayBuffer
 * holding a fixed number of buckets of {@link SLOTS_PER_BUCKET} slots, each bucket behind its own spin lock.
 *
 * Layout (bytes): a header of two cache lines (the geometry, then the count of slots in use); one lock word
 * per bucket, each on a cache line of its own; then the buckets, {@link SLOT_BYTES} per slot. A slot holds
 * its value and a token bucket's fraction of a microsecond (float64), its expiry in epoch ms (float64, 0 =
 * never used), its key's length and kind (int32), and the key: its UTF-8 bytes when they fit in
 * {@link KEY_BYTES}, else their SHA-256 digest. Slots start on 128-byte boundaries and locks on 64-byte
 * ones, so two hot counters never share a cache line.
 */
export const SLOTS_PER_BUCKET = 8;
export const SLOT_BYTES = 128;
const SLOT_HEADER_BYTES = 32;
/** Longest key kept as it is; longer keys are kept as their SHA-256 digest (32 bytes). */
export const KEY_BYTES = SLOT_BYTES - SLOT_HEADER_BYTES;
const CACHE_LINE = 64;
const HEADER_BYTES = 2 * CACHE_LINE;
const BUCKET_BYTES = SLOTS_PER_BUCKET * SLOT_BYTES;
/** A bucket costs its slots plus its lock's cache line. */
const BYTES_PER_BUCKET = BUCKET_BYTES + CACHE_LINE;
const MAGIC = 0x52_4c_44_38; // "RLD8"
/** Int32 indexes in the header. */
const H_MAGIC = 0;
const H_BUCKETS = 1;
const H_USED = CACHE_LINE / 4;
/**
 * A lock held longer than this is taken over. Locks are held for a few hundred nanoseconds of arithmetic;
 * a thread that ends inside one (ended from outside) has its locks released by the main thread
 * ({@link releaseLocksHeldBy}), so this only guards a thread that waits on such a lock before that happens.
 */
const LOCK_STALE_MS = 1000;
const KIND_PLAIN = 1;
const KIND_DIGEST = 2;

/** A table of about `maxBytes` (at least one bucket) for {@link SharedMemoryStore}; pass it to every thread. */
export function createSharedCounterTable(maxBytes: number): SharedArrayBuffer {
  const buckets = Math.max(1, Math.floor((maxBytes - HEADER_BYTES) / BYTES_PER_BUCKET));
  const buffer = new SharedArrayBuffer(HEADER_BYTES + buckets * BYTES_PER_BUCKET);
  const header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  header[H_MAGIC] = MAGIC;
  header[H_BUCKETS] = buckets;
  return buffer;
}

/** The lock word of a thread: its `threadId` + 1 (the main thread's is 0), never 0 (= free). */
export function lockHolderOf(thread: number): number {
  return thread + 1;
}

/**
 * Frees every lock of `table` that the thread `thread` held when it ended; returns how many. The main thread
 * calls it when a worker ends, so a worker ended inside a critical section blocks nobody.
 */
export function releaseLocksHeldBy(table: SharedArrayBuffer, thread: number): number {
  const i32 = new Int32Array(table);
  const holder = lockHolderOf(thread);
  let released = 0;
  for (let bucket = 0; bucket < i32[H_BUCKETS]!; bucket++) {
    if (Atomics.compareExchange(i32, (HEADER_BYTES + bucket * CACHE_LINE) / 4, holder, 0) === holder)
      released++;
  }
  return released;
}

/** Options of {@link SharedMemoryStore}. */
export interface SharedMemoryStoreOptions {
  /** From {@link createSharedCounterTable}, the same buffer in every thread. */
  readonly table: SharedArrayBuffer;
  readonly nowMs?: () => number;
  /** Evictions of live counters (a full bucket); nothing is reported when absent. */
  readonly reports?: MemoryStoreReports;
}

const EVICTION_LOG_INTERVAL_MS = 60_000;

/**
 * `BACKEND_TYPE=memory` with `WORKERS` > 1: the memory store's semantics (INCRBY + EXPIRE, the sliding
 * window's previous count, GCRA on the shared clock) over counters in shared memory, so that N threads
 * admit exactly what one would. Each operation runs under its bucket's lock; a request's operations are
 * applied one after another, as a Redis pipeline's are.
 *
 * The table is bounded: a new key takes a never-used or expired slot of its bucket; when all
 * {@link SLOTS_PER_BUCKET} slots hold live counters, the one closest to expiring is evicted (counted in
 * `ratelimit.memory.evictions` and warned about, at most a line a minute) and its next hit starts its
 * window from 0 — what the single-thread store does with its least recently used counter.
 */
export class SharedMemoryStore implements CounterStore {
  readonly name = "memory";
  /** No reservation holds: a rule set with a reservation is refused while WORKERS is above 1 (docs/workers.md). */
  readonly capabilities = {
    readsWithoutCounting: true,
    algorithms: LIMIT_ALGORITHMS,
    reservations: false,
    remote: false,
  };
  readonly #i32: Int32Array;
  readonly #f64: Float64Array;
  readonly #u8: Uint8Array;
  readonly #buckets: number;
  /** Byte offset of the first bucket. */
  readonly #bucketsAt: number;
  readonly #nowMs: () => number;
  readonly #reports: MemoryStoreReports | undefined;
  readonly #encoder = new TextEncoder();
  /** The key being looked up: its bytes (at most {@link KEY_BYTES}), length and kind. */
  readonly #key = new Uint8Array(KEY_BYTES + 4);
  #keyLength = 0;
  #keyKind = KIND_PLAIN;
  #evictedSinceLine = 0;
  #lastLineMs = Number.NEGATIVE_INFINITY;
  /** What this thread writes in the locks it holds. */
  readonly #holder = lockHolderOf(threadId);

  constructor(options: SharedMemoryStoreOptions) {
    const { table } = options;
    this.#i32 = new Int32Array(table);
    if (this.#i32[H_MAGIC] !== MAGIC) throw new Error("not a shared counter table");
    this.#f64 = new Float64Array(table);
    this.#u8 = new Uint8Array(table);
    this.#buckets = this.#i32[H_BUCKETS]!;
    this.#bucketsAt = HEADER_BYTES + this.#buckets * CACHE_LINE;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#reports = options.reports;
  }

  /** Slots the table has. */
  get capacity(): number {
    return this.#buckets * SLOTS_PER_BUCKET;
  }

  /** Slots ever used (expired counters included until their slot is taken again). */
  get size(): number {
    return Atomics.load(this.#i32, H_USED);
  }

  /** Bytes of the slots in use. */
  get bytes(): number {
    return this.size * SLOT_BYTES;
  }

  /** Bytes of the whole table. */
  get maxBytes(): number {
    return this.#i32.byteLength;
  }

  increment(increments: readonly CounterIncrement[]): number[] {
    const now = this.#nowMs();
    const values: number[] = [];
    for (let i = 0; i < increments.length; i++) this.#apply(increments[i]!, now, values);
    return values;
  }

  read(increments: readonly CounterIncrement[]): number[] {
    const now = this.#nowMs();
    const values: number[] = [];
    for (const operation of increments) this.#read(operation, now, values);
    return values;
  }

  /** Gives refused sliding-window hits back; a counter that expired meanwhile stays absent. */
  release(operations: readonly SlidingOperation[]): void {
    const now = this.#nowMs();
    for (const { key, hits } of operations) {
      const bucket = this.#lock(key);
      try {
        const slot = this.#find(bucket, now);
        if (slot >= 0) this.#f64[slot]! -= hits;
      } finally {
        this.#unlock(bucket);
      }
    }
  }

  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription {
    return { name: "Memory Increment Execution", attributes: { "keys length": increments.length } };
  }

  /** Seconds the counter has left (as Redis `TTL`): -2 when absent or expired. */
  ttlSecondsOf(key: string): number {
    const now = this.#nowMs();
    const bucket = this.#lock(key);
    try {
      const slot = this.#find(bucket, now);
      return slot < 0 ? -2 : Math.ceil((this.#f64[slot + 2]! - now) / 1000);
    } finally {
      this.#unlock(bucket);
    }
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  onHealthChange(listener: HealthListener): void {
    listener(true);
  }

  close(): Promise<void> {
    if (this.#evictedSinceLine > 0) this.#warnEvictions(this.#nowMs());
    return Promise.resolve();
  }

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
        throw holdsRefused();
      default:
        unknownOperation(operation);
    }
  }

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
      case "reserve":
        throw holdsRefused();
      default:
        unknownOperation(operation);
    }
  }

  /** INCRBY + EXPIRE under the bucket's lock: an absent or expired counter starts from 0. */
  #count({ key, hits, ttlSeconds }: FixedOperation | SlidingOperation, now: number): number {
    const bucket = this.#lock(key);
    try {
      let slot = this.#find(bucket, now);
      if (slot < 0) slot = this.#claim(bucket, now);
      const value = this.#f64[slot]! + hits;
      this.#f64[slot] = value;
      this.#f64[slot + 2] = now + ttlSeconds * 1000;
      return value;
    } finally {
      this.#unlock(bucket);
    }
  }

  #valueOf(key: string, now: number): number {
    const bucket = this.#lock(key);
    try {
      const slot = this.#find(bucket, now);
      return slot < 0 ? 0 : this.#f64[slot]!;
    } finally {
      this.#unlock(bucket);
    }
  }

  /** One GCRA step (src/engine/algorithms/gcra-step.ts) under the bucket's lock → [allowed, debt µs]. */
  #takeTokens(operation: BucketOperation, now: number): [number, number] {
    const nowUs = Math.floor(now * 1000);
    const bucket = this.#lock(operation.key);
    try {
      let slot = this.#find(bucket, now);
      const stored = slot < 0 ? undefined : { wholeUs: this.#f64[slot]!, fractionUs: this.#f64[slot + 1]! };
      const step = gcraStep(stored, nowUs, operation.hits, operation.emissionIntervalUs, operation.burst);
      if (step.tat !== undefined) {
        if (slot < 0) slot = this.#claim(bucket, now);
        this.#f64[slot] = step.tat.wholeUs;
        this.#f64[slot + 1] = step.tat.fractionUs;
        this.#f64[slot + 2] = nowUs / 1000 + step.ttlMs;
      }
      return [step.allowed ? 1 : 0, step.debtUs];
    } finally {
      this.#unlock(bucket);
    }
  }

  /**
   * Encodes `key` into the lookup buffer, then takes its bucket's lock (spinning: critical sections are a
   * few hundred nanoseconds); returns the bucket. A lock held for longer than {@link LOCK_STALE_MS} is taken
   * over.
   */
  #lock(key: string): number {
    const bucket = this.#encodeKey(key) % this.#buckets;
    const word = (HEADER_BYTES + bucket * CACHE_LINE) / 4;
    const i32 = this.#i32;
    const holder = this.#holder;
    if (Atomics.compareExchange(i32, word, 0, holder) === 0) return bucket;
    let spins = 0;
    let since = 0;
    while (Atomics.compareExchange(i32, word, 0, holder) !== 0) {
      if ((++spins & 0xfff) !== 0) continue;
      const now = Date.now();
      if (since === 0) since = now;
      else if (now - since > LOCK_STALE_MS) {
        Atomics.store(i32, word, holder);
        return bucket;
      }
    }
    return bucket;
  }

  #unlock(bucket: number): void {
    Atomics.store(this.#i32, (HEADER_BYTES + bucket * CACHE_LINE) / 4, 0);
  }

  /**
   * Puts `key`'s bytes (or their SHA-256 digest, when longer than {@link KEY_BYTES}) in the lookup buffer;
   * returns their FNV-1a hash.
   */
  #encodeKey(key: string): number {
    let bytes = this.#key;
    const { read, written } = this.#encoder.encodeInto(key, bytes.subarray(0, KEY_BYTES + 1));
    if (read === key.length && written <= KEY_BYTES) {
      this.#keyLength = written;
      this.#keyKind = KIND_PLAIN;
    } else {
      bytes = createHash("sha256").update(key).digest();
      this.#key.set(bytes);
      bytes = this.#key;
      this.#keyLength = 32;
      this.#keyKind = KIND_DIGEST;
    }
    let hash = 0x811c9dc5;
    for (let i = 0; i < this.#keyLength; i++) {
      hash ^= bytes[i]!;
      hash = Math.imul(hash, 0x01000193);
    }
    return hash >>> 0;
  }

  /** Float64 index of slot `s` of `bucket`: value at +0, fraction at +1, expiry at +2. */
  #slotAt(bucket: number, s: number): number {
    return (this.#bucketsAt + bucket * BUCKET_BYTES + s * SLOT_BYTES) / 8;
  }

  /** The live slot holding the looked-up key in `bucket` (locked), or -1. */
  #find(bucket: number, now: number): number {
    for (let s = 0; s < SLOTS_PER_BUCKET; s++) {
      const at = this.#slotAt(bucket, s);
      const expires = this.#f64[at + 2]!;
      if (expires > now && this.#holdsKey(at)) return at;
    }
    return -1;
  }

  #holdsKey(at: number): boolean {
    const meta = at * 2 + 6; // int32 index of the length, then the kind
    if (this.#i32[meta] !== this.#keyLength || this.#i32[meta + 1] !== this.#keyKind) return false;
    const start = at * 8 + SLOT_HEADER_BYTES;
    const u8 = this.#u8;
    const key = this.#key;
    for (let i = 0; i < this.#keyLength; i++) if (u8[start + i] !== key[i]) return false;
    return true;
  }

  /**
   * A slot of `bucket` (locked) for the looked-up key, starting from 0: a never-used one, else an expired
   * one, else the live counter closest to expiring is evicted.
   */
  #claim(bucket: number, now: number): number {
    let chosen = -1;
    let chosenExpires = Number.POSITIVE_INFINITY;
    for (let s = 0; s < SLOTS_PER_BUCKET; s++) {
      const at = this.#slotAt(bucket, s);
      const expires = this.#f64[at + 2]!;
      if (expires === 0) {
        Atomics.add(this.#i32, H_USED, 1);
        chosen = at;
        chosenExpires = 0;
        break;
      }
      if (expires < chosenExpires) {
        chosen = at;
        chosenExpires = expires;
      }
    }
    if (chosenExpires > now) this.#evicted(now);
    this.#f64[chosen] = 0;
    this.#f64[chosen + 1] = 0;
    this.#f64[chosen + 2] = now;
    const meta = chosen * 2 + 6;
    this.#i32[meta] = this.#keyLength;
    this.#i32[meta + 1] = this.#keyKind;
    this.#u8.set(this.#key.subarray(0, this.#keyLength), chosen * 8 + SLOT_HEADER_BYTES);
    return chosen;
  }

  #evicted(now: number): void {
    this.#reports?.evictions.add(1);
    this.#evictedSinceLine++;
    if (now - this.#lastLineMs >= EVICTION_LOG_INTERVAL_MS) this.#warnEvictions(now);
  }

  #warnEvictions(now: number): void {
    const count = this.#evictedSinceLine;
    const since =
      this.#lastLineMs === Number.NEGATIVE_INFINITY
        ? "since start"
        : `in the last ${Math.round((now - this.#lastLineMs) / 1000)} s`;
    this.#reports?.log.warn(
      `memory: ${count} live counter${count === 1 ? "" : "s"} evicted ${since} by this thread: the shared table (MEMORY_MAX_BYTES=${this.#i32.byteLength}) had no free slot for a new key in ${count === 1 ? "its" : "their"} group of ${SLOTS_PER_BUCKET}; each starts its window again from 0`,
    );
    this.#evictedSinceLine = 0;
    this.#lastLineMs = now;
  }
}

/** A `reserve` operation reached the shared table, whose capabilities say it keeps no holds (a bug). */
function holdsRefused(): Error {
  return new Error(
    "the shared memory table keeps no reservation holds: such rules are refused while they load",
  );
}
