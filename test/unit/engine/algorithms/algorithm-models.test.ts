/**
 * Property test: random hit sequences and clock steps through the in-process store (applyOperation) and
 * the algorithms' outcomes, each answer compared field by field with a plain model of the algorithm
 * written here from its definition:
 * - fixed window: a count per window index;
 * - sliding window: a count per window index, refused hits taken back, the weighted estimate
 *   floor(previous × (1 − elapsed / window)) + current, resets found by trying whole seconds one by one
 *   and the cache time by trying every millisecond;
 * - token bucket: textbook GCRA in exact rational arithmetic (BigInt, in units of 1/rate µs), with no
 *   tolerance, against the store's doubles; resets and cache time found by search over whole seconds and
 *   milliseconds.
 * Seeds are fixed, so a failure repeats; the message names the seed and the limit.
 */
import t from "tap";
import type { AlgorithmLimit } from "../../../../src/engine/algorithms/algorithm-limit.js";
import {
  applyBucketOperation,
  applyOperation,
  type CounterCells,
  releaseOperation,
} from "../../../../src/engine/algorithms/apply-operation.js";
import type { BucketOperation } from "../../../../src/engine/algorithms/counter-operation.js";
import { operationFor, outcomeFor } from "../../../../src/engine/algorithms/limit-decision.js";
import type { LimitOutcome } from "../../../../src/engine/algorithms/limit-outcome.js";
import { tokenBucketOutcome } from "../../../../src/engine/algorithms/token-bucket.js";
import { between, limitOf, NOW_MS, seededRandom } from "./algorithm-fixtures.js";

const BASE = "d_k_v_";

interface Answer extends LimitOutcome {
  readonly step: number;
  readonly nowMs: number;
  readonly hits: number;
}

/** Fixed window: the reference's counter per epoch-aligned window. */
class FixedModel {
  readonly #counts = new Map<number, number>();
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  hit(nowMs: number, hits: number): LimitOutcome {
    const index = Math.floor(nowMs / this.windowMs);
    const count = (this.#counts.get(index) ?? 0) + hits;
    this.#counts.set(index, count);
    const over = count > this.limit;
    const endMs = (index + 1) * this.windowMs;
    return {
      over,
      limit: this.limit,
      before: count - hits,
      after: count,
      remaining: over ? 0 : this.limit - count,
      // Whole seconds from the current whole second to the window's end.
      resetSeconds: (endMs - Math.floor(nowMs / 1000) * 1000) / 1000,
      overLimitCacheMs: over ? endMs - 1 - nowMs : 0,
    };
  }
}

/** Sliding-window counter: counts per window index; a refused request's hits are taken back. */
class SlidingModel {
  readonly #counts = new Map<number, number>();
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** The estimate at `tMs` from the counts as they are (later windows are empty). */
  estimate(tMs: number): number {
    const index = Math.floor(tMs / this.windowMs);
    const previous = this.#counts.get(index - 1) ?? 0;
    const current = this.#counts.get(index) ?? 0;
    // In integers: the share of the previous window still inside, floor(previous × left / window).
    const leftMs = (index + 1) * this.windowMs - tMs;
    return Math.floor((previous * leftMs) / this.windowMs) + current;
  }

  hit(nowMs: number, hits: number): LimitOutcome {
    const { limit, windowMs } = this;
    const index = Math.floor(nowMs / windowMs);
    const current = (this.#counts.get(index) ?? 0) + hits;
    this.#counts.set(index, current);
    const after = this.estimate(nowMs);
    const base = { limit, before: Math.max(0, after - hits), after };
    if (after <= limit) {
      const decayedAt = (current > 0 ? index + 2 : index + 1) * windowMs;
      const resetSeconds = Math.max(1, Math.ceil((decayedAt - nowMs) / 1000));
      return { ...base, over: false, remaining: limit - after, resetSeconds, overLimitCacheMs: 0 };
    }
    this.#counts.set(index, current - hits);
    const twoWindowsSeconds = (2 * windowMs) / 1000;
    let resetSeconds = twoWindowsSeconds;
    for (let k = 1; k <= twoWindowsSeconds + 1 && hits <= limit; k++) {
      if (this.estimate(nowMs + k * 1000) + hits <= limit) {
        resetSeconds = k;
        break;
      }
    }
    const allGoneAt = (index + 2) * windowMs;
    let overLimitCacheMs = allGoneAt - nowMs;
    if (limit >= 1) {
      let m = 0;
      while (this.estimate(nowMs + m) + 1 > limit) m++;
      overLimitCacheMs = Math.max(0, m - 1);
    }
    return { ...base, over: true, remaining: 0, resetSeconds, overLimitCacheMs };
  }
}

/** GCRA in exact arithmetic: every time is an integer count of (1/rate) µs. */
class BucketModel {
  readonly #rate: bigint;
  readonly #interval: bigint;
  readonly #capacity: bigint;
  #tat: bigint | undefined;

  constructor(
    rate: number,
    readonly burst: number,
    windowSeconds: number,
  ) {
    this.#rate = BigInt(rate);
    this.#interval = BigInt(windowSeconds) * 1_000_000n;
    this.#capacity = BigInt(burst) * this.#interval;
  }

  #debtAt(now: bigint): bigint {
    return this.#tat !== undefined && this.#tat > now ? this.#tat - now : 0n;
  }

  #allows(now: bigint, hits: number): boolean {
    return this.#debtAt(now) + BigInt(hits) * this.#interval <= this.#capacity;
  }

  /** The smallest n ≥ from with test(n), test being false … true. */
  #first(from: number, test: (n: number) => boolean): number {
    let high = Math.max(from, 1);
    while (!test(high)) high *= 2;
    let low = from;
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      if (test(mid)) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  hit(nowUs: number, hits: number): LimitOutcome & { allowed: boolean } {
    const { burst } = this;
    const now = BigInt(nowUs) * this.#rate;
    const second = 1_000_000n * this.#rate;
    const millisecond = 1000n * this.#rate;
    const debt = this.#debtAt(now);
    const allowed = this.#allows(now, hits);
    if (allowed && hits > 0) this.#tat = now + debt + BigInt(hits) * this.#interval;
    const before = Number((debt + this.#interval - 1n) / this.#interval);
    const after = before + hits;
    const fullAfter = (k: number) => this.#debtAt(now + BigInt(k) * second) === 0n;
    if (allowed) {
      return {
        allowed,
        over: false,
        limit: burst,
        before,
        after,
        remaining: burst - after,
        resetSeconds: this.#first(1, fullAfter),
        overLimitCacheMs: 0,
      };
    }
    const fitsAfter = (k: number) => this.#allows(now + BigInt(k) * second, hits);
    const firstFitMs = this.#first(0, (m) => this.#allows(now + BigInt(m) * millisecond, 1));
    return {
      allowed,
      over: true,
      limit: burst,
      before,
      after,
      remaining: 0,
      resetSeconds: this.#first(1, hits > burst ? fullAfter : fitsAfter),
      overLimitCacheMs: Math.max(0, firstFitMs - 1),
    };
  }
}

/** A clock step: often none (same instant), often small, sometimes past a window or two. */
function stepMs(random: () => number, windowMs: number): number {
  const kind = random();
  if (kind < 0.25) return 0;
  if (kind < 0.75) return between(random, 1, Math.max(1, Math.floor(windowMs / 8)));
  if (kind < 0.97) return between(random, 1, 2 * windowMs);
  return between(random, 2 * windowMs, 4 * windowMs);
}

function hitsOf(random: () => number, most: number): number {
  return random() < 0.6 ? 1 : between(random, 0, most);
}

function runWindowSequence(
  limit: AlgorithmLimit,
  seed: number,
  events: number,
  model: FixedModel | SlidingModel,
): { actual: Answer[]; expected: Answer[] } {
  const random = seededRandom(seed * 7919);
  const windowMs = limit.windowSeconds * 1000;
  const cells: CounterCells = new Map();
  let nowMs = NOW_MS + between(random, 0, windowMs);
  const actual: Answer[] = [];
  const expected: Answer[] = [];
  for (let step = 0; step < events; step++) {
    nowMs += stepMs(random, windowMs);
    const hits = hitsOf(random, 4);
    const operation = operationFor(limit, BASE, 0, hits, nowMs, between(random, 0, 3))!;
    const results = applyOperation(cells, operation, nowMs);
    const outcome = outcomeFor(limit, hits, results, 0, nowMs);
    if (operation.kind === "sliding" && outcome.over) releaseOperation(cells, operation, nowMs);
    actual.push({ step, nowMs, hits, ...outcome });
    expected.push({ step, nowMs, hits, ...model.hit(nowMs, hits) });
  }
  return { actual, expected };
}

t.test("fixed window: 40 random sequences of 300 requests agree with the per-window count", async (t) => {
  for (let seed = 1; seed <= 40; seed++) {
    const random = seededRandom(seed);
    const limit = limitOf("fixed_window", between(random, 0, 12), random() < 0.7 ? "second" : "minute", {
      unitMultiplier: between(random, 1, 3),
    });
    const model = new FixedModel(limit.requestsPerUnit, limit.windowSeconds * 1000);
    const { actual, expected } = runWindowSequence(limit, seed, 300, model);
    t.strictSame(actual, expected, `seed ${seed}: ${JSON.stringify(limit)}`);
  }
});

t.test("sliding window: 40 random sequences of 300 requests agree with the weighted model", async (t) => {
  let over = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const random = seededRandom(seed);
    const minute = random() < 0.15;
    const limit = limitOf("sliding_window", between(random, 0, 12), minute ? "minute" : "second", {
      unitMultiplier: minute ? 1 : between(random, 1, 7),
    });
    const model = new SlidingModel(limit.requestsPerUnit, limit.windowSeconds * 1000);
    const { actual, expected } = runWindowSequence(limit, seed, 300, model);
    t.strictSame(actual, expected, `seed ${seed}: ${JSON.stringify(limit)}`);
    over += actual.filter((answer) => answer.over).length;
  }
  t.ok(over > 1000, `${over} over-limit answers among 12 000: the refusal paths are exercised`);
});

t.test("token bucket: 60 random sequences of 400 requests agree with exact GCRA", async (t) => {
  let refused = 0;
  let exactFits = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const random = seededRandom(seed);
    const unit = ["second", "second", "minute", "hour"][between(random, 0, 3)]!;
    const limit = limitOf("token_bucket", between(random, 1, 20), unit, {
      unitMultiplier: unit === "second" ? between(random, 1, 3) : 1,
      burst: between(random, 1, 25),
    });
    const operation = operationFor(limit, BASE, 0, 1, NOW_MS, 0) as BucketOperation;
    const intervalUs = operation.emissionIntervalUs;
    const model = new BucketModel(limit.requestsPerUnit, limit.burst, limit.windowSeconds);
    const cells: CounterCells = new Map();
    // Microsecond clock steps, at today's magnitude: mostly none or a fraction of a token interval.
    let nowUs = NOW_MS * 1000 + between(random, 0, 999_999);
    const actual: Answer[] = [];
    const expected: Answer[] = [];
    for (let step = 0; step < 400; step++) {
      const kind = random();
      if (kind < 0.35) nowUs += 0;
      else if (kind < 0.9) nowUs += between(random, 1, Math.ceil(intervalUs * 1.5));
      else nowUs += between(random, 1, Math.ceil(intervalUs * (limit.burst + 2)));
      const hits = hitsOf(random, limit.burst + 2);
      const [allowed, debtUs] = applyBucketOperation(cells, { ...operation, hits }, nowUs);
      const outcome = tokenBucketOutcome(limit, hits, allowed!, debtUs!);
      const nowMs = nowUs / 1000;
      const { allowed: modelAllowed, ...modelOutcome } = model.hit(nowUs, hits);
      actual.push({ step, nowMs, hits, ...outcome });
      expected.push({ step, nowMs, hits, ...modelOutcome });
      if (modelAllowed !== (allowed === 1)) t.fail(`seed ${seed} step ${step}: store and model disagree`);
      if (!modelAllowed) refused++;
      if (modelAllowed && hits > 0 && outcome.remaining === 0) exactFits++;
    }
    t.strictSame(actual, expected, `seed ${seed}: ${JSON.stringify(limit)}`);
  }
  t.ok(refused > 2000, `${refused} refusals among 24 000 requests`);
  t.ok(exactFits > 500, `${exactFits} requests took the last token`);
});

t.test("token bucket through applyOperation's millisecond clock agrees with exact GCRA", async (t) => {
  for (let seed = 101; seed <= 120; seed++) {
    const random = seededRandom(seed);
    const limit = limitOf("token_bucket", between(random, 1, 30), "second", {
      burst: between(random, 1, 10),
    });
    const model = new BucketModel(limit.requestsPerUnit, limit.burst, limit.windowSeconds);
    const cells: CounterCells = new Map();
    let nowMs = NOW_MS;
    const actual: Answer[] = [];
    const expected: Answer[] = [];
    for (let step = 0; step < 300; step++) {
      nowMs += stepMs(random, 200);
      const hits = hitsOf(random, limit.burst + 1);
      const operation = operationFor(limit, BASE, 0, hits, nowMs, 0)!;
      const outcome = outcomeFor(limit, hits, applyOperation(cells, operation, nowMs), 0, nowMs);
      const { allowed: _, ...modelOutcome } = model.hit(nowMs * 1000, hits);
      actual.push({ step, nowMs, hits, ...outcome });
      expected.push({ step, nowMs, hits, ...modelOutcome });
    }
    t.strictSame(actual, expected, `seed ${seed}: ${JSON.stringify(limit)}`);
  }
});
