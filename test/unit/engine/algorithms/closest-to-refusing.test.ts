/**
 * Stacked limits (`rate_limits`): the descriptor reports the limit closest to refusing — least remaining,
 * then longest reset, then the first.
 */
import t from "tap";
import { closestToRefusing } from "../../../../src/engine/algorithms/closest-to-refusing.js";
import { fixedWindowOutcome } from "../../../../src/engine/algorithms/fixed-window.js";
import { tokenBucketOutcome } from "../../../../src/engine/algorithms/token-bucket.js";
import { limitOf, NOW_MS } from "./algorithm-fixtures.js";

t.test("burst 20/s remaining 5 and sustained 1000/h remaining 3 → the hourly limit", async (t) => {
  t.equal(
    closestToRefusing([
      { remaining: 5, resetSeconds: 1 },
      { remaining: 3, resetSeconds: 1800 },
    ]),
    1,
  );
});

t.test("remaining 0 and 0, resets 3 s and 50 s → the 50 s one, over or not", async (t) => {
  t.equal(
    closestToRefusing([
      { remaining: 0, resetSeconds: 3 },
      { remaining: 0, resetSeconds: 50 },
    ]),
    1,
  );
  t.equal(
    closestToRefusing([
      { remaining: 0, resetSeconds: 50 },
      { remaining: 0, resetSeconds: 3 },
    ]),
    0,
  );
});

t.test("remaining 2 and 2, resets 10 s and 10 s → the first", async (t) => {
  t.equal(
    closestToRefusing([
      { remaining: 2, resetSeconds: 10 },
      { remaining: 2, resetSeconds: 10 },
      { remaining: 4, resetSeconds: 99 },
    ]),
    0,
  );
});

t.test("one limit → it; none → -1", async (t) => {
  t.equal(closestToRefusing([{ remaining: 7, resetSeconds: 1 }]), 0);
  t.equal(closestToRefusing([]), -1);
});

t.test(
  "a token bucket 20/s (burst 20, 12 tokens used) and a fixed 1000/h window at 998 after 1 hit → the window",
  async (t) => {
    const outcomes = [
      tokenBucketOutcome(limitOf("token_bucket", 20, "second"), 1, 1, 600_000),
      fixedWindowOutcome(limitOf("fixed_window", 1000, "hour"), 1, 998, NOW_MS + 1_800_000),
    ];
    t.strictSame(
      outcomes.map((o) => [o.over, o.remaining, o.resetSeconds]),
      [
        [false, 8, 1],
        [false, 2, 1800],
      ],
    );
    t.equal(closestToRefusing(outcomes), 1);
  },
);
