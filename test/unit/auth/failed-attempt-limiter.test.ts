import t from "tap";
import type { LoginAttempt } from "../../../src/auth/failed-attempt-limiter.js";
import { createFailedAttemptLimiter } from "../../../src/daemon/failed-attempt-limiter.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";

const TOTAL_HITS = "ratelimit.service.rate_limit.ratelimitd_auth.remote_address.total_hits";
const OVER_LIMIT = "ratelimit.service.rate_limit.ratelimitd_auth.remote_address.over_limit";

function limiterAt(failuresPerMinute: number, clock: { now: number }) {
  const stats = new StatsRegistry({ maxDynamicKeys: 100 });
  const limiter = createFailedAttemptLimiter({ failuresPerMinute, stats, nowMs: () => clock.now });
  return { limiter, stats };
}

/** The attempt's refusal, or "allowed". */
const outcome = (attempt: LoginAttempt) => (attempt.allowed ? "allowed" : attempt.retryAfterSeconds);

t.test("failures use up the budget until the minute ends; other addresses are not affected", async (t) => {
  const clock = { now: Date.UTC(2026, 10, 21, 12, 0, 10) }; // 10 s into a minute
  const { limiter } = limiterAt(2, clock);
  t.equal(outcome(await limiter.attempt("10.0.0.1")), "allowed", "first failure");
  t.equal(outcome(await limiter.attempt("10.0.0.1")), "allowed", "second failure");
  t.equal(outcome(await limiter.attempt("10.0.0.1")), 50, "refused for the rest of the minute");
  t.equal(outcome(await limiter.attempt("10.0.0.1")), 50, "and refusals do not end it");
  t.equal(outcome(await limiter.attempt("10.0.0.2")), "allowed", "another address is not affected");
  clock.now += 49_500;
  t.equal(outcome(await limiter.attempt("10.0.0.1")), 1);
  clock.now += 500;
  t.equal(outcome(await limiter.attempt("10.0.0.1")), "allowed", "a new window");
});

t.test("attempts are counted before their check: concurrent ones cannot exceed the budget", async (t) => {
  const clock = { now: Date.UTC(2026, 10, 21, 12, 0, 0) };
  const { limiter } = limiterAt(3, clock);
  const burst = await Promise.all(Array.from({ length: 10 }, () => limiter.attempt("10.0.0.1")));
  t.strictSame(burst.map(outcome), ["allowed", "allowed", "allowed", ...Array(7).fill(60)]);
  // Two of the checks find good credentials: their attempts are given back, one stays a failure.
  for (const attempt of burst.slice(0, 2)) if (attempt.allowed) await attempt.release();
  t.equal(outcome(await limiter.attempt("10.0.0.1")), "allowed");
  t.equal(outcome(await limiter.attempt("10.0.0.1")), "allowed");
  t.equal(outcome(await limiter.attempt("10.0.0.1")), 60, "three failures now: the budget is used");
});

t.test("good credentials never use up the budget", async (t) => {
  const clock = { now: Date.UTC(2026, 10, 21, 12, 0, 0) };
  const { limiter } = limiterAt(1, clock);
  for (let i = 0; i < 5; i++) {
    const attempt = await limiter.attempt("10.0.0.1");
    t.equal(outcome(attempt), "allowed");
    if (attempt.allowed) await attempt.release();
  }
});

t.test("its stats are the rule's attempts and refusals, nothing that reads like a failure", async (t) => {
  const clock = { now: Date.UTC(2026, 10, 21, 12, 0, 0) };
  const { limiter, stats } = limiterAt(1, clock);
  const lines = () => stats.snapshotLines().filter((line) => /auth/.test(line));
  t.strictSame(lines(), [`${OVER_LIMIT}: 0`, `${TOTAL_HITS}: 0`], "shown from the start");
  await limiter.attempt("10.0.0.1");
  await limiter.attempt("10.0.0.1");
  await limiter.attempt("10.0.0.2");
  t.strictSame(lines(), [`${OVER_LIMIT}: 1`, `${TOTAL_HITS}: 3`]);
});
