import { type Item, parseList } from "structured-headers";
import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import type { Decision, DecisionDescriptor } from "../../../src/engine/decision-request.js";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import { itemNameOf } from "../../../src/engine/ietf-headers.js";
import type { HeaderNames } from "../../../src/engine/response-headers.js";
import {
  entries,
  HOUR,
  newEngine,
  newRegistry,
  newService,
  request,
  rulesFromYaml,
  TestClock,
} from "./decision-fixture.js";

// LIMIT_RESPONSE_HEADERS_FORMAT=ietf (docs/response-headers.md): RateLimit-Policy and
// RateLimit of draft-ietf-httpapi-ratelimit-headers-11, one member per limit, read back with the
// structured-headers parser. Rules from YAML, the service, the memory store, a test clock.

/** Unix second 1 800 000 000: a whole minute, 5 minutes and hour since the epoch; the tests start 1 s in. */
const T0 = 1_800_000_000_000;
const NAMES: HeaderNames = {
  limit: "RateLimit-Limit",
  remaining: "RateLimit-Remaining",
  reset: "RateLimit-Reset",
};
const IETF = { responseHeaders: NAMES, responseHeadersFormat: "ietf" as const };

const RULES = `domain: d
descriptors:
  - key: fixed
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: named
    rate_limit: {name: api, unit: hour, requests_per_unit: 1000}
  - key: five
    rate_limit: {unit: minute, requests_per_unit: 3, unit_multiplier: 5}
  - key: sliding
    rate_limit: {unit: minute, requests_per_unit: 10, algorithm: sliding_window}
  - key: bucket
    rate_limit: {unit: minute, requests_per_unit: 10, algorithm: token_bucket, burst: 5}
  - key: slowbucket
    rate_limit: {unit: minute, requests_per_unit: 7, algorithm: token_bucket, burst: 3}
  - key: emptybucket
    rate_limit: {unit: minute, requests_per_unit: 0, algorithm: token_bucket}
  - key: stacked
    rate_limits:
      - {name: burst, unit: second, requests_per_unit: 2}
      - {name: sustained, unit: minute, requests_per_unit: 5, algorithm: sliding_window}
  - key: shadowed
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: quota
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: free
    rate_limit: {unlimited: true}
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 4}
  - key: samename
    rate_limit: {name: api, unit: minute, requests_per_unit: 50}
  - key: odd
    rate_limit: {name: 'say "hi" \\ café 100%', unit: minute, requests_per_unit: 2}
  - key: premium
    rate_limit: {name: premium, unit: minute, requests_per_unit: 100, replaces: [{name: burst}]}
  - key: city
    value: Zürich
    rate_limit: {unit: minute, requests_per_unit: 2}
`;

type Parsed = [string, Record<string, unknown>][];

/** A List field parsed back: each member's String and its parameters. */
function parsed(decision: Decision, field: string): Parsed | undefined {
  const found = decision.responseHeaders.filter((header) => header.key === field);
  if (found.length === 0) return undefined;
  if (found.length > 1) throw new Error(`${field} appears ${found.length} times`);
  return parseList(found[0]!.value).map((member) => {
    const [value, parameters] = member as Item;
    if (typeof value !== "string") throw new Error(`${field}: a member is not a String`);
    return [value, Object.fromEntries(parameters)];
  });
}

function setUp(options: Parameters<typeof newService>[2] = {}) {
  const clock = new TestClock(T0 + 1_000);
  const { service, registry } = newService(RULES, clock, { engine: { ...IETF, ...options.engine } });
  const decide = async (...descriptors: DecisionDescriptor[]) =>
    (await service.shouldRateLimit(request("d", descriptors))) as Decision;
  return { clock, decide, registry };
}

const one = (key: string, value = "v") => entries([key, value]);

t.test(
  "a fixed window: q = requests_per_unit, w = 60; r and t after the request; item = the full key",
  async (t) => {
    const { decide } = setUp();
    const decision = await decide(one("fixed"));
    t.same(
      decision.responseHeaders.map((header) => header.key),
      ["RateLimit-Policy", "RateLimit"],
    );
    t.strictSame(parsed(decision, "RateLimit-Policy"), [["d.fixed", { q: 10, w: 60 }]]);
    t.strictSame(parsed(decision, "RateLimit"), [["d.fixed", { r: 9, t: 59 }]]);
    t.equal(decision.responseHeaders[0]!.value, '"d.fixed";q=10;w=60', "the serialiser's exact text");
    t.equal(decision.responseHeaders[1]!.value, '"d.fixed";r=9;t=59');
  },
);

t.test("a named rule is listed by its name; an hour window is w=3600", async (t) => {
  const { decide } = setUp();
  const decision = await decide(one("named"));
  t.strictSame(parsed(decision, "RateLimit-Policy"), [["api", { q: 1000, w: 3600 }]]);
  t.strictSame(parsed(decision, "RateLimit"), [["api", { r: 999, t: 3599 }]]);
});

t.test("unit_multiplier 5 × minute: w = 300, t to the end of the 5-minute window", async (t) => {
  const { decide } = setUp();
  const decision = await decide(one("five"));
  t.strictSame(parsed(decision, "RateLimit-Policy"), [["d.five", { q: 3, w: 300 }]]);
  t.strictSame(parsed(decision, "RateLimit"), [["d.five", { r: 2, t: 299 }]]);
});

t.test("a sliding window: q and w of the window, r and t of the status", async (t) => {
  const { decide } = setUp();
  const decision = await decide(one("sliding"));
  t.strictSame(parsed(decision, "RateLimit-Policy"), [["d.sliding", { q: 10, w: 60 }]]);
  // Allowed: fully available again once this window's hit has slid out: 2 windows − 1 s.
  t.strictSame(parsed(decision, "RateLimit"), [["d.sliding", { r: 9, t: 119 }]]);
  t.equal(decision.statuses[0]!.durationUntilResetSeconds, 119);
});

t.test("a token bucket: q = burst over the time an empty bucket takes to fill (q/w the rate)", async (t) => {
  const { decide } = setUp();
  // 10/min, burst 5: a token every 6 s, full in 30 s; one request leaves 4 tokens, full again in 6 s.
  const decision = await decide(one("bucket"));
  t.strictSame(parsed(decision, "RateLimit-Policy"), [["d.bucket", { q: 5, w: 30 }]]);
  t.strictSame(parsed(decision, "RateLimit"), [["d.bucket", { r: 4, t: 6 }]]);
  // 7/min, burst 3: 3 × 60 / 7 = 25.7 s to fill, rounded up.
  const slow = await decide(one("slowbucket"));
  t.strictSame(parsed(slow, "RateLimit-Policy"), [["d.slowbucket", { q: 3, w: 26 }]]);
  t.strictSame(parsed(slow, "RateLimit"), [["d.slowbucket", { r: 2, t: 9 }]]);
});

t.test("a token bucket with a rate of 0: q = 0 over its window, r = 0", async (t) => {
  const { decide } = setUp();
  const decision = await decide(one("emptybucket"));
  t.equal(decision.overallCode, CODE_OVER_LIMIT);
  t.strictSame(parsed(decision, "RateLimit-Policy"), [["d.emptybucket", { q: 0, w: 60 }]]);
  t.strictSame(parsed(decision, "RateLimit"), [["d.emptybucket", { r: 0, t: 60 }]]);
});

t.test("stacked limits: one member per limit, each with its own figures", async (t) => {
  const { decide } = setUp();
  const first = await decide(one("stacked"));
  t.strictSame(parsed(first, "RateLimit-Policy"), [
    ["burst", { q: 2, w: 1 }],
    ["sustained", { q: 5, w: 60 }],
  ]);
  t.strictSame(parsed(first, "RateLimit"), [
    ["burst", { r: 1, t: 1 }],
    ["sustained", { r: 4, t: 119 }],
  ]);
  await decide(one("stacked"));
  // The third in the same second: burst refuses (r=0, fits again in 1 s); sustained still counts it (3 of 5).
  const third = await decide(one("stacked"));
  t.equal(third.overallCode, CODE_OVER_LIMIT);
  t.strictSame(parsed(third, "RateLimit"), [
    ["burst", { r: 0, t: 1 }],
    ["sustained", { r: 2, t: 119 }],
  ]);
  // The status reports only the limit closest to refusing; the fields carry both.
  t.equal(third.statuses[0]!.currentLimit?.name, "burst");
});

t.test("every descriptor's limits, in request order; unlimited and unmatched add nothing", async (t) => {
  const { decide } = setUp();
  const decision = await decide(one("free"), one("named"), one("nomatch"), one("stacked"), one("fixed"));
  t.strictSame(parsed(decision, "RateLimit-Policy"), [
    ["api", { q: 1000, w: 3600 }],
    ["burst", { q: 2, w: 1 }],
    ["sustained", { q: 5, w: 60 }],
    ["d.fixed", { q: 10, w: 60 }],
  ]);
  t.strictSame(parsed(decision, "RateLimit"), [
    ["api", { r: 999, t: 3599 }],
    ["burst", { r: 1, t: 1 }],
    ["sustained", { r: 4, t: 119 }],
    ["d.fixed", { r: 9, t: 59 }],
  ]);
});

t.test("a limit removed by `replaces` is not listed; its stacked sibling still is", async (t) => {
  const { decide } = setUp();
  const decision = await decide(one("stacked"), one("premium"));
  t.strictSame(parsed(decision, "RateLimit-Policy"), [
    ["sustained", { q: 5, w: 60 }],
    ["premium", { q: 100, w: 60 }],
  ]);
  t.strictSame(parsed(decision, "RateLimit"), [
    ["sustained", { r: 4, t: 119 }],
    ["premium", { r: 99, t: 59 }],
  ]);
});

t.test("no limit applied (unlimited, unmatched): no headers at all", async (t) => {
  const { decide } = setUp();
  t.strictSame((await decide(one("free"), one("nomatch"))).responseHeaders, []);
});

t.test("a request-level override: its own quota and window, named by its stats key", async (t) => {
  const { decide } = setUp();
  const decision = await decide({ ...one("fixed"), limit: { requestsPerUnit: 7, unit: HOUR } });
  t.strictSame(parsed(decision, "RateLimit-Policy"), [["d.fixed_v", { q: 7, w: 3600 }]]);
  t.strictSame(parsed(decision, "RateLimit"), [["d.fixed_v", { r: 6, t: 3599 }]]);
});

t.test("shadow mode and quota mode: listed with r = 0 when over, whatever the status's code", async (t) => {
  const { decide } = setUp();
  await decide(one("shadowed"), one("quota"));
  const decision = await decide(one("shadowed"), one("quota"), one("fixed"));
  t.strictSame(
    decision.statuses.map((status) => status.code),
    [CODE_OK, CODE_OVER_LIMIT, CODE_OK],
  );
  // Every quota-mode descriptor is over, so the request is refused (docs/rules.md).
  t.equal(decision.overallCode, CODE_OVER_LIMIT);
  t.strictSame(parsed(decision, "RateLimit"), [
    ["d.shadowed", { r: 0, t: 59 }],
    ["d.quota", { r: 0, t: 59 }],
    ["d.fixed", { r: 9, t: 59 }],
  ]);
});

t.test(
  "the same name twice: one member, the one closest to refusing, at the first one's place",
  async (t) => {
    const { decide } = setUp();
    await decide(one("user", "b"), one("user", "b"));
    // Two descriptors on one rule (key only: d.user), separate counters: a has 3 left, b 1.
    const users = await decide(one("user", "a"), one("fixed"), one("user", "b"));
    t.strictSame(parsed(users, "RateLimit-Policy"), [
      ["d.user", { q: 4, w: 60 }],
      ["d.fixed", { q: 10, w: 60 }],
    ]);
    t.strictSame(parsed(users, "RateLimit"), [
      ["d.user", { r: 1, t: 59 }],
      ["d.fixed", { r: 9, t: 59 }],
    ]);
    // Two rules named `api`: 1000/hour with 999 left and 50/minute with 49: the policy follows the chosen one.
    const apis = await decide(one("named"), one("samename"));
    t.strictSame(parsed(apis, "RateLimit-Policy"), [["api", { q: 50, w: 60 }]]);
    t.strictSame(parsed(apis, "RateLimit"), [["api", { r: 49, t: 59 }]]);
    // A tie of remaining (48 and 48): the longer reset wins, 1000/hour with t=3599 over 50/minute's 59.
    const { decide: fresh } = setUp();
    await fresh(one("samename"));
    for (let i = 0; i < 951; i++) await fresh(one("named"));
    const tie = await fresh(one("samename"), one("named"));
    t.strictSame(parsed(tie, "RateLimit-Policy"), [["api", { q: 1000, w: 3600 }]]);
    t.strictSame(parsed(tie, "RateLimit"), [["api", { r: 48, t: 3599 }]]);
  },
);

t.test("names with quotes, a backslash, non-ASCII and % stay one String member", async (t) => {
  const { decide } = setUp();
  const decision = await decide(one("odd"), one("city", "Zürich"));
  t.equal(
    decision.responseHeaders[0]!.value,
    String.raw`"say \"hi\" \\ caf%c3%a9 100%25";q=2;w=60, "d.city_Z%c3%bcrich";q=2;w=60`,
  );
  t.strictSame(parsed(decision, "RateLimit-Policy"), [
    ['say "hi" \\ caf%c3%a9 100%25', { q: 2, w: 60 }],
    ["d.city_Z%c3%bcrich", { q: 2, w: 60 }],
  ]);
  t.strictSame(parsed(decision, "RateLimit"), [
    ['say "hi" \\ caf%c3%a9 100%25', { r: 1, t: 59 }],
    ["d.city_Z%c3%bcrich", { r: 1, t: 59 }],
  ]);
  t.equal(decodeURIComponent(itemNameOf('say "hi" \\ café 100%')), 'say "hi" \\ café 100%', "reversible");
  t.equal(itemNameOf("tab\there\u007f"), "tab%09here%7f", "control characters too");
  t.equal(itemNameOf("😀"), "%f0%9f%98%80");
});

t.test("a local-cache hit: the refusing limit, r = 0, t = how long the cache still holds it", async (t) => {
  const localCache = new LocalOverLimitCache(1024 * 1024);
  const { decide } = setUp({ engine: { localCache } });
  for (let i = 0; i < 11; i++) await decide(one("fixed"));
  const cached = await decide(one("fixed"));
  t.strictSame(parsed(cached, "RateLimit"), [["d.fixed", { r: 0, t: 59 }]]);
  for (let i = 0; i < 2; i++) await decide(one("stacked"));
  await decide(one("stacked"));
  const stacked = await decide(one("stacked"));
  // Answered from the cache by the burst limit alone (the sustained limit was not consulted).
  t.strictSame(parsed(stacked, "RateLimit-Policy"), [["burst", { q: 2, w: 1 }]]);
  // The cache's own clock (real time) gives the reset: 1 s, or 2 when its TTL reads a hair over 1000 ms.
  const reset = stacked.statuses[0]!.durationUntilResetSeconds;
  t.ok(reset === 1 || reset === 2, `reset ${reset}`);
  t.strictSame(parsed(stacked, "RateLimit"), [["burst", { r: 0, t: reset }]]);
});

t.test(
  "the counter store unavailable (BACKEND_FAILURE_MODE allow/deny): every limit with the mode's figures",
  async (t) => {
    const registry = newRegistry();
    const engine = newEngine(registry, IETF);
    const rules = rulesFromYaml(registry, RULES);
    const nowSeconds = 1_800_000_001;
    const plan = () => engine.plan(rules, request("d", [one("stacked"), one("fixed")]), nowSeconds);
    const allow = engine.completeWithoutCounts(plan(), "allow", nowSeconds);
    t.strictSame(parsed(allow, "RateLimit"), [
      ["burst", { r: 1, t: 1 }],
      ["sustained", { r: 4, t: 60 }],
      ["d.fixed", { r: 9, t: 59 }],
    ]);
    const deny = engine.completeWithoutCounts(plan(), "deny", nowSeconds);
    t.strictSame(parsed(deny, "RateLimit"), [
      ["burst", { r: 0, t: 1 }],
      ["sustained", { r: 0, t: 60 }],
      ["d.fixed", { r: 0, t: 59 }],
    ]);
  },
);

t.test("LIMIT_RESPONSE_HEADERS_ENABLED false: no headers in either format", async (t) => {
  const { decide } = setUp({ engine: { responseHeaders: undefined } });
  t.strictSame((await decide(one("fixed"))).responseHeaders, []);
});

t.test("legacy (explicit or absent) keeps the three RateLimit-* fields, byte for byte", async (t) => {
  for (const format of ["legacy" as const, undefined]) {
    const { decide } = setUp({ engine: { responseHeadersFormat: format } });
    const lines = async (...descriptors: DecisionDescriptor[]) =>
      (await decide(...descriptors)).responseHeaders.map((header) => `${header.key}: ${header.value}`);
    t.strictSame(await lines(one("fixed")), [
      "RateLimit-Limit: 10",
      "RateLimit-Remaining: 9",
      "RateLimit-Reset: 59",
    ]);
    t.strictSame(await lines(one("bucket")), [
      "RateLimit-Limit: 5",
      "RateLimit-Remaining: 4",
      "RateLimit-Reset: 6",
    ]);
    // Stacked: the limit closest to refusing only.
    t.strictSame(await lines(one("stacked"), one("named")), [
      "RateLimit-Limit: 2",
      "RateLimit-Remaining: 1",
      "RateLimit-Reset: 1",
    ]);
  }
});
