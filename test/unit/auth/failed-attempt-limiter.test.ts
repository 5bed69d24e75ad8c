import t from "tap";
import { FailedAttemptLimiter } from "../../../src/auth/failed-attempt-limiter.js";
import { Logger, silentLogger } from "../../../src/observability/logger.js";
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

t.test("its fixed rules are not a configuration load: nothing is logged or counted as one", async (t) => {
  // The daemon builds this limiter at start-up; a "Successfully loaded new configuration" line from it would
  // stand next to the real rules' "Error loading new configuration" and contradict it.
  const lines: string[] = [];
  const stats = new StatsRegistry({ maxDynamicKeys: 100 });
  const limiter = new FailedAttemptLimiter({
    failuresPerMinute: 1,
    stats,
    logger: new Logger({ level: "trace", format: "text", write: (line) => lines.push(line) }),
  });
  t.equal(limiter.recordFailure("10.0.0.1"), 0, "the rules are active");
  t.same(lines, []);
  t.ok(
    stats.snapshotLines().includes("ratelimit.auth.config_load_success: 0"),
    stats.snapshotLines().join("\n"),
  );
});
