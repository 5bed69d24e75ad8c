import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { CODE_OK, CODE_OVER_LIMIT, type Decision } from "../../../src/engine/decision-request.js";
import {
  counterValue,
  entries,
  newService,
  request,
  ruleCounts,
  TestClock,
} from "../engine/decision-fixture.js";

// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT through RateLimitService and a MemoryStore: the reference's
// integration example, key2 20/min + key3 10/h in one request.
const YAML = `domain: d
descriptors:
  - key: key2
    rate_limit: {unit: minute, requests_per_unit: 20}
  - key: key3
    rate_limit: {unit: hour, requests_per_unit: 10}
`;
const NOW_MS = 7200_000; // an exact hour: both windows start here
const KEY2 = "d_key2_value2_7200";
const KEY3 = "d_key3_value3_7200";
const REQ = request("d", [entries(["key2", "value2"]), entries(["key3", "value3"])]);

t.test("from the 11th request key3 is OVER and key2's counter stops at 10", async (t) => {
  const { service, store, registry } = newService(YAML, new TestClock(NOW_MS), {
    stopIncrementWhenOverLimit: true,
  });
  for (let i = 1; i <= 10; i++) {
    const decision = await service.shouldRateLimit(REQ);
    t.equal(decision.overallCode, CODE_OK, `request ${i}`);
    t.same(
      decision.statuses.map((s) => s.limitRemaining),
      [20 - i, 10 - i],
      `request ${i}`,
    );
  }
  for (let i = 11; i <= 20; i++) {
    const decision = await service.shouldRateLimit(REQ);
    t.equal(decision.overallCode, CODE_OVER_LIMIT, `request ${i}`);
    t.same(
      decision.statuses.map((s) => [s.code, s.limitRemaining]),
      [
        [CODE_OK, 10],
        [CODE_OVER_LIMIT, 0],
      ],
      `request ${i}`,
    );
  }
  t.equal(await counterValue(store, KEY2), 10);
  t.equal(await counterValue(store, KEY3), 20);
  // Stats still count the full addend for every descriptor (envoyproxy/ratelimit #808).
  t.same(ruleCounts(registry, "d.key2"), {
    total_hits: 20,
    over_limit: 0,
    near_limit: 0,
    within_limit: 20,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
  t.same(ruleCounts(registry, "d.key3"), {
    total_hits: 20,
    over_limit: 10,
    near_limit: 2,
    within_limit: 10,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
});

t.test("with the local cache, key3 is answered locally and key2 still stops at 10", async (t) => {
  const cache = new LocalOverLimitCache(1024 * 1024);
  const { service, store, registry } = newService(YAML, new TestClock(NOW_MS), {
    stopIncrementWhenOverLimit: true,
    engine: { localCache: cache },
  });
  for (let i = 1; i <= 20; i++) await service.shouldRateLimit(REQ);
  const last = await service.shouldRateLimit(REQ);
  t.same(
    last.statuses.map((s) => [s.code, s.limitRemaining]),
    [
      [CODE_OK, 10],
      [CODE_OVER_LIMIT, 0],
    ],
  );
  t.equal(await counterValue(store, KEY2), 10);
  t.equal(await counterValue(store, KEY3), 11, "only the request that went over reached the store");
  t.match(ruleCounts(registry, "d.key3"), {
    total_hits: 21,
    over_limit: 11,
    over_limit_with_local_cache: 10,
  });
  t.match(ruleCounts(registry, "d.key2"), { total_hits: 21, within_limit: 21 });
});

t.test("without the setting key2 keeps counting to its own limit", async (t) => {
  const { service, store } = newService(YAML, new TestClock(NOW_MS));
  let last: Decision | undefined;
  for (let i = 1; i <= 20; i++) last = await service.shouldRateLimit(REQ);
  t.same(
    last!.statuses.map((s) => [s.code, s.limitRemaining]),
    [
      [CODE_OK, 0],
      [CODE_OVER_LIMIT, 0],
    ],
  );
  t.equal(await counterValue(store, KEY2), 20);
  t.equal(await counterValue(store, KEY3), 20);
});

t.test("while nothing is over, every key counts its hits", async (t) => {
  const { service, store } = newService(YAML, new TestClock(NOW_MS), { stopIncrementWhenOverLimit: true });
  await service.shouldRateLimit({ ...REQ, hitsAddend: 4 });
  await service.shouldRateLimit({ ...REQ, hitsAddend: 6 });
  t.equal(await counterValue(store, KEY2), 10);
  t.equal(await counterValue(store, KEY3), 10, "exactly at the limit is not over");
  const over = await service.shouldRateLimit(REQ);
  t.same(
    over.statuses.map((s) => s.limitRemaining),
    [10, 0],
  );
  t.equal(await counterValue(store, KEY2), 10);
  t.equal(await counterValue(store, KEY3), 11);
});

t.test("the next window starts counting again", async (t) => {
  const clock = new TestClock(NOW_MS);
  const { service, store } = newService(YAML, clock, { stopIncrementWhenOverLimit: true });
  for (let i = 1; i <= 11; i++) await service.shouldRateLimit(REQ);
  clock.ms = NOW_MS + 60_000;
  const decision = await service.shouldRateLimit(REQ);
  t.same(
    decision.statuses.map((s) => [s.code, s.limitRemaining]),
    [
      [CODE_OK, 20],
      [CODE_OVER_LIMIT, 0],
    ],
  );
  t.equal(
    await counterValue(store, "d_key2_value2_7260"),
    0,
    "key2's new window is held at 0 while key3 is over",
  );
  t.equal(await counterValue(store, KEY3), 12);
});
