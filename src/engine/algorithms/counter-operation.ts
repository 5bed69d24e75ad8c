/**
 * What the engine asks a counter store to do for one limit, and how many numbers the store answers with.
 * A store answers a list of operations with one flat list of numbers: each operation's values in order,
 * {@link resultCountOf} of them per operation.
 */

/**
 * `fixed_window`: `INCRBY key hits` + `EXPIRE key ttlSeconds` → `[countAfter]`.
 * Read (no write) → `[count]`.
 */
export interface FixedOperation {
  /** Optional: an increment without a kind is a fixed window's, as every increment was before. */
  readonly kind?: "fixed";
  readonly key: string;
  readonly hits: number;
  /** The window plus the expiration jitter. */
  readonly ttlSeconds: number;
  /** The limit's unit is SECOND: routed to the per-second Redis when `REDIS_PERSECOND` is on. */
  readonly perSecond: boolean;
}

/**
 * `sliding_window`: `INCRBY key hits` + `EXPIRE key ttlSeconds` + `GET previousKey` →
 * `[countAfter, previousCount]` (absent = 0). Plain commands, no script: the two keys may lie in different
 * cluster slots, and the previous window is closed, so nothing needs to be atomic. Read → `[count,
 * previousCount]`. A refused request gives its hits back with a release (`DECRBY key hits`), in the
 * background.
 */
export interface SlidingOperation {
  readonly kind: "sliding";
  /** The current window's counter. */
  readonly key: string;
  /** The previous window's counter (the same key for the window before). */
  readonly previousKey: string;
  readonly hits: number;
  /** Two windows plus the jitter: the counter serves as the previous one for one more window. */
  readonly ttlSeconds: number;
  readonly perSecond: boolean;
}

/**
 * `token_bucket`: GCRA, atomic (a Redis script by EVALSHA with `TIME` inside; in-process for memory) →
 * `[allowed (1|0), debtUs]`: the bucket's debt (theoretical arrival time − now) after the request when
 * allowed, before it (nothing taken) when refused. Read (hits 0, nothing taken) → `[1, debtUs]`.
 */
export interface BucketOperation {
  readonly kind: "bucket";
  readonly key: string;
  readonly hits: number;
  /** T: microseconds between two tokens; see `emissionIntervalUsOf`. */
  readonly emissionIntervalUs: number;
  /** Tokens the full bucket holds; the capacity in time is burst × T. */
  readonly burst: number;
  /** None: the store sets the bucket's time to live from its debt. Present so every kind can be asked. */
  readonly ttlSeconds?: undefined;
  readonly perSecond: boolean;
}

/**
 * A limit with a `reservation` (docs/token-budgets.md, src/engine/algorithms/reservation-step.ts): one
 * atomic step on one stored record — the window's count `U` and the live holds — on the store's clock
 * (Redis `TIME` inside a script; the process clock for memory). A check (`charge` false, hits 0) places a
 * hold of `estimate` when `U + R + estimate <= limit` (or refreshes the request's own); a charge counts
 * `hits` and settles one hold. → `[ok (1|0), U, R, liveHolds, msToWindowEnd, heldOrReleased]`. Read (nothing
 * written) → `[ownHoldLive (1|0), U, R, liveHolds, msToWindowEnd, 0]`.
 */
export interface ReserveOperation {
  readonly kind: "reserve";
  readonly key: string;
  /** 0 for a check; the cost for a charge. */
  readonly hits: number;
  /** A charge (the request's hits were above 0 when planned): it counts and settles, never holds. */
  readonly charge: boolean;
  /** L: the limit U + R is held within. */
  readonly limit: number;
  readonly estimate: number;
  /** How long a hold lives unsettled, in ms. */
  readonly holdTtlMs: number;
  /** The window U counts in, in seconds (epoch-aligned). */
  readonly windowSeconds: number;
  /**
   * `sliding_window`: U is the sliding-window estimate, `floor(previous × (windowEnd − now) / window) +
   * current`; else the current window's count.
   */
  readonly sliding: boolean;
  /**
   * `token_bucket`: U is the tokens taken and not yet refilled, refilled at `refill` tokens per window, and
   * `limit` is the bucket's capacity (its burst); `windowSeconds` is then the refill period, not a window.
   */
  readonly bucket: boolean;
  /** A bucket's refill, tokens per `windowSeconds` (its requests_per_unit); 0 for a window. */
  readonly refill: number;
  /** The request's id (`request_id_key`'s value); "" when it has none. */
  readonly requestId: string;
  /** Extra seconds the record lives beyond its window and holds (EXPIRATION_JITTER_MAX_SECONDS). */
  readonly jitterSeconds: number;
  /** None: the store sets the record's time to live. Present so every kind can be asked. */
  readonly ttlSeconds?: undefined;
  readonly perSecond: boolean;
}

/**
 * One limit's work for a counter store: every kind a store must run. A new kind fails to compile in each
 * place that must handle it — every store's switch over `kind` ends in {@link unknownOperation}.
 */
export type CounterOperation = FixedOperation | SlidingOperation | BucketOperation | ReserveOperation;

/** How many numbers a store answers for `operation`, for an increment and for a read alike. */
export function resultCountOf(operation: CounterOperation): 1 | 2 | 6 {
  switch (operation.kind) {
    case undefined:
    case "fixed":
      return 1;
    case "sliding":
    case "bucket":
      return 2;
    case "reserve":
      return 6;
    default:
      return unknownOperation(operation);
  }
}

/**
 * The `default` of a switch over every operation kind: `operation` is `never` there, so a kind added to
 * {@link CounterOperation} and not handled is a compile error. Throws if reached anyway (a value from
 * outside the type system).
 */
export function unknownOperation(operation: never): never {
  throw new Error(`unknown counter operation kind ${String((operation as { kind?: unknown }).kind)}`);
}
