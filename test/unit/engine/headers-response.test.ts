import t from "tap";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import type { HeaderNames } from "../../../src/engine/response-headers.js";
import {
  CLOCK_SECONDS,
  decideWith,
  entries,
  newEngine,
  newRegistry,
  request,
  rulesFromYaml,
} from "./decision-fixture.js";

// Response headers (LIMIT_RESPONSE_HEADERS_ENABLED=true), clock 2222 s: minute resets in 58 s,
// hour in 1378 s.
const DEFAULT_NAMES: HeaderNames = {
  limit: "RateLimit-Limit",
  remaining: "RateLimit-Remaining",
  reset: "RateLimit-Reset",
};
const YAML = `domain: d
descriptors:
  - key: minute
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: hour
    rate_limit: {unit: hour, requests_per_unit: 20}
  - key: second
    rate_limit: {unit: second, requests_per_unit: 30}
  - key: quota
    quota_mode: true
    rate_limit: {unit: hour, requests_per_unit: 20}
  - key: shadowed
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 20}
  - key: free
    rate_limit: {unlimited: true}
  - key: whitelisted
`;

function headersFor(keys: string[], countersAfter: number[], options: Parameters<typeof newEngine>[1] = {}) {
  const registry = newRegistry();
  const engine = newEngine(registry, { responseHeaders: DEFAULT_NAMES, ...options });
  const decision = decideWith(
    engine,
    rulesFromYaml(registry, YAML),
    request(
      "d",
      keys.map((k) => entries([k, "v"])),
    ),
    countersAfter,
  );
  return { decision, headers: decision.responseHeaders.map((h) => `${h.key}: ${h.value}`) };
}

t.test("10/min over limit at 2222 → Limit 10, Remaining 0, Reset 58", async (t) => {
  const { decision, headers } = headersFor(["minute"], [11]);
  t.equal(decision.overallCode, CODE_OVER_LIMIT);
  t.same(headers, ["RateLimit-Limit: 10", "RateLimit-Remaining: 0", "RateLimit-Reset: 58"]);
});

t.test("headers are attached to OK responses too", async (t) => {
  const { decision, headers } = headersFor(["minute"], [3]);
  t.equal(decision.overallCode, CODE_OK);
  t.same(headers, ["RateLimit-Limit: 10", "RateLimit-Remaining: 7", "RateLimit-Reset: 58"]);
});

t.test("the lowest remaining wins, whatever its position", async (t) => {
  t.same(headersFor(["minute", "hour"], [5, 17]).headers, [
    "RateLimit-Limit: 20",
    "RateLimit-Remaining: 3",
    "RateLimit-Reset: 1378",
  ]);
  t.same(headersFor(["hour", "minute"], [17, 5]).headers, [
    "RateLimit-Limit: 20",
    "RateLimit-Remaining: 3",
    "RateLimit-Reset: 1378",
  ]);
});

t.test("ties keep the earlier descriptor", async (t) => {
  t.same(headersFor(["minute", "hour"], [6, 16]).headers, [
    "RateLimit-Limit: 10",
    "RateLimit-Remaining: 4",
    "RateLimit-Reset: 58",
  ]);
  t.same(headersFor(["hour", "minute"], [16, 6]).headers, [
    "RateLimit-Limit: 20",
    "RateLimit-Remaining: 4",
    "RateLimit-Reset: 1378",
  ]);
});

t.test("a SECOND limit resets in 1", async (t) => {
  t.same(headersFor(["second"], [1]).headers, [
    "RateLimit-Limit: 30",
    "RateLimit-Remaining: 29",
    "RateLimit-Reset: 1",
  ]);
});

t.test("a non-quota OVER_LIMIT wins outright over an earlier status with remaining 0", async (t) => {
  // minute is exactly at its limit (OK, remaining 0); without the rule the earlier one would be kept.
  t.same(headersFor(["minute", "hour"], [10, 21]).headers, [
    "RateLimit-Limit: 20",
    "RateLimit-Remaining: 0",
    "RateLimit-Reset: 1378",
  ]);
});

t.test("of several non-quota OVER_LIMIT statuses the last wins", async (t) => {
  t.same(headersFor(["minute", "hour"], [11, 21]).headers, [
    "RateLimit-Limit: 20",
    "RateLimit-Remaining: 0",
    "RateLimit-Reset: 1378",
  ]);
  t.same(headersFor(["hour", "minute"], [21, 11]).headers, [
    "RateLimit-Limit: 10",
    "RateLimit-Remaining: 0",
    "RateLimit-Reset: 58",
  ]);
});

t.test("a quota OVER_LIMIT does not win outright", async (t) => {
  const { decision, headers } = headersFor(["minute", "quota"], [10, 21]);
  t.equal(decision.statuses[1]!.code, CODE_OVER_LIMIT);
  t.same(headers, ["RateLimit-Limit: 10", "RateLimit-Remaining: 0", "RateLimit-Reset: 58"]);
});

t.test("a quota OVER_LIMIT still qualifies by its remaining 0", async (t) => {
  t.same(headersFor(["minute", "quota"], [5, 21]).headers, [
    "RateLimit-Limit: 20",
    "RateLimit-Remaining: 0",
    "RateLimit-Reset: 1378",
  ]);
});

t.test("a shadow-rewritten status qualifies with remaining 0 but not outright", async (t) => {
  t.same(headersFor(["minute", "shadowed"], [10, 21]).headers, [
    "RateLimit-Limit: 10",
    "RateLimit-Remaining: 0",
    "RateLimit-Reset: 58",
  ]);
});

t.test("unlimited descriptors never qualify", async (t) => {
  t.same(headersFor(["free"], []).headers, []);
  t.same(headersFor(["free", "minute"], [1]).headers, [
    "RateLimit-Limit: 10",
    "RateLimit-Remaining: 9",
    "RateLimit-Reset: 58",
  ]);
});

t.test("no headers when no descriptor has a limit", async (t) => {
  t.same(headersFor(["whitelisted", "nomatch"], []).headers, []);
});

t.test("no headers when the feature is off", async (t) => {
  t.same(headersFor(["minute"], [11], { responseHeaders: undefined }).headers, []);
});

t.test("custom header names, in the order limit, remaining, reset", async (t) => {
  const names = { limit: "X-Limit", remaining: "X-Left", reset: "X-Reset-In" };
  t.same(headersFor(["minute"], [4], { responseHeaders: names }).headers, [
    "X-Limit: 10",
    "X-Left: 6",
    "X-Reset-In: 58",
  ]);
});

t.test("headers are computed before the global shadow override", async (t) => {
  const { decision, headers } = headersFor(["minute"], [11], { shadowMode: true });
  t.equal(decision.overallCode, CODE_OK);
  t.same(headers, ["RateLimit-Limit: 10", "RateLimit-Remaining: 0", "RateLimit-Reset: 58"]);
});

t.test("reset follows the clock of complete()", async (t) => {
  const registry = newRegistry();
  const engine = newEngine(registry, { responseHeaders: DEFAULT_NAMES });
  const rules = rulesFromYaml(registry, YAML);
  const plan = engine.plan(rules, request("d", [entries(["minute", "v"])]), CLOCK_SECONDS);
  const decision = engine.complete(plan, [1], CLOCK_SECONDS + 1);
  t.same(decision.responseHeaders.at(-1), { key: "RateLimit-Reset", value: "57" });
});
