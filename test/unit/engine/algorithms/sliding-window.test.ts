/**
 * sliding_window: estimate = floor(previous × (1 − elapsed / window)) + current, in counter terms; the
 * reset and the local cache's time from the estimate's decay with the refused request's hits given back.
 * Windows are one minute unless named; NOW_MS starts a minute (and a 5-minute window).
 */
import t from "tap";
import { slidingWindowOutcome } from "../../../../src/engine/algorithms/sliding-window.js";
import { limitOf, NOW_MS } from "./algorithm-fixtures.js";

const TEN_PER_MINUTE = limitOf("sliding_window", 10, "minute");

t.test(
  "sliding window, 25% into the window, previous 8, current 4 after 1 hit, limit 10 → OK, remaining 0, reset 105 s",
  async (t) => {
    // floor(8 × 0.75) + 4 = 10; the current count decays to 0 by the end of the next window: 120 − 15.
    t.strictSame(slidingWindowOutcome(TEN_PER_MINUTE, 1, 4, 8, NOW_MS + 15_000), {
      over: false,
      limit: 10,
      before: 9,
      after: 10,
      remaining: 0,
      resetSeconds: 105,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "sliding window, 25% in, previous 20, current 3 after 1 hit, limit 10 → OVER, fits strictly after 60%: reset 22 s, cached 21 000 ms",
  async (t) => {
    // floor(20 × 0.75) + 3 = 18 > 10. Released: floor(20 × (1 − e)) + 2 + 1 ≤ 10 needs 20 × (1 − e) < 8,
    // e > 0.6, i.e. later than 36 s: at 36 s (21 s from now) it is still 8 + 3; at 37 s it fits.
    t.strictSame(slidingWindowOutcome(TEN_PER_MINUTE, 1, 3, 20, NOW_MS + 15_000), {
      over: true,
      limit: 10,
      before: 17,
      after: 18,
      remaining: 0,
      resetSeconds: 22,
      overLimitCacheMs: 21_000,
    });
  },
);

t.test(
  "sliding window, 50% in, previous 10, current 12 after 2 hits, limit 10 → OVER until the next window: reset 37 s, cached 30 000 ms",
  async (t) => {
    // floor(10 × 0.5) + 12 = 17. Released current 10 fills this window; in the next one it is the
    // previous: floor(10 × (1 − e)) + 2 ≤ 10 needs e > 0.1, after 66 s (36 s from now: 37 s). One hit
    // fits as soon as the next window has begun (after 60 s), so the key is certainly over for 30 s.
    t.strictSame(slidingWindowOutcome(TEN_PER_MINUTE, 2, 12, 10, NOW_MS + 30_000), {
      over: true,
      limit: 10,
      before: 15,
      after: 17,
      remaining: 0,
      resetSeconds: 37,
      overLimitCacheMs: 30_000,
    });
  },
);

t.test(
  "sliding window, 25% in, 11 hits on an empty window, limit 10 → OVER for ever: reset 120 s, one hit fits at once",
  async (t) => {
    t.strictSame(slidingWindowOutcome(TEN_PER_MINUTE, 11, 11, 0, NOW_MS + 15_000), {
      over: true,
      limit: 10,
      before: 0,
      after: 11,
      remaining: 0,
      resetSeconds: 120,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "sliding window, 25% in, previous 5, nothing in this window, 0 hits → OK, remaining 7, reset 45 s",
  async (t) => {
    // Only the previous window counts: it has decayed by the end of this one.
    t.strictSame(slidingWindowOutcome(TEN_PER_MINUTE, 0, 0, 5, NOW_MS + 15_000), {
      over: false,
      limit: 10,
      before: 3,
      after: 3,
      remaining: 7,
      resetSeconds: 45,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "sliding window of 5 minutes, 20% in, previous 50, current 40 after 1 hit, limit 100 → OK, remaining 20, reset 540 s",
  async (t) => {
    const limit = limitOf("sliding_window", 100, "minute", { unitMultiplier: 5 });
    t.strictSame(slidingWindowOutcome(limit, 1, 40, 50, NOW_MS + 60_000), {
      over: false,
      limit: 100,
      before: 79,
      after: 80,
      remaining: 20,
      resetSeconds: 540,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "sliding window, limit 0, 1 hit 25% in → OVER: reset 120 s, cached until both windows end",
  async (t) => {
    const limit = limitOf("sliding_window", 0, "minute");
    t.strictSame(slidingWindowOutcome(limit, 1, 1, 0, NOW_MS + 15_000), {
      over: true,
      limit: 0,
      before: 0,
      after: 1,
      remaining: 0,
      resetSeconds: 120,
      overLimitCacheMs: 105_000,
    });
  },
);

t.test("sliding window, negative counts (a release that raced an expiry) count as 0", async (t) => {
  t.strictSame(slidingWindowOutcome(TEN_PER_MINUTE, 0, -1, -3, NOW_MS + 15_000), {
    over: false,
    limit: 10,
    before: 0,
    after: 0,
    remaining: 10,
    resetSeconds: 45,
    overLimitCacheMs: 0,
  });
});

t.test(
  "sliding window, 99.999% in, previous 4, current 10 after 1 hit, limit 10 → OVER, fits 1 s later in the next window",
  async (t) => {
    // floor(4 × 0.0000166…) + 10 = 10: OK with remaining 0. One hit more is OVER; released, the current 10
    // becomes the previous window 1 ms later, weighing 10 at its very start and 9 from 1 ms into it.
    t.match(slidingWindowOutcome(TEN_PER_MINUTE, 1, 10, 4, NOW_MS + 59_999), { over: false, remaining: 0 });
    t.strictSame(slidingWindowOutcome(TEN_PER_MINUTE, 1, 11, 4, NOW_MS + 59_999), {
      over: true,
      limit: 10,
      before: 10,
      after: 11,
      remaining: 0,
      resetSeconds: 1,
      overLimitCacheMs: 1,
    });
  },
);
