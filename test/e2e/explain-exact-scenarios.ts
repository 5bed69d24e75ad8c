/**
 * The scenarios of the "explain is exact" tests (issue 17): the reference's rule features — the end-to-end
 * decision cases of test/e2e/decision-cases.ts and test/e2e/http-json.test.ts, and the matching features of
 * config/ratelimit/config/02-advanced.yaml and 03-quota.yaml (wildcards, nested descriptors, share_threshold,
 * value_to_metric, detailed_metric, replaces, request-level overrides, shadow and quota mode, unlimited,
 * hits_addend) — and the extensions of test/e2e/beyond-the-reference.test.ts (docs/algorithms.md:
 * sliding windows, token buckets, unit_multiplier, stacked `rate_limits`).
 */
import type {
  DescriptorExpectation,
  JsonDescriptor,
  JsonRequest,
  Scenario,
  Step,
} from "./explain-exact-harness.js";

export const REFERENCE_RULES = `domain: ref
descriptors:
  - key: k
    value: three
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: k
    value: hundred
    rate_limit: { unit: hour, requests_per_unit: 100 }
  - key: k
    value: ov
    rate_limit: { unit: day, requests_per_unit: 5 }
  - key: k
    value: free
    rate_limit: { unlimited: true }
  - key: banned
    rate_limit: { name: banned_limit, unit: minute, requests_per_unit: 0 }
  - key: path
    value: /static/*
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: path
    value: /v*/users
    value_to_metric: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: path
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: files
    value: f*
    share_threshold: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: org
    value: acme
    rate_limit: { unit: hour, requests_per_unit: 10 }
    descriptors:
      - key: user
        rate_limit: { unit: hour, requests_per_unit: 2 }
        descriptors:
          - key: method
            value: GET
            rate_limit: { unit: hour, requests_per_unit: 1 }
      - key: team
        value: red*
        rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: tenant
    detailed_metric: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: global
    rate_limit: { name: global, unit: hour, requests_per_unit: 2 }
  - key: vip
    rate_limit:
      unit: hour
      requests_per_unit: 3
      replaces:
        - name: global
  - key: experiment
    value: tight
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: model
    value: large
    quota_mode: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: model
    value: small
    quota_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
`;

/** `"k=v"` strings as one descriptor's entries. */
export function entries(...pairs: string[]): JsonDescriptor {
  return {
    entries: pairs.map((pair) => {
      const at = pair.indexOf("=");
      return { key: pair.slice(0, at), value: pair.slice(at + 1) };
    }),
  };
}

/** One step: `descriptors` of `domain`, the expected overall code and rule per descriptor. */
export function step(
  domain: string,
  descriptors: readonly JsonDescriptor[],
  overall: Step["overall"],
  rules: Step["rules"],
  more: {
    expect?: readonly (DescriptorExpectation | undefined)[];
    startsBucket?: boolean;
    hitsAddend?: number;
  } = {},
): Step {
  const request: JsonRequest = {
    domain,
    descriptors,
    ...(more.hitsAddend === undefined ? {} : { hitsAddend: more.hitsAddend }),
  };
  return {
    request,
    overall,
    rules,
    ...(more.expect ? { expect: more.expect } : {}),
    ...(more.startsBucket ? { startsBucket: true } : {}),
  };
}

/** The same one-descriptor request `overalls.length` times, each with its expected overall code. */
function repeated(
  domain: string,
  descriptor: JsonDescriptor,
  rule: string | null | undefined,
  overalls: readonly Step["overall"][],
  expect?: DescriptorExpectation,
): Step[] {
  return overalls.map((overall) =>
    step(domain, [descriptor], overall, [rule], expect ? { expect: [expect] } : {}),
  );
}

const OK = "OK";
const OVER = "OVER_LIMIT";
const HOUR = 3600;

export const REFERENCE_SCENARIOS: readonly Scenario[] = [
  {
    name: "fixed window 3/minute: three OK, then OVER_LIMIT",
    windowSeconds: 60,
    steps: repeated("ref", entries("k=three"), "ref.k_three", [OK, OK, OK, OVER, OVER], {
      hits: 1,
      replaced: false,
      unlimited: false,
      shadowMode: false,
      quotaMode: false,
      override: null,
      limits: ["/fixed_window"],
    }),
  },
  {
    name: "unknown domain and unmatched descriptor: no rule",
    windowSeconds: HOUR,
    steps: [
      step("nope", [entries("k=three")], OK, [null], { expect: [{ limits: [] }] }),
      step("ref", [entries("other=x")], OK, [null], { expect: [{ limits: [] }] }),
      step("ref", [entries("k=three", "deeper=x")], OK, [null]),
      step("ref", [entries("org=beta")], OK, [null]),
    ],
  },
  {
    name: "unlimited: 4294967295 remaining, no counter",
    windowSeconds: HOUR,
    steps: repeated("ref", entries("k=free"), "ref.k_free", [OK, OK], { unlimited: true }),
  },
  {
    name: "requests_per_unit 0 with a name: always OVER_LIMIT",
    windowSeconds: 60,
    steps: repeated("ref", entries("banned=x"), "ref.banned", [OVER, OVER]),
  },
  {
    name: "wildcards: a trailing * counts each value apart; a * in the middle with value_to_metric; key only",
    windowSeconds: HOUR,
    steps: [
      ...repeated("ref", entries("path=/static/a.css"), "ref.path_/static/*", [OK, OK, OVER]),
      step("ref", [entries("path=/static/b.css")], OK, ["ref.path_/static/*"]),
      ...repeated("ref", entries("path=/v2/users"), "ref.path_/v*/users", [OK, OK, OVER]),
      step("ref", [entries("path=/v3/users")], OK, ["ref.path_/v*/users"]),
      ...repeated("ref", entries("path=/other"), "ref.path", [OK, OVER]),
    ],
  },
  {
    name: "share_threshold: every f* value shares one counter",
    windowSeconds: HOUR,
    steps: [
      step("ref", [entries("files=f1")], OK, ["ref.files_f*"]),
      step("ref", [entries("files=f2")], OK, ["ref.files_f*"]),
      step("ref", [entries("files=f3")], OVER, ["ref.files_f*"]),
    ],
  },
  {
    name: "nested descriptors: each depth its own rule, a wildcard below, no rule past the tree",
    windowSeconds: HOUR,
    steps: [
      step("ref", [entries("org=acme")], OK, ["ref.org_acme"]),
      ...repeated("ref", entries("org=acme", "user=bob"), "ref.org_acme.user", [OK, OK, OVER]),
      ...repeated("ref", entries("org=acme", "user=eve", "method=GET"), "ref.org_acme.user.method_GET", [
        OK,
        OVER,
      ]),
      step("ref", [entries("org=acme", "user=eve", "method=PUT")], OK, [null]),
      ...repeated("ref", entries("org=acme", "team=red1"), "ref.org_acme.team_red*", [OK, OVER]),
      step("ref", [entries("org=acme", "team=blue")], OK, [null]),
      step(
        "ref",
        [entries("org=acme"), entries("org=acme", "user=bob"), entries("org=acme", "team=red2")],
        OVER,
        ["ref.org_acme", "ref.org_acme.user", "ref.org_acme.team_red*"],
      ),
    ],
  },
  {
    name: "detailed_metric: per-value stats, which an explain must not create",
    windowSeconds: HOUR,
    steps: [
      ...repeated("ref", entries("tenant=alpha"), "ref.tenant", [OK, OK, OVER]),
      ...repeated("ref", entries("tenant=beta"), "ref.tenant", [OK]),
    ],
  },
  {
    name: "replaces: global is not checked beside vip, in either order, even when over",
    windowSeconds: HOUR,
    steps: [
      step("ref", [entries("global=g"), entries("vip=v")], OK, ["ref.global", "ref.vip"], {
        expect: [{ replaced: true, limits: [] }, { replaced: false }],
      }),
      ...repeated("ref", entries("global=g"), "ref.global", [OK, OK, OVER], { replaced: false }),
      step("ref", [entries("vip=v"), entries("global=g")], OK, ["ref.vip", "ref.global"], {
        expect: [{ replaced: false }, { replaced: true }],
      }),
      step("ref", [entries("vip=v"), entries("global=g")], OK, ["ref.vip", "ref.global"]),
      step("ref", [entries("vip=v"), entries("global=g")], OVER, ["ref.vip", "ref.global"]),
    ],
  },
  {
    name: "request-level overrides: the request's limit, on a matched rule and on no rule",
    windowSeconds: HOUR,
    steps: [
      ...repeated(
        "ref",
        { ...entries("k=ov"), limit: { requestsPerUnit: 2, unit: "HOUR" } },
        "ref.k_ov",
        [OK, OK, OVER],
        { override: { requestsPerUnit: 2, unit: "HOUR" } },
      ),
      ...repeated(
        "ref",
        { ...entries("unruled=u"), limit: { requestsPerUnit: 1, unit: "DAY" } },
        undefined,
        [OK, OVER],
        { override: { requestsPerUnit: 1, unit: "DAY" } },
      ),
    ],
  },
  {
    name: "shadow_mode: over the limit, answered OK",
    windowSeconds: HOUR,
    steps: repeated("ref", entries("experiment=tight"), "ref.experiment_tight", [OK, OK, OK], {
      shadowMode: true,
    }),
  },
  {
    name: "quota_mode: OVER_LIMIT only once every quota descriptor is exhausted",
    windowSeconds: HOUR,
    steps: [
      ...[OK, OK, OVER].map((overall) =>
        step(
          "ref",
          [entries("model=large"), entries("model=small")],
          overall as Step["overall"],
          ["ref.model_large", "ref.model_small"],
          { expect: [{ quotaMode: true }, { quotaMode: true }] },
        ),
      ),
    ],
  },
  {
    name: "hits_addend: the descriptor's wins over the request's; 0 checks without counting",
    windowSeconds: HOUR,
    steps: [
      step("ref", [{ ...entries("k=hundred"), hitsAddend: 5 }], OK, ["ref.k_hundred"], {
        hitsAddend: 3,
        expect: [{ hits: 5 }],
      }),
      step("ref", [{ ...entries("k=hundred"), hitsAddend: 0 }], OK, ["ref.k_hundred"], {
        hitsAddend: 3,
        expect: [{ hits: 0 }],
      }),
      step("ref", [entries("k=hundred")], OK, ["ref.k_hundred"], { hitsAddend: 3, expect: [{ hits: 3 }] }),
      step("ref", [entries("k=hundred")], OVER, ["ref.k_hundred"], {
        hitsAddend: 93,
        expect: [{ hits: 93 }],
      }),
      step("ref", [entries("k=hundred")], OVER, ["ref.k_hundred"], { hitsAddend: 1 }),
    ],
  },
  {
    name: "several descriptors: unlimited, blocked, unmatched and counted in one request",
    windowSeconds: HOUR,
    steps: [
      step(
        "ref",
        [entries("k=free"), entries("banned=y"), entries("nothing=here"), entries("path=/static/c.css")],
        OVER,
        ["ref.k_free", "ref.banned", null, "ref.path_/static/*"],
      ),
    ],
  },
];
