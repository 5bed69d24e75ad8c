/**
 * One reservation step (docs/token-budgets.md, spec §E7) on a limit's record, in plain arithmetic: what
 * the memory store runs, the model the property tests hold the stores to, and what the Redis script of
 * src/backends/redis/reservation-script.ts does on Redis's clock. No I/O, no clock of its own.
 *
 * The record: the count `used` of the epoch-aligned window starting at `windowStartMs` and `previous`, the
 * window's before it, and the holds by id, each with its amount, expiry and placing order. U is `used`, or
 * for a sliding window `floor(previous × (windowEnd − now) / window) + used`. Holds do not belong to a window:
 * a window change moves the counts only.
 *
 * A token bucket's record uses the same two fields differently: `used` is the tokens taken and not yet
 * refilled, scaled by the refill period in ms (a whole number: `tokens × windowMs`), as of `windowStartMs`,
 * the last step's time; it drains by `refill` per ms, so U = ceil(used / windowMs). Whole numbers keep the
 * memory store and the Redis script exact and alike (below 2⁵³, a budget of 10⁸ tokens a day).
 */
import type { ReserveOperation } from "./counter-operation.js";

/** One live hold. */
export interface Hold {
  readonly amount: number;
  expiresAtMs: number;
  /** Placing order within the record: the smallest is the oldest. */
  readonly order: number;
}

/** A limit's stored record. */
export interface HoldBook {
  windowStartMs: number;
  used: number;
  /** The previous window's count (0 when that window had none or is not the one just before). */
  previous: number;
  /** The last placing order handed out. */
  order: number;
  /** By hold id: `=` + the request id, or `#<order>` for a request without one (the two never collide). */
  readonly holds: Map<string, Hold>;
}

/** A step's answer (`ReserveOperation`'s six values) and when the record may be forgotten. */
export interface ReservationResult {
  readonly values: [number, number, number, number, number, number];
  /** The later of the window's end and the last hold's expiry, in ms. */
  readonly expiresAtMs: number;
}

/** A fresh record for the window containing `nowMs`. */
export function emptyHoldBook(): HoldBook {
  return { windowStartMs: 0, used: 0, previous: 0, order: 0, holds: new Map() };
}

/**
 * The step at `nowMs` (whole ms) on `book`, which it updates: expired holds go, a new window resets U,
 * then a check holds (or refreshes the request's own hold, or refuses) and a charge counts and settles
 * one hold — the request's own when it names one (none when that one is gone), else the oldest.
 */
export function reservationStep(
  book: HoldBook,
  operation: ReserveOperation,
  nowMs: number,
): ReservationResult {
  const windowMs = operation.windowSeconds * 1000;
  let used: number;
  if (operation.bucket) {
    drainBucket(book, nowMs, operation.refill);
    used = ceilDiv(book.used, windowMs);
  } else {
    const windowStartMs = Math.floor(nowMs / windowMs) * windowMs;
    alignWindow(book, windowStartMs, windowMs);
    const weight = operation.sliding
      ? weightedCount(book.previous, windowStartMs + windowMs - nowMs, windowMs)
      : 0;
    used = weight + book.used;
  }
  let held = prune(book, nowMs);
  const ownId = holdIdOf(operation.requestId);
  let ok: boolean;
  let changed = 0;
  if (!operation.charge) {
    const own = ownId === undefined ? undefined : book.holds.get(ownId);
    if (own !== undefined) {
      own.expiresAtMs = nowMs + operation.holdTtlMs;
      ok = used + held <= operation.limit;
    } else if (used + held + operation.estimate <= operation.limit) {
      book.order += 1;
      const id = ownId ?? `#${book.order}`;
      book.holds.set(id, {
        amount: operation.estimate,
        expiresAtMs: nowMs + operation.holdTtlMs,
        order: book.order,
      });
      held += operation.estimate;
      changed = operation.estimate;
      ok = true;
    } else ok = false;
  } else {
    book.used += operation.bucket ? operation.hits * windowMs : operation.hits;
    used += operation.hits;
    const id = ownId ?? oldestHold(book);
    const hold = id === undefined ? undefined : book.holds.get(id);
    if (hold !== undefined) {
      book.holds.delete(id!);
      held -= hold.amount;
      changed = hold.amount;
    }
    ok = used + held <= operation.limit;
  }
  const resetMs = resetMsOf(book, operation, nowMs);
  // A sliding window's counts weigh until the end of the next window; a bucket's until it is full again.
  let countsEndMs = nowMs + resetMs;
  if (operation.sliding) countsEndMs += windowMs;
  return {
    values: [ok ? 1 : 0, used, held, book.holds.size, resetMs, changed],
    expiresAtMs: recordExpiry(book, countsEndMs),
  };
}

/**
 * Ms until the counts stop weighing: to the window's end, or until a bucket is full again
 * (`ceil(used / refill)`; a refill of 0, a request-level override of 0, never refills: its window).
 */
function resetMsOf(book: HoldBook, operation: ReserveOperation, nowMs: number): number {
  const windowMs = operation.windowSeconds * 1000;
  if (!operation.bucket) return Math.floor(nowMs / windowMs) * windowMs + windowMs - nowMs;
  return operation.refill > 0 ? ceilDiv(book.used, operation.refill) : windowMs;
}

/** Refills a bucket's record to `nowMs`: `used` drains by `refill` per ms since the last step, down to 0. */
function drainBucket(book: HoldBook, nowMs: number, refill: number): void {
  if (nowMs <= book.windowStartMs) return;
  const drained = (nowMs - book.windowStartMs) * refill;
  book.used = book.used > drained ? book.used - drained : 0;
  book.windowStartMs = nowMs;
}

/** ceil(a / b) for whole a ≥ 0 and b > 0, as the Redis script computes it. */
function ceilDiv(a: number, b: number): number {
  const quotient = Math.floor(a / b);
  return quotient * b < a ? quotient + 1 : quotient;
}

/** The step's values without writing: `[ownHoldLive, U, R, liveHolds, msToWindowEnd, 0]` (absent = empty). */
export function reservationRead(
  book: HoldBook | undefined,
  operation: ReserveOperation,
  nowMs: number,
): number[] {
  const windowMs = operation.windowSeconds * 1000;
  const windowStartMs = Math.floor(nowMs / windowMs) * windowMs;
  let used = 0;
  let held = 0;
  let live = 0;
  let own = 0;
  let resetMs = windowStartMs + windowMs - nowMs;
  const ownId = holdIdOf(operation.requestId);
  if (operation.bucket) {
    const bucket = { ...(book ?? emptyHoldBook()), holds: new Map<string, Hold>() };
    drainBucket(bucket, nowMs, operation.refill);
    used = ceilDiv(bucket.used, windowMs);
    resetMs = resetMsOf(bucket, operation, nowMs);
  }
  if (book !== undefined) {
    if (!operation.bucket) {
      let previous = 0;
      if (book.windowStartMs === windowStartMs) {
        used = book.used;
        previous = book.previous;
      } else if (book.windowStartMs === windowStartMs - windowMs) previous = book.used;
      if (operation.sliding) used += weightedCount(previous, windowStartMs + windowMs - nowMs, windowMs);
    }
    for (const [id, hold] of book.holds) {
      if (hold.expiresAtMs <= nowMs) continue;
      held += hold.amount;
      live += 1;
      if (id === ownId) own = 1;
    }
  }
  return [own, used, held, live, resetMs, 0];
}

/** The hold id of a request id; undefined for none (""). */
export function holdIdOf(requestId: string): string | undefined {
  return requestId === "" ? undefined : `=${requestId}`;
}

/** Moves the counts to the window starting at `windowStartMs`: the one just before becomes `previous`. */
function alignWindow(book: HoldBook, windowStartMs: number, windowMs: number): void {
  if (book.windowStartMs === windowStartMs) return;
  book.previous = book.windowStartMs === windowStartMs - windowMs ? book.used : 0;
  book.windowStartMs = windowStartMs;
  book.used = 0;
}

/**
 * floor(count × remainingMs / windowMs) as the Redis script computes it (Lua 5.1's `%` is a − floor(a / b)
 * × b): exact while the product stays below 2⁵³, and the same doubles in both beyond.
 */
export function weightedCount(count: number, remainingMs: number, windowMs: number): number {
  const product = count * remainingMs;
  return (product - (product - Math.floor(product / windowMs) * windowMs)) / windowMs;
}

/** Drops expired holds; returns R, the sum of the live ones. */
function prune(book: HoldBook, nowMs: number): number {
  let held = 0;
  for (const [id, hold] of book.holds) {
    if (hold.expiresAtMs <= nowMs) book.holds.delete(id);
    else held += hold.amount;
  }
  return held;
}

function oldestHold(book: HoldBook): string | undefined {
  let oldest: string | undefined;
  let order = Number.POSITIVE_INFINITY;
  for (const [id, hold] of book.holds) {
    if (hold.order < order) {
      order = hold.order;
      oldest = id;
    }
  }
  return oldest;
}

function recordExpiry(book: HoldBook, countsEndMs: number): number {
  let expiresAtMs = countsEndMs;
  for (const hold of book.holds.values()) expiresAtMs = Math.max(expiresAtMs, hold.expiresAtMs);
  return expiresAtMs;
}
