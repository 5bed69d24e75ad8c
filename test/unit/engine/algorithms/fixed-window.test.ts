/**
 * fixed_window: the reference's decision in counter terms (OVER when the counter after the increment
 * exceeds the limit; reset = seconds to the window's end), for windows of one unit and of N units.
 */
import t from "tap";
import { fixedWindowOutcome } from "../../../../src/engine/algorithms/fixed-window.js";
import { limitOf, NOW_MS } from "./algorithm-fixtures.js";

const PER_MINUTE = limitOf("fixed_window", 10, "minute");

t.test(
  "fixed window, limit 10/min, 20 s in, counter 7 after 1 hit → OK, remaining 3, reset 40 s",
  async (t) => {
    t.strictSame(fixedWindowOutcome(PER_MINUTE, 1, 7, NOW_MS + 20_000), {
      over: false,
      limit: 10,
      before: 6,
      after: 7,
      remaining: 3,
      resetSeconds: 40,
      overLimitCacheMs: 0,
    });
  },
);

t.test("fixed window, limit 10/min, 20 s in, counter 10 after 1 hit → OK, remaining 0", async (t) => {
  t.strictSame(fixedWindowOutcome(PER_MINUTE, 1, 10, NOW_MS + 20_000), {
    over: false,
    limit: 10,
    before: 9,
    after: 10,
    remaining: 0,
    resetSeconds: 40,
    overLimitCacheMs: 0,
  });
});

t.test(
  "fixed window, limit 10/min, 20 s in, counter 11 after 1 hit → OVER, reset 40 s, cached 39 999 ms",
  async (t) => {
    t.strictSame(fixedWindowOutcome(PER_MINUTE, 1, 11, NOW_MS + 20_000), {
      over: true,
      limit: 10,
      before: 10,
      after: 11,
      remaining: 0,
      resetSeconds: 40,
      overLimitCacheMs: 39_999,
    });
  },
);

t.test("fixed window, 59.999 s in, counter 12 after 2 hits → OVER, reset 1 s, not cached", async (t) => {
  t.strictSame(fixedWindowOutcome(PER_MINUTE, 2, 12, NOW_MS + 59_999), {
    over: true,
    limit: 10,
    before: 10,
    after: 12,
    remaining: 0,
    resetSeconds: 1,
    overLimitCacheMs: 0,
  });
});

t.test(
  "fixed window, counter 2 below 3 hits (increment suppressed) → before wraps as uint64 does",
  async (t) => {
    t.strictSame(fixedWindowOutcome(PER_MINUTE, 3, 2, NOW_MS), {
      over: false,
      limit: 10,
      before: Number.MAX_SAFE_INTEGER,
      after: 2,
      remaining: 8,
      resetSeconds: 60,
      overLimitCacheMs: 0,
    });
  },
);

t.test(
  "fixed window of 5 minutes, 150.5 s in, counter 21 after 1 hit, limit 20 → OVER, reset 150 s, cached 149 499 ms",
  async (t) => {
    const limit = limitOf("fixed_window", 20, "minute", { unitMultiplier: 5 });
    // NOW_MS is aligned to 5 minutes; +450.5 s is 150.5 s into the window starting at +300 s.
    t.strictSame(fixedWindowOutcome(limit, 1, 21, NOW_MS + 450_500), {
      over: true,
      limit: 20,
      before: 20,
      after: 21,
      remaining: 0,
      resetSeconds: 150,
      overLimitCacheMs: 149_499,
    });
  },
);
