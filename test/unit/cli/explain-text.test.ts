// ratelimit-client -explain prints the answer of POST /explain (docs/cli.md "ratelimit-client") as a tree per descriptor.
import t from "tap";
import { type ExplainAnswer, explainText } from "../../../src/cli/explain-text.js";

t.test(
  "a wildcard match over a nested level, a counter read from the store, and a key that matched nothing",
  async (t) => {
    const answer: ExplainAnswer = {
      domain: "api",
      overallCode: "OVER_LIMIT",
      rules: { source: "file", loadedAt: "2026-11-26T14:00:00.000Z" },
      store: "redis",
      descriptors: [
        {
          entries: [
            { key: "path", value: "/upload" },
            { key: "user", value: "bob" },
          ],
          hits: 1,
          search: [
            {
              entry: { key: "path", value: "/upload" },
              tried: [
                { candidate: "path_/upload", how: "exact", matched: false },
                { candidate: "path_/up*", how: "wildcard", matched: true },
                { candidate: "path", how: "key only", matched: false },
              ],
              matched: "path_/up*",
              how: "wildcard",
            },
            {
              entry: { key: "user", value: "bob" },
              tried: [
                { candidate: "user_bob", how: "exact", matched: true },
                { candidate: "user", how: "key only", matched: false },
              ],
              matched: "user_bob",
              how: "exact",
            },
          ],
          rule: "api.path_/up*.user_bob",
          origin: { file: "config/api.yaml", line: 12 },
          override: null,
          replaced: false,
          unlimited: false,
          shadowMode: false,
          quotaMode: false,
          why: "matched rule api.path_/up*.user_bob",
          limits: [
            {
              name: "",
              algorithm: "fixed_window",
              requestsPerUnit: 3,
              unit: "MINUTE",
              unitMultiplier: 1,
              windowSeconds: 60,
              counters: [{ key: "api_path_/upload_user_bob_1795699200", value: 3 }],
              localCacheHit: false,
              over: true,
            },
          ],
          status: {
            code: "OVER_LIMIT",
            currentLimit: { requestsPerUnit: 3, unit: "MINUTE" },
            durationUntilReset: "42s",
          },
        },
        {
          entries: [{ key: "region", value: "eu" }],
          hits: 1,
          search: [
            {
              entry: { key: "region", value: "eu" },
              tried: [
                { candidate: "region_eu", how: "exact", matched: false },
                { candidate: "region", how: "key only", matched: false },
              ],
              matched: null,
              how: null,
            },
          ],
          rule: null,
          origin: null,
          override: null,
          replaced: false,
          unlimited: false,
          shadowMode: false,
          quotaMode: false,
          why: "no rule matched: domain 'api' searched at levels region",
          limits: [],
          status: { code: "OK" },
        },
      ],
    };
    t.equal(
      explainText(answer),
      `domain "api": OVER_LIMIT (rules: file, loaded 2026-11-26T14:00:00.000Z; store: redis)
descriptor 1: path=/upload, user=bob (hits 1)
├─ search
│  ├─ level 1: path=/upload → path_/up* (wildcard)
│  │  ├─ ✗ path_/upload (exact)
│  │  ├─ ✓ path_/up* (wildcard)
│  │  └─ ✗ path (key only)
│  └─ level 2: user=bob → user_bob (exact)
│     ├─ ✓ user_bob (exact)
│     └─ ✗ user (key only)
├─ rule: api.path_/up*.user_bob (config/api.yaml:12)
├─ why: matched rule api.path_/up*.user_bob
├─ limit (unnamed): fixed_window, 3 per MINUTE×1, window 60s — over
│  ├─ counter api_path_/upload_user_bob_1795699200 = 3
│  └─ local cache: miss
└─ status: OVER_LIMIT, remaining 0, reset 42s
descriptor 2: region=eu (hits 1)
├─ search
│  └─ level 1: region=eu → no match
│     ├─ ✗ region_eu (exact)
│     └─ ✗ region (key only)
├─ rule: none
├─ why: no rule matched: domain 'api' searched at levels region
├─ limits: none
└─ status: OK
`,
    );
  },
);

t.test("an xDS rule with an override, shadow mode and stacked limits, one a token bucket", async (t) => {
  const answer: ExplainAnswer = {
    domain: "edge",
    overallCode: "OK",
    rules: { source: "xds", version: "7", loadedAt: "2026-11-26T14:10:00.000Z" },
    store: "memory",
    descriptors: [
      {
        entries: [{ key: "client", value: "c1" }],
        hits: 5,
        search: [
          {
            entry: { key: "client", value: "c1" },
            tried: [{ candidate: "client_c1", how: "exact", matched: true }],
            matched: "client_c1",
            how: "exact",
          },
        ],
        rule: "edge.client_c1",
        origin: { xdsResource: "edge", version: "7" },
        override: { requestsPerUnit: 50, unit: "HOUR", unitMultiplier: 2 },
        replaced: false,
        unlimited: false,
        shadowMode: true,
        quotaMode: true,
        why: "matched rule edge.client_c1",
        limits: [
          {
            name: "burst",
            algorithm: "token_bucket",
            requestsPerUnit: 10,
            unit: "SECOND",
            unitMultiplier: 1,
            windowSeconds: 1,
            burst: 20,
            counters: [
              { key: "edge_client_c1_burst_tokens", value: 12 },
              { key: "edge_client_c1_burst_ts", value: 1795699200 },
            ],
            localCacheHit: true,
            over: false,
          },
          {
            name: "hourly",
            algorithm: "sliding_window",
            requestsPerUnit: 50,
            unit: "HOUR",
            unitMultiplier: 2,
            windowSeconds: 7200,
            counters: [],
            localCacheHit: false,
            over: false,
          },
        ],
        status: {
          code: "OK",
          currentLimit: { name: "burst", requestsPerUnit: 10, unit: "SECOND" },
          limitRemaining: 7,
          durationUntilReset: "1s",
        },
      },
    ],
  };
  t.equal(
    explainText(answer),
    `domain "edge": OK (rules: xDS version 7, loaded 2026-11-26T14:10:00.000Z; store: memory)
descriptor 1: client=c1 (hits 5)
├─ search
│  └─ level 1: client=c1 → client_c1 (exact)
│     └─ ✓ client_c1 (exact)
├─ rule: edge.client_c1 (xDS resource edge@7)
├─ why: matched rule edge.client_c1
├─ flags: override 50 per HOUR×2, shadow mode, quota mode
├─ limit "burst": token_bucket, 10 per SECOND×1, window 1s, burst 20
│  ├─ counter edge_client_c1_burst_tokens = 12
│  ├─ counter edge_client_c1_burst_ts = 1795699200
│  └─ local cache: hit
├─ limit "hourly": sliding_window, 50 per HOUR×2, window 7200s
│  └─ local cache: miss
└─ status: OK, remaining 7, reset 1s
`,
  );
});

t.test(
  "an unknown domain, a replaced and an unlimited descriptor; a rule file changed since (no line)",
  async (t) => {
    const answer: ExplainAnswer = {
      domain: "nope",
      overallCode: "OK",
      rules: { source: "file", loadedAt: "2026-11-26T14:00:00.000Z" },
      store: "memcache",
      descriptors: [
        {
          entries: [{ key: "k", value: "v" }],
          hits: 1,
          search: [],
          rule: null,
          origin: null,
          why: "domain 'nope' not found",
          limits: [],
          status: { code: "OK" },
        },
        {
          entries: [{ key: "a", value: "1" }],
          hits: 1,
          rule: "nope.a_1",
          origin: { file: "config/x.yaml", line: 3 },
          replaced: true,
          why: "replaced by nope.b_2",
          limits: [],
          status: { code: "OK" },
        },
        {
          entries: [{ key: "internal", value: "yes" }],
          rule: "nope.internal_yes",
          origin: { file: "config/x.yaml", line: null },
          unlimited: true,
          why: "unlimited",
          status: { code: "OK" },
        },
      ],
    };
    t.equal(
      explainText(answer),
      `domain "nope": OK (rules: file, loaded 2026-11-26T14:00:00.000Z; store: memcache)
descriptor 1: k=v (hits 1)
├─ rule: none
├─ why: domain 'nope' not found
├─ limits: none
└─ status: OK
descriptor 2: a=1 (hits 1)
├─ rule: nope.a_1 (config/x.yaml:3)
├─ why: replaced by nope.b_2
├─ flags: replaced
├─ limits: none
└─ status: OK
descriptor 3: internal=yes
├─ rule: nope.internal_yes (config/x.yaml)
├─ why: unlimited
├─ flags: unlimited
├─ limits: none
└─ status: OK
`,
    );
  },
);

t.test("fields the daemon left out are skipped, not printed as undefined", async (t) => {
  t.equal(explainText({}), `domain "": UNKNOWN (rules: unknown)\n`);
  t.equal(
    explainText({ domain: "d", overallCode: "OK", descriptors: [{}] }),
    `domain "d": OK (rules: unknown)\ndescriptor 1: (no entries)\n├─ rule: none\n├─ limits: none\n└─ status: UNKNOWN\n`,
  );
});
