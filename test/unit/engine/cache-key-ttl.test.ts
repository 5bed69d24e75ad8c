/**
 * Counter TTL and duration_until_reset through the engine (the reference's src/limiter/cache_key.go,
 * src/utils/utilities.go): TTL = divider + jitter in [0, EXPIRATION_JITTER_MAX_SECONDS − 1], jitter source
 * injected; reset = divider − now mod divider.
 */
import t from "tap";
import type { DecisionEngineOptions } from "../../../src/engine/decision-engine.js";
import { descriptorsOf, engineFor, rulesFrom } from "./matching-fixtures.js";

const rules = rulesFrom(`
domain: d
descriptors:
  - key: s
    rate_limit: { unit: second, requests_per_unit: 10 }
  - key: m
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: h
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: w
    rate_limit: { unit: week, requests_per_unit: 10 }
`);

function ttlsAt(
  options: Partial<DecisionEngineOptions>,
  nowSeconds: number,
  ...pairs: string[]
): (number | undefined)[] {
  const plan = engineFor(rules, options).plan(
    rules.ruleSet,
    { domain: "d", descriptors: descriptorsOf(...pairs.map((pair) => [pair])), hitsAddend: 1 },
    nowSeconds,
  );
  return plan.increments.map((increment) => increment.ttlSeconds);
}

// TTL = divider + (max > 0 ? rand.Int63n(max) : 0).
t.test("TTL is the divider when jitter is off", async (t) => {
  t.same(ttlsAt({ expirationJitterMaxSeconds: 0 }, 1234, "s=x", "m=x", "h=x", "w=x"), [1, 60, 3600, 604800]);
  t.same(
    ttlsAt({ expirationJitterMaxSeconds: 0, random: () => 0.99 }, 1234, "s=x", "m=x"),
    [1, 60],
    "random is not consulted when the maximum is 0",
  );
});

// Jitter ∈ [0, max−1]: the injected source spans exactly that range.
t.test("TTL adds jitter in [0, max-1]", async (t) => {
  t.same(
    ttlsAt({ expirationJitterMaxSeconds: 300, random: () => 0 }, 1234, "s=x", "m=x"),
    [1, 60],
    "lowest draw",
  );
  t.same(ttlsAt({ expirationJitterMaxSeconds: 300, random: () => 0.5 }, 1234, "s=x", "m=x"), [151, 210]);
  t.same(
    ttlsAt({ expirationJitterMaxSeconds: 300, random: () => 0.999_999_999 }, 1234, "s=x", "m=x"),
    [300, 359],
    "highest draw is max-1: a per-second key lives 1–300 s",
  );
  t.same(
    ttlsAt({ expirationJitterMaxSeconds: 1, random: () => 0.999_999_999 }, 1234, "m=x"),
    [60],
    "max 1 → jitter 0",
  );

  const draws = [0.1, 0.9];
  const perKey = ttlsAt(
    { expirationJitterMaxSeconds: 10, random: () => draws.shift() ?? 0 },
    1234,
    "m=x",
    "h=x",
  );
  t.same(perKey, [61, 3609], "one draw per key");
});

// TTL and window do not depend on where in the window the request falls.
t.test("TTL is independent of the position in the window", async (t) => {
  t.same(ttlsAt({}, 1200, "m=x"), [60]);
  t.same(ttlsAt({}, 1259, "m=x"), [60]);
});

// duration_until_reset is set on every status that has a current_limit, and not set for nil limits.
t.test("duration_until_reset on the response statuses", async (t) => {
  const engine = engineFor(rules);
  const at = (now: number, ...pairs: string[]) => {
    const plan = engine.plan(
      rules.ruleSet,
      { domain: "d", descriptors: descriptorsOf(...pairs.map((pair) => [pair])), hitsAddend: 1 },
      now,
    );
    const decision = engine.complete(
      plan,
      plan.increments.map(() => 1),
      now,
    );
    return decision.statuses.map((status) => status.durationUntilResetSeconds);
  };
  t.same(at(1234, "s=x", "m=x", "h=x"), [1, 26, 2366]);
  t.same(at(1200, "m=x"), [60], "at the window start: the whole window, never 0");
  t.same(at(1259, "m=x"), [1]);
  t.same(at(1234, "nomatch=x", "m=x"), [0, 26], "unmatched descriptor: not set");

  const over = engine.plan(
    rules.ruleSet,
    { domain: "d", descriptors: descriptorsOf(["m=x"]), hitsAddend: 1 },
    1234,
  );
  const decision = engine.complete(over, [11], 1250);
  t.equal(decision.statuses[0]?.code, 2, "over limit");
  t.equal(decision.statuses[0]?.durationUntilResetSeconds, 10, "from the clock read at completion");
});
