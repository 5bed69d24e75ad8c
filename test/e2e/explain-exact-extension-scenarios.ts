/**
 * The extensions' scenarios of the "explain is exact" tests (issue 17): each algorithm, unit_multiplier,
 * stacked `rate_limits` (with `replaces` of one of them), and the reference's modes on the new algorithms
 * (docs/algorithms.md, test/e2e/beyond-the-reference.test.ts).
 *
 * Token buckets refill one token per 20 minutes or slower (3 an hour, 2 per two hours, 5 an hour), so no
 * token comes back between an explain and its decision: `limitRemaining` must be equal with no tolerance.
 * Their `durationUntilReset` is whole seconds of (TAT − now), which changes once a second at the sub-second
 * phase of the request that started the bucket; steps are timed clear of it (explain-exact-timing.ts).
 */
import type { Scenario, Step } from "./explain-exact-harness.js";
import { entries, step } from "./explain-exact-scenarios.js";

export const EXTENSION_RULES = `domain: ext
descriptors:
  - key: sliding
    rate_limit: { unit: hour, requests_per_unit: 3, algorithm: sliding_window }
  - key: bucket
    rate_limit: { unit: hour, requests_per_unit: 3, algorithm: token_bucket, burst: 2 }
  - key: five
    rate_limit: { unit: minute, requests_per_unit: 3, unit_multiplier: 5 }
  - key: slide2h
    rate_limit: { unit: hour, requests_per_unit: 2, algorithm: sliding_window, unit_multiplier: 2 }
  - key: bucket2h
    rate_limit: { unit: hour, requests_per_unit: 2, algorithm: token_bucket, burst: 1, unit_multiplier: 2 }
  - key: stacked
    rate_limits:
      - { name: stacked_burst, unit: minute, requests_per_unit: 2 }
      - { name: stacked_hourly, unit: hour, requests_per_unit: 3, algorithm: sliding_window }
  - key: mixed
    rate_limits:
      - { name: mixed_bucket, unit: hour, requests_per_unit: 3, algorithm: token_bucket, burst: 3 }
      - { name: mixed_fixed, unit: hour, requests_per_unit: 2 }
  - key: main
    rate_limits:
      - { name: main_burst, unit: hour, requests_per_unit: 1 }
      - { name: main_daily, unit: day, requests_per_unit: 2, algorithm: sliding_window }
  - key: premium
    rate_limit:
      unit: hour
      requests_per_unit: 5
      algorithm: token_bucket
      replaces:
        - name: main_burst
  - key: shadowbucket
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1, algorithm: token_bucket }
  - key: quotaslide
    quota_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1, algorithm: sliding_window }
  - key: emptybucket
    rate_limit: { name: never, unit: hour, requests_per_unit: 0, algorithm: token_bucket }
  - key: dtenant
    detailed_metric: true
    rate_limit: { unit: hour, requests_per_unit: 1, algorithm: sliding_window }
  - key: overbucket
    value: o
    rate_limit: { unit: minute, requests_per_unit: 100, algorithm: token_bucket }
`;

const OK = "OK";
const OVER = "OVER_LIMIT";
const HOUR = 3600;
type Overall = Step["overall"];

/**
 * One descriptor asked `overalls.length` times; `bucket`: the first request starts a token bucket;
 * `cached`: the limits checked once the local cache knows the descriptor over (from the last step only).
 */
function asked(
  key: string,
  rule: string,
  overalls: readonly Overall[],
  limits: readonly string[],
  more: { bucket?: boolean; cached?: readonly string[] } = {},
) {
  return overalls.map((overall, i) =>
    step("ext", [entries(`${key}=v`)], overall, [rule], {
      expect: [
        {
          limits,
          ...(more.cached && i === overalls.length - 1 ? { limitsWithLocalCache: more.cached } : {}),
        },
      ],
      startsBucket: more.bucket === true && i === 0,
    }),
  );
}

export const EXTENSION_SCENARIOS: readonly Scenario[] = [
  {
    name: "sliding_window 3/hour",
    windowSeconds: HOUR,
    steps: asked("sliding", "ext.sliding", [OK, OK, OK, OVER, OVER], ["/sliding_window"]),
  },
  {
    name: "token_bucket 3/hour, burst 2",
    windowSeconds: HOUR,
    steps: asked("bucket", "ext.bucket", [OK, OK, OVER, OVER], ["/token_bucket"], { bucket: true }),
  },
  {
    name: "fixed window of 5 minutes (unit_multiplier 5)",
    windowSeconds: 300,
    steps: asked("five", "ext.five", [OK, OK, OK, OVER], ["/fixed_window"]),
  },
  {
    name: "sliding window of 2 hours (unit_multiplier 2)",
    windowSeconds: 2 * HOUR,
    steps: asked("slide2h", "ext.slide2h", [OK, OK, OVER], ["/sliding_window"]),
  },
  {
    name: "token bucket of 2 per 2 hours (unit_multiplier 2), burst 1",
    windowSeconds: 2 * HOUR,
    steps: asked("bucket2h", "ext.bucket2h", [OK, OVER, OVER], ["/token_bucket"], { bucket: true }),
  },
  {
    name: "stacked: 2/minute fixed and 3/hour sliding",
    windowSeconds: 60,
    steps: asked(
      "stacked",
      "ext.stacked",
      [OK, OK, OVER, OVER],
      ["stacked_burst/fixed_window", "stacked_hourly/sliding_window"],
      { cached: ["stacked_burst/fixed_window"] },
    ),
  },
  {
    name: "stacked: a token bucket and a fixed window",
    windowSeconds: HOUR,
    steps: asked(
      "mixed",
      "ext.mixed",
      [OK, OK, OVER, OVER],
      ["mixed_bucket/token_bucket", "mixed_fixed/fixed_window"],
      { bucket: true, cached: ["mixed_fixed/fixed_window"] },
    ),
  },
  {
    name: "stacked with replaces: premium replaces main's burst limit only",
    windowSeconds: 24 * HOUR,
    steps: [
      ...[OK, OK, OVER].map((overall, i) =>
        step(
          "ext",
          [entries("main=m"), entries("premium=p")],
          overall as Overall,
          ["ext.main", "ext.premium"],
          {
            expect: [{ limits: ["main_daily/sliding_window"] }, { limits: ["/token_bucket"] }],
            startsBucket: i === 0,
          },
        ),
      ),
      step("ext", [entries("main=n")], OK, ["ext.main"], {
        expect: [{ limits: ["main_burst/fixed_window", "main_daily/sliding_window"] }],
      }),
      step("ext", [entries("main=n")], OVER, ["ext.main"]),
    ],
  },
  {
    name: "shadow_mode on a token bucket: over, answered OK",
    windowSeconds: HOUR,
    steps: asked("shadowbucket", "ext.shadowbucket", [OK, OK, OK], ["/token_bucket"], { bucket: true }),
  },
  {
    name: "quota_mode on a sliding window",
    windowSeconds: HOUR,
    steps: asked("quotaslide", "ext.quotaslide", [OK, OVER, OVER], ["/sliding_window"]),
  },
  {
    name: "a token bucket of 0 per hour: refused without a store",
    windowSeconds: HOUR,
    steps: asked("emptybucket", "ext.emptybucket", [OVER, OVER], ["never/token_bucket"]),
  },
  {
    name: "detailed_metric on a sliding window",
    windowSeconds: HOUR,
    steps: [
      ...asked("dtenant", "ext.dtenant", [OK, OVER], ["/sliding_window"]),
      step("ext", [entries("dtenant=w")], OK, ["ext.dtenant"]),
    ],
  },
  {
    name: "a request-level override on a token bucket: its algorithm, burst = requests_per_unit",
    windowSeconds: HOUR,
    steps: [OK, OK, OVER].map((overall, i) =>
      step(
        "ext",
        [{ ...entries("overbucket=o"), limit: { requestsPerUnit: 2, unit: "HOUR" } }],
        overall as Overall,
        ["ext.overbucket_o"],
        {
          expect: [{ override: { requestsPerUnit: 2, unit: "HOUR" }, limits: ["/token_bucket"] }],
          startsBucket: i === 0,
        },
      ),
    ),
  },
  {
    name: "hits_addend on a token bucket: 0 checks without taking",
    windowSeconds: HOUR,
    steps: [
      step("ext", [{ ...entries("mixed=h"), hitsAddend: 2 }], OK, ["ext.mixed"], { startsBucket: true }),
      step("ext", [{ ...entries("mixed=h"), hitsAddend: 0 }], OK, ["ext.mixed"], { expect: [{ hits: 0 }] }),
      step("ext", [entries("mixed=h")], OVER, ["ext.mixed"]),
    ],
  },
];
