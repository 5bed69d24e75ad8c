import t from "tap";
import { FailedAttemptLimiter } from "../../../src/auth/failed-attempt-limiter.js";
import { silentLogger } from "../../../src/observability/logger.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";

t.test("an address is blocked after its allowance, until the minute ends; others are not", async (t) => {
  let now = Date.UTC(2026, 10, 21, 12, 0, 10); // 10 s into a minute
  const stats = new StatsRegistry({ maxDynamicKeys: 100 });
  const limiter = new FailedAttemptLimiter({
    failuresPerMinute: 2,
    stats,
    logger: silentLogger,
    nowMs: () => now,
  });
  t.equal(limiter.retryAfterSeconds("10.0.0.1"), 0);
  t.equal(limiter.recordFailure("10.0.0.1"), 0);
  t.equal(limiter.recordFailure("10.0.0.1"), 0);
  t.equal(limiter.recordFailure("10.0.0.1"), 50, "blocked for the rest of the minute");
  t.equal(limiter.retryAfterSeconds("10.0.0.1"), 50);
  t.equal(limiter.retryAfterSeconds("10.0.0.2"), 0, "another address is not affected");
  now += 49_500;
  t.equal(limiter.retryAfterSeconds("10.0.0.1"), 1);
  now += 500;
  t.equal(limiter.retryAfterSeconds("10.0.0.1"), 0, "free at the next minute");
  t.equal(limiter.recordFailure("10.0.0.1"), 0, "a new window");
  const lines = stats.snapshotLines();
  t.ok(
    lines.includes("ratelimit.service.rate_limit.ratelimitd_auth.remote_address.total_hits: 4"),
    lines.join("\n"),
  );
  t.ok(lines.includes("ratelimit.service.rate_limit.ratelimitd_auth.remote_address.over_limit: 1"));
});
