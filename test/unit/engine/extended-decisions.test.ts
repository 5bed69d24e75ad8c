import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { CODE_OK, CODE_OVER_LIMIT, type Decision } from "../../../src/engine/decision-request.js";
import { entries, MINUTE, newService, request, ruleCounts, SECOND, TestClock } from "./decision-fixture.js";

// The extensions end to end in one process (docs/algorithms.md): rules from YAML, the service,
// the memory store, a test clock. Every figure below is worked out by hand in the test's name or comment.

/** Unix second 1 800 000 000: a whole minute, and a whole 5 minutes, since the epoch. */
const T0 = 1_800_000_000_000;
const REQ = request("d", [entries(["k", "v"])]);

const RULES = `domain: d
descriptors:
  - key: k
    value: v
    rate_limit: {unit: minute, requests_per_unit: 10, algorithm: sliding_window}
  - key: b
    rate_limit: {unit: minute, requests_per_unit: 10, algorithm: token_bucket, burst: 5}
  - key: f
    rate_limit: {unit: minute, requests_per_unit: 3, unit_multiplier: 5}
  - key: s
    rate_limits:
      - {name: burst, unit: second, requests_per_unit: 2}
      - {name: sustained, unit: minute, requests_per_unit: 5}
  - key: mix
    rate_limits:
      - {unit: second, requests_per_unit: 100, algorithm: token_bucket, burst: 3}
      - {unit: hour, requests_per_unit: 1000, algorithm: sliding_window}
`;

async function decide(service: ReturnType<typeof newService>["service"], key: string, value = "") {
  return (await service.shouldRateLimit(request("d", [entries([key, value])]))) as Decision;
}

/** code, remaining, reset of the one status. */
function figures(decision: Decision): [number, number, number] {
  const status = decision.statuses[0]!;
  return [status.code, status.limitRemaining, status.durationUntilResetSeconds];
}

t.test(
  "sliding window, limit 10/min: previous window 10, 60% into this one (weight 0.4 → 4), 6 more fit and the 7th → OVER_LIMIT",
  async (t) => {
    const clock = new TestClock(T0 + 1_000);
    const { service, store, registry } = newService(RULES, clock);
    for (let i = 0; i < 10; i++) await service.shouldRateLimit(REQ);
    clock.ms = T0 + 60_000 + 36_000;
    const answers: [number, number, number][] = [];
    for (let i = 0; i < 7; i++) answers.push(figures((await service.shouldRateLimit(REQ)) as Decision));
    // OK: estimate 4 + current; remaining 10 − estimate; reset: 2 windows − 36 s (current counts move on).
    t.strictSame(answers.slice(0, 6), [
      [CODE_OK, 5, 84],
      [CODE_OK, 4, 84],
      [CODE_OK, 3, 84],
      [CODE_OK, 2, 84],
      [CODE_OK, 1, 84],
      [CODE_OK, 0, 84],
    ]);
    // Over: 4 + 7 = 11; with its hit given back, one second later floor(10 × 23/60) = 3, 3 + 6 + 1 ≤ 10.
    t.strictSame(answers[6], [CODE_OVER_LIMIT, 0, 1]);
    t.strictSame(
      await store.read([
        {
          kind: "sliding",
          key: "d_k_v_1800000060",
          previousKey: "d_k_v_1800000000",
          hits: 0,
          ttlSeconds: 120,
          perSecond: false,
        },
      ]),
      [6, 10],
      "the refused hit was given back; the previous window's counter is read under the fixed window's key",
    );
    t.strictSame(ruleCounts(registry, "d.k_v"), {
      total_hits: 17,
      over_limit: 1,
      // 8, 9, 10 of the 10 (threshold 8) and estimates 9, 10 later.
      near_limit: 4,
      within_limit: 16,
      shadow_mode: 0,
      over_limit_with_local_cache: 0,
    });
  },
);

t.test(
  "token bucket, 10/min (one token every 6 s), burst 5: 5 at once fit, the 6th → OVER_LIMIT with reset 6; 6 s later one more fits",
  async (t) => {
    const clock = new TestClock(T0);
    const { service } = newService(RULES, clock);
    const answers: [number, number, number][] = [];
    for (let i = 0; i < 6; i++) answers.push(figures(await decide(service, "b", "x")));
    t.strictSame(answers, [
      [CODE_OK, 4, 6],
      [CODE_OK, 3, 12],
      [CODE_OK, 2, 18],
      [CODE_OK, 1, 24],
      [CODE_OK, 0, 30],
      [CODE_OVER_LIMIT, 0, 6],
    ]);
    clock.ms = T0 + 5_999;
    t.strictSame(figures(await decide(service, "b", "x")), [CODE_OVER_LIMIT, 0, 1], "1 ms short of a token");
    clock.ms = T0 + 6_000;
    t.strictSame(figures(await decide(service, "b", "x")), [CODE_OK, 0, 30], "the refused ones took nothing");
    const status = (await decide(service, "b", "x")).statuses[0]!;
    t.strictSame(
      status.currentLimit && {
        requestsPerUnit: status.currentLimit.requestsPerUnit,
        unit: status.currentLimit.unit,
        algorithm: status.currentLimit.algorithm,
        burst: status.currentLimit.burst,
      },
      { requestsPerUnit: 10, unit: MINUTE, algorithm: "token_bucket", burst: 5 },
    );
  },
);

t.test(
  "unit_multiplier 5, 3 per 5 minutes: key `…_x5`, window aligned to 300 s, current_limit carries the multiplier",
  async (t) => {
    const clock = new TestClock(T0 + 299_000);
    const { service, store } = newService(RULES, clock);
    const answers: [number, number, number][] = [];
    for (let i = 0; i < 4; i++) answers.push(figures(await decide(service, "f", "y")));
    t.strictSame(answers, [
      [CODE_OK, 2, 1],
      [CODE_OK, 1, 1],
      [CODE_OK, 0, 1],
      [CODE_OVER_LIMIT, 0, 1],
    ]);
    t.strictSame(
      await store.read([{ key: "d_f_y_1800000000_x5", hits: 0, ttlSeconds: 1, perSecond: false }]),
      [4],
    );
    clock.ms = T0 + 300_000;
    const decision = await decide(service, "f", "y");
    t.strictSame(figures(decision), [CODE_OK, 2, 300], "the next 5-minute window");
    t.equal(decision.statuses[0]!.currentLimit?.unitMultiplier, 5);
  },
);

t.test(
  "stacked 2/s burst + 5/min sustained: the burst refuses the 3rd in one second, the sustained limit the 6th in the minute",
  async (t) => {
    const clock = new TestClock(T0);
    const { service, store, registry } = newService(RULES, clock);
    const answer = async () => {
      const decision = await decide(service, "s", "z");
      const status = decision.statuses[0]!;
      return [...figures(decision), status.currentLimit?.name];
    };
    const first = [await answer(), await answer(), await answer()];
    t.strictSame(first, [
      [CODE_OK, 1, 1, "burst"],
      [CODE_OK, 0, 1, "burst"],
      [CODE_OVER_LIMIT, 0, 1, "burst"],
    ]);
    t.strictSame(
      await store.read([{ key: "d_s_z_1800000000", hits: 0, ttlSeconds: 1, perSecond: false }]),
      [3],
      "the first limit keeps the reference's key",
    );
    clock.ms = T0 + 1_000;
    const second = [await answer(), await answer(), await answer()];
    // The sustained counter has 3 (a fixed window counts refused hits, as the reference does): 4, 5, then 6 > 5.
    // Remaining ties at 0 on the 2nd: the longer reset (59 s) wins.
    t.strictSame(second, [
      [CODE_OK, 1, 59, "sustained"],
      [CODE_OK, 0, 59, "sustained"],
      [CODE_OVER_LIMIT, 0, 59, "sustained"],
    ]);
    t.strictSame(
      await store.read([
        { key: "d_s_z_1800000000", hits: 0, ttlSeconds: 1, perSecond: false },
        { key: "d_s_z_1800000000_l1", hits: 0, ttlSeconds: 1, perSecond: false },
        { key: "d_s_z_1800000001", hits: 0, ttlSeconds: 1, perSecond: false },
      ]),
      [0, 6, 3],
      "the first second's counter has expired (TTL 1 s); the second limit is told apart by `_l1`",
    );
    t.equal(ruleCounts(registry, "d.s_z").total_hits, 0, "value-less rule: stats on the config key");
    t.equal(ruleCounts(registry, "d.s").total_hits, 6);
    t.equal(ruleCounts(registry, "d.s").over_limit, 2);
  },
);

t.test("a token bucket's refusal is remembered by the local cache until its next token", async (t) => {
  const clock = new TestClock(T0);
  const marks: [string, number, number][] = [];
  const spy = {
    isOverLimit: () => false,
    markOverLimit: (...mark: [string, number, number]) => marks.push(mark),
  };
  const { service: spied } = newService(RULES, clock, { engine: { localCache: spy } });
  for (let i = 0; i < 6; i++) await decide(spied, "b", "c");
  // Refused at debt 30 s with capacity 30 s: the next token is 6 s away; the cache keeps it 5 999 ms.
  t.strictSame(marks, [["d_b_c_gcra6000000", 10, 5.999]]);

  const localCache = new LocalOverLimitCache(1024 * 1024);
  const { service, registry } = newService(RULES, clock, { engine: { localCache } });
  for (let i = 0; i < 6; i++) await decide(service, "b", "c");
  t.equal(ruleCounts(registry, "d.b").over_limit_with_local_cache, 0);
  // Answered from the cache: reset when its entry ends, rounded up to whole seconds.
  t.strictSame(figures(await decide(service, "b", "c")), [CODE_OVER_LIMIT, 0, 6]);
  t.equal(ruleCounts(registry, "d.b").over_limit_with_local_cache, 1);
  t.equal(ruleCounts(registry, "d.b").over_limit, 2);
});

t.test("a request-level override keeps the rule's algorithm: a token bucket of its own rate", async (t) => {
  const clock = new TestClock(T0);
  const { service } = newService(RULES, clock);
  const overridden = request("d", [
    { entries: [{ key: "b", value: "o" }], limit: { requestsPerUnit: 2, unit: SECOND } },
  ]);
  const codes: number[] = [];
  for (let i = 0; i < 3; i++)
    codes.push(((await service.shouldRateLimit(overridden)) as Decision).overallCode);
  t.strictSame(codes, [CODE_OK, CODE_OK, CODE_OVER_LIMIT], "burst = the override's 2");
  clock.ms = T0 + 500;
  const decision = (await service.shouldRateLimit(overridden)) as Decision;
  t.strictSame(figures(decision), [CODE_OK, 0, 1], "one token every 500 ms");
  t.equal(decision.statuses[0]!.currentLimit?.algorithm, "token_bucket");
});

t.test(
  "a mixed stack (token bucket + sliding window) costs one store call and reports the tighter",
  async (t) => {
    const clock = new TestClock(T0);
    const { service, store } = newService(RULES, clock);
    let calls = 0;
    const increment = store.increment.bind(store);
    store.increment = (operations) => {
      calls++;
      return increment(operations);
    };
    const answers: [number, number, number][] = [];
    for (let i = 0; i < 4; i++) answers.push(figures(await decide(service, "mix", "m")));
    t.equal(calls, 4);
    // Burst 3 of a 100/s bucket (10 ms per token): remaining 2, 1, 0, then refused with the next token 10 ms
    // away (reset rounds up to 1 s); the hour's sliding window has 999 left at most.
    t.strictSame(answers, [
      [CODE_OK, 2, 1],
      [CODE_OK, 1, 1],
      [CODE_OK, 0, 1],
      [CODE_OVER_LIMIT, 0, 1],
    ]);
  },
);

t.test(
  "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: a sliding window whose increment was suppressed gives nothing back",
  async (t) => {
    const rules = `domain: d
descriptors:
  - key: a
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: b
    rate_limit: {unit: minute, requests_per_unit: 10, algorithm: sliding_window}
`;
    const clock = new TestClock(T0 + 1_000);
    const localCache = new LocalOverLimitCache(1024 * 1024);
    const { service, store } = newService(rules, clock, {
      engine: { localCache },
      stopIncrementWhenOverLimit: true,
    });
    // 11 in b's window (counted while b was a fixed window: the two share their keys).
    await store.increment([{ key: "d_b_v_1800000000", hits: 11, ttlSeconds: 120, perSecond: false }]);
    const a = entries(["a", "v"]);
    await service.shouldRateLimit(request("d", [a]));
    t.equal(((await service.shouldRateLimit(request("d", [a]))) as Decision).overallCode, CODE_OVER_LIMIT);
    // a answered by the local cache: every increment of the request is suppressed; b reads 11 > 10.
    const decision = (await service.shouldRateLimit(request("d", [a, entries(["b", "v"])], 5))) as Decision;
    t.strictSame(
      decision.statuses.map((status) => status.code),
      [CODE_OVER_LIMIT, CODE_OVER_LIMIT],
    );
    t.strictSame(
      await store.read([{ key: "d_b_v_1800000000", hits: 0, ttlSeconds: 1, perSecond: false }]),
      [11],
      "nothing counted, nothing given back",
    );
  },
);
