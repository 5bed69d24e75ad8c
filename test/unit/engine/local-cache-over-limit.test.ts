import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import type { OverLimitCache } from "../../../src/engine/over-limit-cache.js";
import {
  CLOCK_SECONDS,
  counterValue,
  decideWith,
  entries,
  newEngine,
  newRegistry,
  newService,
  request,
  ruleCounts,
  rulesFromYaml,
  TestClock,
} from "./decision-fixture.js";

// Local over-limit cache, keyed on cache key + limit (docs/compatibility.md; envoyproxy/ratelimit
// #1077).
const YAML = `domain: d
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: q
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 10}
`;
const KEY = "d_k_v_2220";

function setUp() {
  const cache = new LocalOverLimitCache(1024 * 1024);
  const clock = new TestClock(CLOCK_SECONDS * 1000);
  return { cache, clock, ...newService(YAML, clock, { engine: { localCache: cache } }) };
}

t.test("an over-limit result populates the cache; the next request skips the store", async (t) => {
  const { service, store, registry, cache } = setUp();
  const req = request("d", [entries(["k", "v"])]);
  for (let i = 0; i < 10; i++) t.equal((await service.shouldRateLimit(req)).overallCode, CODE_OK);
  t.equal(cache.isOverLimit(KEY, 10), false, "not cached while within the limit");
  t.equal((await service.shouldRateLimit(req)).overallCode, CODE_OVER_LIMIT);
  t.equal(cache.isOverLimit(KEY, 10), true);
  t.equal(await counterValue(store, KEY), 11);
  const answered = await service.shouldRateLimit({ ...req, hitsAddend: 2 });
  t.match(answered.statuses[0], { code: CODE_OVER_LIMIT, limitRemaining: 0, durationUntilResetSeconds: 58 });
  t.equal(await counterValue(store, KEY), 11, "no increment for a local-cache hit");
  t.same(ruleCounts(registry, "d.k"), {
    total_hits: 13,
    over_limit: 3,
    near_limit: 2,
    within_limit: 10,
    shadow_mode: 0,
    over_limit_with_local_cache: 2,
  });
});

t.test("plan() reports the local-cache hit and plans no increment for it", async (t) => {
  const registry = newRegistry();
  const cache = new LocalOverLimitCache(1024 * 1024);
  const engine = newEngine(registry, { localCache: cache });
  const rules = rulesFromYaml(registry, YAML);
  const req = request("d", [entries(["k", "v"]), entries(["k", "other"])]);
  t.equal(engine.plan(rules, req, CLOCK_SECONDS).anyLocalCacheHit, false);
  cache.markOverLimit(KEY, 10, 60);
  const plan = engine.plan(rules, req, CLOCK_SECONDS);
  t.equal(plan.anyLocalCacheHit, true);
  t.same(
    plan.increments.map((i) => i.key),
    ["d_k_other_2220"],
  );
  const decision = engine.complete(plan, [1], CLOCK_SECONDS);
  t.same(
    decision.statuses.map((s) => [s.code, s.limitRemaining]),
    [
      [CODE_OVER_LIMIT, 0],
      [CODE_OK, 9],
    ],
  );
  // total_hits counts both plans (2 descriptors each); over/within come from the second one only.
  t.match(ruleCounts(registry, "d.k"), {
    total_hits: 4,
    over_limit: 1,
    over_limit_with_local_cache: 1,
    within_limit: 1,
  });
});

t.test("keyed on the limit too: a higher override for the same descriptor is not blocked", async (t) => {
  const { service, store, cache } = setUp();
  const withLimit = (requestsPerUnit: number) =>
    request("d", [{ ...entries(["k", "v"]), limit: { requestsPerUnit, unit: 2 } }]);
  for (let i = 0; i < 5; i++) await service.shouldRateLimit(withLimit(5));
  t.equal((await service.shouldRateLimit(withLimit(5))).overallCode, CODE_OVER_LIMIT);
  t.equal(cache.isOverLimit(KEY, 5), true);
  const higher = await service.shouldRateLimit(withLimit(100));
  t.match(higher.statuses[0], { code: CODE_OK, limitRemaining: 93 });
  t.equal(await counterValue(store, KEY), 7, "the higher override reached the store");
  t.equal(
    (await service.shouldRateLimit(withLimit(5))).overallCode,
    CODE_OVER_LIMIT,
    "the low one stays blocked",
  );
  t.equal(await counterValue(store, KEY), 7);
});

t.test("a configured limit is not blocked by a lower override's entry either", async (t) => {
  const { service, store } = setUp();
  const low = request("d", [{ ...entries(["k", "v"]), limit: { requestsPerUnit: 1, unit: 2 } }]);
  await service.shouldRateLimit(low);
  t.equal((await service.shouldRateLimit(low)).overallCode, CODE_OVER_LIMIT);
  const configured = await service.shouldRateLimit(request("d", [entries(["k", "v"])]));
  t.match(configured.statuses[0], { code: CODE_OK, limitRemaining: 7 });
  t.equal(await counterValue(store, KEY), 3);
});

t.test("entries end with the window: the next window's key is not cached", async (t) => {
  const { service, store, clock } = setUp();
  const req = request("d", [entries(["k", "v"])]);
  for (let i = 0; i < 11; i++) await service.shouldRateLimit(req);
  clock.ms = 2279_999;
  t.equal((await service.shouldRateLimit(req)).overallCode, CODE_OVER_LIMIT, "same window: still blocked");
  clock.ms = 2280_000;
  const next = await service.shouldRateLimit(req);
  t.match(next.statuses[0], { code: CODE_OK, limitRemaining: 9, durationUntilResetSeconds: 60 });
  t.equal(await counterValue(store, "d_k_v_2280"), 1);
});

t.test("the cache entry's TTL is the window length, without jitter", async (t) => {
  const marks: [string, number, number][] = [];
  const recorder: OverLimitCache = {
    isOverLimit: () => false,
    markOverLimit: (key, limit, ttl) => void marks.push([key, limit, ttl]),
  };
  const registry = newRegistry();
  const engine = newEngine(registry, {
    localCache: recorder,
    expirationJitterMaxSeconds: 300,
    random: () => 0.5,
  });
  const rules = rulesFromYaml(registry, YAML);
  const plan = engine.plan(rules, request("d", [entries(["k", "v"]), entries(["q", "w"])]), CLOCK_SECONDS);
  t.same(
    plan.increments.map((i) => i.ttlSeconds),
    [210, 210],
    "the store TTL has the jitter",
  );
  engine.complete(plan, [11, 11], CLOCK_SECONDS);
  t.same(
    marks,
    [
      [KEY, 10, 60],
      ["d_q_w_2220", 10, 60],
    ],
    "quota-mode rules are cached too",
  );
  engine.complete(
    engine.plan(rules, request("d", [entries(["k", "v"])]), CLOCK_SECONDS),
    [10],
    CLOCK_SECONDS,
  );
  t.equal(marks.length, 2, "a counter equal to the limit is not over");
});

t.test("LocalOverLimitCache expires an entry after its TTL", async (t) => {
  let nowMs = 1_000_000;
  const original = Object.getOwnPropertyDescriptor(performance, "now");
  Object.defineProperty(performance, "now", { configurable: true, value: () => nowMs });
  t.teardown(() => {
    if (original) Object.defineProperty(performance, "now", original);
    else delete (performance as { now?: unknown }).now;
  });
  // lru-cache memoises its clock for 1 ms after each lookup (a real timer resets the memo); let that
  // timer run before moving the fake clock. This waits for lru-cache, not for a window.
  const memoReset = () => new Promise((resolve) => setTimeout(resolve, 5));
  const cache = new LocalOverLimitCache(1024 * 1024);
  cache.markOverLimit(KEY, 10, 60);
  t.equal(cache.isOverLimit(KEY, 10), true);
  await memoReset();
  nowMs = 1_059_999;
  t.equal(cache.isOverLimit(KEY, 10), true, "still cached 1 ms before the TTL ends");
  await memoReset();
  nowMs = 1_060_001;
  t.equal(cache.isOverLimit(KEY, 10), false, "gone after the TTL");
});

t.test("LocalOverLimitCache keys on cache key and limit", async (t) => {
  const cache = new LocalOverLimitCache(0);
  cache.markOverLimit(KEY, 10, 60);
  t.equal(cache.isOverLimit(KEY, 10), true);
  t.equal(cache.isOverLimit(KEY, 11), false);
  t.equal(cache.isOverLimit("d_k_w_2220", 10), false);
  t.match(cache.counts(), { entryCount: 1, hitCount: 1, missCount: 2, lookupCount: 3 });
});

t.test("decideWith on a local-cache hit in shadow mode answers OK and counts shadow_mode", async (t) => {
  const registry = newRegistry();
  const cache = new LocalOverLimitCache(1024 * 1024);
  const rules = rulesFromYaml(
    registry,
    "domain: d\ndescriptors:\n  - key: s\n    shadow_mode: true\n    rate_limit: {unit: minute, requests_per_unit: 1}\n",
  );
  cache.markOverLimit("d_s_v_2220", 1, 60);
  const decision = decideWith(
    newEngine(registry, { localCache: cache }),
    rules,
    request("d", [entries(["s", "v"])], 3),
    [],
  );
  t.equal(decision.overallCode, CODE_OK);
  t.match(ruleCounts(registry, "d.s"), {
    total_hits: 3,
    over_limit: 3,
    over_limit_with_local_cache: 3,
    shadow_mode: 3,
  });
});
