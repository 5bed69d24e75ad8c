/**
 * The three counter operations over an in-process map, with Redis's semantics: what the memory store
 * runs, and the reference the Redis commands and script are tested against. No I/O and no clock of its
 * own: the caller passes `nowMs`. Expired cells are ignored on access (as absent) and replaced; removing
 * them is the caller's sweep.
 */
import {
  type BucketOperation,
  type CounterOperation,
  type ReserveOperation,
  type SlidingOperation,
  unknownOperation,
} from "./counter-operation.js";
import { type BucketTat, gcraStep } from "./gcra-step.js";
import { emptyHoldBook, type HoldBook, reservationRead, reservationStep } from "./reservation-step.js";

/** One stored value. */
export interface CounterCell {
  /** A window's count; for a token bucket, the whole microseconds of its theoretical arrival time. */
  value: number;
  /** Token bucket only: the TAT's fraction of a microsecond, in [0, 1); 0 for counters. */
  fractionUs: number;
  /** Milliseconds since the epoch; the cell counts as absent from then on. */
  expiresAtMs: number;
  /** A reservation's record; absent for the other kinds. */
  book?: HoldBook | undefined;
}

/** The map a memory store keeps its cells in. */
export type CounterCells = Map<string, CounterCell>;

/**
 * Applies one operation at `nowMs` and returns its values (`resultCountOf` of them): fixed →
 * [countAfter] (INCRBY + EXPIRE), sliding → [countAfter, previousCount] (INCRBY + EXPIRE + GET), bucket →
 * [allowed, debtUs] (one GCRA step at `floor(nowMs × 1000)` µs).
 */
export function applyOperation(cells: CounterCells, operation: CounterOperation, nowMs: number): number[] {
  switch (operation.kind) {
    case undefined:
    case "fixed":
      return [incrementCell(cells, operation.key, operation.hits, operation.ttlSeconds, nowMs)];
    case "sliding":
      return [
        incrementCell(cells, operation.key, operation.hits, operation.ttlSeconds, nowMs),
        liveCell(cells, operation.previousKey, nowMs)?.value ?? 0,
      ];
    case "bucket":
      return applyBucketOperation(cells, operation, Math.floor(nowMs * 1000));
    case "reserve":
      return applyReserveOperation(cells, operation, Math.floor(nowMs));
    default:
      return unknownOperation(operation);
  }
}

/** Applies every operation in order and returns their values as one flat list. */
export function applyOperations(
  cells: CounterCells,
  operations: readonly CounterOperation[],
  nowMs: number,
): number[] {
  const values: number[] = [];
  for (const operation of operations) values.push(...applyOperation(cells, operation, nowMs));
  return values;
}

/**
 * One GCRA step at `nowUs` (whole microseconds, the clock the Redis script reads with `TIME`) →
 * [allowed (1|0), debtUs]; an allowed request stores its TAT with a TTL from its debt.
 */
export function applyBucketOperation(
  cells: CounterCells,
  operation: BucketOperation,
  nowUs: number,
): number[] {
  const nowMs = nowUs / 1000;
  const cell = liveCell(cells, operation.key, nowMs);
  const stored: BucketTat | undefined = cell && { wholeUs: cell.value, fractionUs: cell.fractionUs };
  const step = gcraStep(stored, nowUs, operation.hits, operation.emissionIntervalUs, operation.burst);
  if (step.tat !== undefined) {
    cells.set(operation.key, {
      value: step.tat.wholeUs,
      fractionUs: step.tat.fractionUs,
      expiresAtMs: nowMs + step.ttlMs,
    });
  }
  return [step.allowed ? 1 : 0, step.debtUs];
}

/**
 * One reservation step at `nowMs` (whole ms, the clock the Redis script reads with `TIME`): the record
 * lives until its window ends or its last hold expires, plus the jitter.
 */
export function applyReserveOperation(
  cells: CounterCells,
  operation: ReserveOperation,
  nowMs: number,
): number[] {
  let cell = liveCell(cells, operation.key, nowMs);
  if (cell === undefined) {
    cell = { value: 0, fractionUs: 0, expiresAtMs: 0 };
    cells.set(operation.key, cell);
  }
  cell.book ??= emptyHoldBook();
  const result = reservationStep(cell.book, operation, nowMs);
  cell.value = result.values[1];
  cell.expiresAtMs = result.expiresAtMs + operation.jitterSeconds * 1000;
  return result.values;
}

/**
 * The operation's current values without writing anything: fixed → [count], sliding → [count,
 * previousCount], bucket → [1, debtUs] (the debt now; nothing taken).
 */
export function readOperation(cells: CounterCells, operation: CounterOperation, nowMs: number): number[] {
  const count = liveCell(cells, operation.key, nowMs)?.value ?? 0;
  switch (operation.kind) {
    case undefined:
    case "fixed":
      return [count];
    case "sliding":
      return [count, liveCell(cells, operation.previousKey, nowMs)?.value ?? 0];
    case "bucket": {
      const [, debtUs] = applyBucketOperation(cells, { ...operation, hits: 0 }, Math.floor(nowMs * 1000));
      return [1, debtUs!];
    }
    case "reserve":
      return reservationRead(liveCell(cells, operation.key, nowMs)?.book, operation, Math.floor(nowMs));
    default:
      return unknownOperation(operation);
  }
}

/**
 * Gives a refused sliding-window request's hits back (`DECRBY key hits`). A counter that has expired in
 * the meantime stays absent rather than turning negative.
 */
export function releaseOperation(cells: CounterCells, operation: SlidingOperation, nowMs: number): void {
  const cell = liveCell(cells, operation.key, nowMs);
  if (cell !== undefined) cell.value -= operation.hits;
}

/** INCRBY + EXPIRE: a missing or expired cell starts from 0; the TTL is refreshed on every hit. */
function incrementCell(
  cells: CounterCells,
  key: string,
  hits: number,
  ttlSeconds: number,
  nowMs: number,
): number {
  let cell = liveCell(cells, key, nowMs);
  if (cell === undefined) {
    cell = { value: 0, fractionUs: 0, expiresAtMs: 0 };
    cells.set(key, cell);
  }
  cell.value += hits;
  cell.expiresAtMs = nowMs + ttlSeconds * 1000;
  return cell.value;
}

function liveCell(cells: CounterCells, key: string, nowMs: number): CounterCell | undefined {
  const cell = cells.get(key);
  return cell === undefined || cell.expiresAtMs <= nowMs ? undefined : cell;
}
