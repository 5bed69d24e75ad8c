/**
 * Cache keys and fixed windows (the reference's src/limiter/cache_key.go, src/utils/utilities.go): `prefix +
 * domain + "_" + Σ(key_value_) + windowStart`, windows aligned to the Unix epoch, and the reset time
 * 1…divider.
 */
import t from "tap";
import { cacheKeyFor, secondsUntilReset, windowStart } from "../../../src/engine/cache-key.js";
import { unitFromName, unitSeconds } from "../../../src/engine/units.js";
import { cacheKeysAt, engineFor, entriesOf, rulesFrom } from "./matching-fixtures.js";

const SECOND = 1;
const MINUTE = 60;
const HOUR = 3600;
const DAY = 86400;
const WEEK = 604800;
const MONTH = 2_592_000;
const YEAR = 31_536_000;
const utc = (...parts: [number, number, number, number?]) => Date.UTC(...parts) / 1000;

// Unit → seconds (divider).
t.test("unit dividers", async (t) => {
  const names = ["second", "minute", "hour", "day", "week", "month", "year"];
  const dividers = names.map((name) => unitSeconds(unitFromName(name) ?? 0));
  t.same(dividers, [SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR]);
});

// The reference's cache-key examples, built directly.
t.test("cacheKeyFor: the reference's cache-key examples", async (t) => {
  const key = (prefix: string, pairs: string[], now: number, divider: number) =>
    cacheKeyFor(prefix, "domain", entriesOf(...pairs), undefined, windowStart(now, divider));
  t.equal(key("", ["key=value"], 1234, SECOND), "domain_key_value_1234");
  t.equal(
    key("", ["key2=value2", "subkey2=subvalue2"], 1234, MINUTE),
    "domain_key2_value2_subkey2_subvalue2_1200",
  );
  t.equal(key("", ["key3=value3"], 1_000_000, HOUR), "domain_key3_value3_997200");
  t.equal(
    key("", ["key3=value3", "subkey3=subvalue3"], 1_000_000, DAY),
    "domain_key3_value3_subkey3_subvalue3_950400",
  );
  t.equal(key("prefix:", ["key=value"], 1234, SECOND), "prefix:domain_key_value_1234");
  t.equal(key("", ["key="], 1234, SECOND), "domain_key__1234", "empty value → key__");
});

// The same examples through config matching and the engine.
t.test("engine plans the reference's example cache keys", async (t) => {
  const rules = rulesFrom(`
domain: domain
descriptors:
  - key: key
    rate_limit: { unit: second, requests_per_unit: 10 }
  - key: key2
    value: value2
    descriptors:
      - key: subkey2
        value: subvalue2
        rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: key3
    value: value3
    rate_limit: { unit: hour, requests_per_unit: 10 }
    descriptors:
      - key: subkey3
        value: subvalue3
        rate_limit: { unit: day, requests_per_unit: 10 }
`);
  t.same(cacheKeysAt(rules, 1234, ["key=value"], ["key2=value2", "subkey2=subvalue2"]), [
    "domain_key_value_1234",
    "domain_key2_value2_subkey2_subvalue2_1200",
  ]);
  t.same(cacheKeysAt(rules, 1_000_000, ["key3=value3"], ["key3=value3", "subkey3=subvalue3"]), [
    "domain_key3_value3_997200",
    "domain_key3_value3_subkey3_subvalue3_950400",
  ]);
  t.same(cacheKeysAt(rules, 1234, ["key="]), ["domain_key__1234"], "empty value → key__");
  t.same(
    cacheKeysAt(rules, 1234, ["nomatch=x"], ["key=value"]),
    ["domain_key_value_1234"],
    "no key unmatched",
  );

  const prefixed = engineFor(rules, { cacheKeyPrefix: "prefix:" });
  const plan = prefixed.plan(
    rules.ruleSet,
    { domain: "domain", descriptors: [{ entries: entriesOf("key=value") }], hitsAddend: 1 },
    1234,
  );
  t.equal(plan.increments[0]?.key, "prefix:domain_key_value_1234");
});

// Weeks start Thursday 00:00 UTC (1970-01-01 was a Thursday).
t.test("WEEK windows start on Thursday 00:00 UTC", async (t) => {
  const monday = utc(2024, 0, 1, 12);
  const start = windowStart(monday, WEEK);
  t.equal(start, utc(2023, 11, 28), "Monday 2024-01-01 → Thursday 2023-12-28");
  t.equal(new Date(start * 1000).getUTCDay(), 4);
  t.equal(windowStart(utc(2023, 11, 28), WEEK), utc(2023, 11, 28), "Thursday 00:00 starts a window");
  t.equal(
    windowStart(utc(2023, 11, 28) - 1, WEEK),
    utc(2023, 11, 21),
    "Wednesday 23:59:59 is the previous week",
  );

  const rules = rulesFrom(`
domain: d
descriptors:
  - key: k
    rate_limit: { unit: week, requests_per_unit: 1 }
`);
  t.same(cacheKeysAt(rules, monday, ["k=v"]), [`d_k_v_${utc(2023, 11, 28)}`]);
});

// Months and years are fixed 30/365-day blocks from 1970-01-01, not calendar months.
t.test("MONTH and YEAR are fixed blocks from the epoch", async (t) => {
  t.equal(windowStart(utc(2024, 2, 10), MONTH), 659 * MONTH);
  t.equal(windowStart(utc(2024, 2, 10), MONTH), utc(2024, 1, 17), "starts 2024-02-17, not March 1st");
  t.equal(windowStart(utc(1970, 0, 30, 23), MONTH), 0);
  t.equal(windowStart(utc(1970, 0, 31), MONTH), MONTH, "day 30 starts the second block");
  t.equal(windowStart(utc(2024, 5, 1), YEAR), 54 * YEAR);
  t.equal(
    windowStart(utc(1973, 0, 1) + 10, YEAR),
    utc(1972, 11, 31),
    "1972 is a leap year: block 3 starts Dec 31",
  );

  const rules = rulesFrom(`
domain: d
descriptors:
  - key: m
    rate_limit: { unit: month, requests_per_unit: 1 }
  - key: y
    rate_limit: { unit: year, requests_per_unit: 1 }
`);
  t.same(cacheKeysAt(rules, utc(2024, 2, 10), ["m=v"], ["y=v"]), [
    `d_m_v_${659 * MONTH}`,
    `d_y_v_${54 * YEAR}`,
  ]);
});

// duration_until_reset = divider − (now mod divider) seconds (1…divider, never 0).
t.test("secondsUntilReset is 1…divider, never 0", async (t) => {
  t.equal(secondsUntilReset(1234, SECOND), 1);
  t.equal(secondsUntilReset(1234, MINUTE), 26);
  t.equal(secondsUntilReset(1200, MINUTE), 60, "at a window start: the whole window, not 0");
  t.equal(secondsUntilReset(1259, MINUTE), 1);
  t.equal(secondsUntilReset(1_000_000, HOUR), 800);
  t.equal(secondsUntilReset(1_000_000, DAY), 36800);
  t.equal(secondsUntilReset(utc(2023, 11, 28), WEEK), WEEK);
  for (const divider of [SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR]) {
    for (const now of [0, 1, 59, 60, 3599, 3600, 1_000_000, utc(2024, 0, 1)]) {
      const reset = secondsUntilReset(now, divider);
      if (reset < 1 || reset > divider) t.fail(`secondsUntilReset(${now}, ${divider}) = ${reset}`);
      t.equal(windowStart(now, divider) + divider, now + reset, `window end at ${now}/${divider}`);
    }
  }
});

// No escaping of `_`, and the key contains neither the unit name nor the limit value
// (docs/compatibility.md).
t.test("quirks: `_` collisions, unit and limit not in the key", async (t) => {
  const a = cacheKeyFor("", "d", entriesOf("a_b=c"), undefined, 60);
  const b = cacheKeyFor("", "d", entriesOf("a=b_c"), undefined, 60);
  t.equal(a, "d_a_b_c_60");
  t.equal(b, a, "distinct descriptors collide");

  const rules = rulesFrom(`
domain: d
descriptors:
  - key: k
    rate_limit: { unit: minute, requests_per_unit: 10 }
`);
  const plan = engineFor(rules).plan(
    rules.ruleSet,
    {
      domain: "d",
      descriptors: [
        { entries: entriesOf("k=v") },
        { entries: entriesOf("k=v"), limit: { requestsPerUnit: 99, unit: 3 } },
      ],
      hitsAddend: 1,
    },
    7200,
  );
  t.same(
    plan.increments.map((i) => i.key),
    ["d_k_v_7200", "d_k_v_7200"],
    "MINUTE rule and HOUR override at an exact hour share one counter",
  );
});
