/**
 * token_bucket (GCRA): one step of the store's arithmetic (gcraStep) and the outcome in counter terms,
 * with limit = burst, from the store's [allowed, debtUs].
 */
import t from "tap";
import type { AlgorithmLimit } from "../../../../src/engine/algorithms/algorithm-limit.js";
import { type BucketTat, gcraStep } from "../../../../src/engine/algorithms/gcra-step.js";
import { tokenBucketOutcome } from "../../../../src/engine/algorithms/token-bucket.js";
import { limitOf, NOW_MS } from "./algorithm-fixtures.js";

const NOW_US = NOW_MS * 1000 + 123_457;
/** T = 100 000 µs, capacity 1 s. */
const TEN_PER_SECOND = limitOf("token_bucket", 10, "second");
/** T = 10 s, capacity 30 s. */
const SIX_PER_MINUTE_BURST_3 = limitOf("token_bucket", 6, "minute", { burst: 3 });

function outcome(limit: AlgorithmLimit, hits: number, allowed: number, debtUs: number) {
  return tokenBucketOutcome(limit, hits, allowed, debtUs);
}

t.test(
  "gcraStep, 10/s burst 10, empty store, 1 hit → allowed, debt 100 000 µs, TAT kept 101 ms",
  async (t) => {
    t.strictSame(gcraStep(undefined, NOW_US, 1, 100_000, 10), {
      allowed: true,
      debtUs: 100_000,
      tat: { wholeUs: NOW_US + 100_000, fractionUs: 0 },
      ttlMs: 101,
    });
  },
);

t.test("gcraStep, 10/s burst 10, debt 1 s (full), 1 hit → refused, debt 1 s, nothing stored", async (t) => {
  const stored: BucketTat = { wholeUs: NOW_US + 1_000_000, fractionUs: 0 };
  t.strictSame(gcraStep(stored, NOW_US, 1, 100_000, 10), {
    allowed: false,
    debtUs: 1_000_000,
    tat: undefined,
    ttlMs: 0,
  });
});

t.test("gcraStep, a TAT in the past counts as now: 1 hit → debt 100 000 µs", async (t) => {
  const stored: BucketTat = { wholeUs: NOW_US - 5_000_000, fractionUs: 0.5 };
  t.strictSame(gcraStep(stored, NOW_US, 1, 100_000, 10), {
    allowed: true,
    debtUs: 100_000,
    tat: { wholeUs: NOW_US + 100_000, fractionUs: 0 },
    ttlMs: 101,
  });
});

t.test("gcraStep, 0 hits → allowed with the current debt, nothing stored", async (t) => {
  const stored: BucketTat = { wholeUs: NOW_US + 250_000, fractionUs: 0.25 };
  t.strictSame(gcraStep(stored, NOW_US, 0, 100_000, 10), {
    allowed: true,
    debtUs: 250_000.25,
    tat: undefined,
    ttlMs: 0,
  });
});

t.test(
  "gcraStep, 7/s burst 7 at today's clock: seven 1-hit requests in the same µs all fit, the eighth is refused",
  async (t) => {
    // T = 142857.14285714287 µs. One double near 1.78 × 10¹⁵ µs holds a TAT only to 0.25 µs: each
    // addition rounds up here, and the seventh token would miss the capacity by 0.75 µs.
    const interval = 1_000_000 / 7;
    const now = NOW_MS * 1000;
    let stored: BucketTat | undefined;
    const answers: [boolean, number][] = [];
    for (let i = 1; i <= 8; i++) {
      const step = gcraStep(stored, now, 1, interval, 7);
      answers.push([step.allowed, Math.round(step.debtUs)]);
      stored = step.tat ?? stored;
    }
    t.strictSame(answers, [
      [true, 142_857],
      [true, 285_714],
      [true, 428_571],
      [true, 571_429],
      [true, 714_286],
      [true, 857_143],
      [true, 1_000_000],
      [false, 1_000_000],
    ]);
    t.match(
      outcome(limitOf("token_bucket", 7, "second"), 1, 1, answers[6]![1]),
      { over: false, before: 6, after: 7, remaining: 0 },
      "the seventh takes the last token",
    );
  },
);

t.test("gcraStep: fractions of a µs carry into the whole part", async (t) => {
  const first = gcraStep(undefined, NOW_US, 1, 0.75, 10);
  t.strictSame(first.tat, { wholeUs: NOW_US, fractionUs: 0.75 });
  const second = gcraStep(first.tat, NOW_US, 1, 0.75, 10);
  t.strictSame(second.tat, { wholeUs: NOW_US + 1, fractionUs: 0.5 });
  t.equal(second.debtUs, 1.5);
});

t.test(
  "token bucket 10/s burst 10, fresh, 1 hit → OK: before 0, after 1, remaining 9, reset 1 s",
  async (t) => {
    t.strictSame(outcome(TEN_PER_SECOND, 1, 1, 100_000), {
      over: false,
      limit: 10,
      before: 0,
      after: 1,
      remaining: 9,
      resetSeconds: 1,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "token bucket 10/s burst 10, debt 0.9 s, 1 hit → OK: the last token, remaining 0, reset 1 s",
  async (t) => {
    t.strictSame(outcome(TEN_PER_SECOND, 1, 1, 1_000_000), {
      over: false,
      limit: 10,
      before: 9,
      after: 10,
      remaining: 0,
      resetSeconds: 1,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "token bucket 10/s burst 10, debt 1 s, 1 hit → OVER: before 10, after 11, reset 1 s, cached 99 ms",
  async (t) => {
    // The next token comes in 100 ms: a one-hit request is certainly refused for 99 whole ms.
    t.strictSame(outcome(TEN_PER_SECOND, 1, 0, 1_000_000), {
      over: true,
      limit: 10,
      before: 10,
      after: 11,
      remaining: 0,
      resetSeconds: 1,
      overLimitCacheMs: 99,
    });
  },
);

t.test(
  "token bucket 6/min burst 3, debt 5 s, 2 hits → OK with debt 25 s: before 1, after 3, remaining 0, reset 25 s",
  async (t) => {
    t.strictSame(outcome(SIX_PER_MINUTE_BURST_3, 2, 1, 25_000_000), {
      over: false,
      limit: 3,
      before: 1,
      after: 3,
      remaining: 0,
      resetSeconds: 25,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "token bucket 6/min burst 3, debt 25 s, 1 hit → OVER: before 3, after 4, reset 5 s, cached 4 999 ms",
  async (t) => {
    t.strictSame(outcome(SIX_PER_MINUTE_BURST_3, 1, 0, 25_000_000), {
      over: true,
      limit: 3,
      before: 3,
      after: 4,
      remaining: 0,
      resetSeconds: 5,
      overLimitCacheMs: 4_999,
    });
  },
);

t.test(
  "token bucket 6/min burst 3, debt 25 s, 2 hits → OVER: reset 15 s, cached 4 999 ms (one hit fits sooner)",
  async (t) => {
    t.strictSame(outcome(SIX_PER_MINUTE_BURST_3, 2, 0, 25_000_000), {
      over: true,
      limit: 3,
      before: 3,
      after: 5,
      remaining: 0,
      resetSeconds: 15,
      overLimitCacheMs: 4_999,
    });
  },
);

t.test(
  "token bucket 6/min burst 3, debt 25 s, 4 hits > burst → OVER for ever: reset 25 s (until full)",
  async (t) => {
    t.strictSame(outcome(SIX_PER_MINUTE_BURST_3, 4, 0, 25_000_000), {
      over: true,
      limit: 3,
      before: 3,
      after: 7,
      remaining: 0,
      resetSeconds: 25,
      overLimitCacheMs: 4_999,
    });
  },
);

t.test("token bucket 6/min burst 3, full, 0 hits → OK: remaining 3, reset 1 s", async (t) => {
  t.strictSame(outcome(SIX_PER_MINUTE_BURST_3, 0, 1, 0), {
    over: false,
    limit: 3,
    before: 0,
    after: 0,
    remaining: 3,
    resetSeconds: 1,
    overLimitCacheMs: 0,
  });
});

t.test("token bucket 6/min burst 3, debt 100 µs over a token, refused → over, not cached", async (t) => {
  // 1 hit at debt 20.0001 s would need 30.0001 s of capacity 30: it fits 100 µs later.
  t.strictSame(outcome(SIX_PER_MINUTE_BURST_3, 1, 0, 20_000_100), {
    over: true,
    limit: 3,
    before: 3,
    after: 4,
    remaining: 0,
    resetSeconds: 1,
    overLimitCacheMs: 0,
  });
});
