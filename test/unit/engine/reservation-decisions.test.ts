import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { CODE_OK, CODE_OVER_LIMIT, type Decision } from "../../../src/engine/decision-request.js";
import {
  newEngine,
  newRegistry,
  newService,
  request,
  ruleCounts,
  rulesFromYaml,
  TestClock,
} from "./decision-fixture.js";

// Reservations in one process (docs/token-budgets.md, spec §E7): rules from YAML, the service, the memory
// store, a test clock. Checks carry hits_addend 0, charges the cost; every figure is worked out by hand.

/** Unix second 1 800 000 000: a whole hour since the epoch. */
const T0 = 1_800_000_000_000;

const RULES = `domain: ai
descriptors:
  - key: user
    rate_limit:
      unit: hour
      requests_per_unit: 10000
      reservation: {estimate: 2000, ttl: 300s, request_id_key: x_request_id}
  - key: team
    rate_limit:
      unit: hour
      requests_per_unit: 10000
      reservation: {estimate: 2000, ttl: 60s}
  - key: plain
    rate_limit: {unit: hour, requests_per_unit: 10}
`;

type Service = ReturnType<typeof newService>["service"];

/** One descriptor `key=value` (plus a request id entry when given) with per-descriptor hits. */
async function call(service: Service, key: string, hits: number, requestId?: string): Promise<Decision> {
  const entries = [{ key, value: "alice" }];
  if (requestId !== undefined) entries.push({ key: "x_request_id", value: requestId });
  return (await service.shouldRateLimit(request("ai", [{ entries, hitsAddend: hits }]))) as Decision;
}

function figures(decision: Decision): [number, number] {
  const status = decision.statuses[0]!;
  return [status.code, status.limitRemaining];
}

t.test("20 concurrent checks against 10,000 with estimate 2,000: exactly 5 admitted", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service, registry } = newService(RULES, clock);
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call(service, "user", 0, `r${i}`)));
  const codes = answers.map((answer) => answer.statuses[0]!.code);
  t.equal(codes.filter((code) => code === CODE_OK).length, 5);
  t.same(answers.slice(0, 6).map(figures), [
    [CODE_OK, 8000],
    [CODE_OK, 6000],
    [CODE_OK, 4000],
    [CODE_OK, 2000],
    [CODE_OK, 0],
    [CODE_OVER_LIMIT, 0],
  ]);
  // The reference's formulas on U + R with hits 0: the holds reach the limit exactly (8000 → 10000 is within,
  // not above, the near threshold of 8000), and a refusal from an already full budget counts its 0 hits.
  t.same(ruleCounts(registry, "ai.user"), {
    total_hits: 0,
    over_limit: 0,
    near_limit: 0,
    within_limit: 0,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
});

t.test("a charge settles its own hold by request id; a repeated check holds nothing more", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service } = newService(RULES, clock);
  t.same(figures(await call(service, "user", 0, "a")), [CODE_OK, 8000]);
  t.same(figures(await call(service, "user", 0, "b")), [CODE_OK, 6000]);
  // The same id again refreshes its hold: R stays 4000.
  t.same(figures(await call(service, "user", 0, "a")), [CODE_OK, 6000]);
  // b's charge of 1500: U 1500, b's hold released, a's stays: 10000 − 1500 − 2000.
  t.same(figures(await call(service, "user", 1500, "b")), [CODE_OK, 6500]);
  // A charge whose hold is gone (b settled) counts and releases nothing else.
  t.same(figures(await call(service, "user", 500, "b")), [CODE_OK, 6000]);
  t.same(figures(await call(service, "user", 2500, "a")), [CODE_OK, 5500]);
});

t.test("without a request id a charge settles the oldest hold", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service, store } = newService(RULES, clock);
  t.same(figures(await call(service, "team", 0)), [CODE_OK, 8000]);
  clock.ms += 10_000;
  t.same(figures(await call(service, "team", 0)), [CODE_OK, 6000]);
  t.same(figures(await call(service, "team", 100)), [CODE_OK, 7900]);
  // The first hold (placed at +1 s, ttl 60 s) is gone: at +62 s the second one (placed at +11 s) still counts.
  clock.ms = T0 + 62_000;
  t.same(figures(await call(service, "team", 0)), [CODE_OK, 5900]);
  const [, used, held, holds] = store.read([
    {
      kind: "reserve",
      key: "ai_team_alice_resv3600",
      hits: 0,
      charge: false,
      limit: 10000,
      estimate: 2000,
      holdTtlMs: 60_000,
      windowSeconds: 3600,
      sliding: false,
      bucket: false,
      refill: 0,
      requestId: "",
      jitterSeconds: 0,
      perSecond: false,
    },
  ]);
  t.same([used, held, holds], [100, 4000, 2]);
});

t.test("unsettled holds expire after ttl, and the budget is free again", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service } = newService(RULES, clock);
  for (let i = 0; i < 5; i++) await call(service, "user", 0, `r${i}`);
  t.same(figures(await call(service, "user", 0, "late")), [CODE_OVER_LIMIT, 0]);
  clock.ms = T0 + 1_000 + 299_999;
  t.same(figures(await call(service, "user", 0, "late")), [CODE_OVER_LIMIT, 0]);
  clock.ms = T0 + 1_000 + 300_000;
  t.same(figures(await call(service, "user", 0, "late")), [CODE_OK, 8000]);
});

t.test("an overshooting charge counts in full and the next checks are refused", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service, registry } = newService(RULES, clock);
  t.same(figures(await call(service, "user", 0, "a")), [CODE_OK, 8000]);
  t.same(figures(await call(service, "user", 12000, "a")), [CODE_OVER_LIMIT, 0]);
  t.same(figures(await call(service, "user", 0, "b")), [CODE_OVER_LIMIT, 0]);
  t.same(figures(await call(service, "user", 50, "c")), [CODE_OVER_LIMIT, 0]);
  t.equal(ruleCounts(registry, "ai.user").total_hits, 12050);
  // Holds do not belong to a window; the count does: in the next hour the budget is whole again.
  clock.ms = T0 + 3_600_000;
  t.same(figures(await call(service, "user", 0, "d")), [CODE_OK, 8000]);
});

t.test("the local cache keeps only refusals of U alone, and never skips a charge", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const localCache = new LocalOverLimitCache(1 << 20);
  const { service, registry } = newService(RULES, clock, { engine: { localCache } });
  for (let i = 0; i < 5; i++) await call(service, "user", 0, `r${i}`);
  // Refused by holds only: not cached, so a settlement lets the next check in.
  t.same(figures(await call(service, "user", 0, "x")), [CODE_OVER_LIMIT, 0]);
  t.same(figures(await call(service, "user", 100, "r0")), [CODE_OK, 1900]);
  // 100 + 8000 + 2000 > 10000: still refused by holds, still not cached.
  t.same(figures(await call(service, "user", 0, "x")), [CODE_OVER_LIMIT, 0]);
  t.same(figures(await call(service, "user", 100, "r1")), [CODE_OK, 3800]);
  t.same(figures(await call(service, "user", 0, "x")), [CODE_OK, 1800]);
  t.equal(localCache.counts().entryCount, 0, "nothing was cached");
  // An overshoot makes U alone over: checks are cached, charges still counted.
  t.same(figures(await call(service, "user", 20000, "r2")), [CODE_OVER_LIMIT, 0]);
  t.equal(localCache.counts().entryCount, 0, "a charge is never cached");
  t.same(figures(await call(service, "user", 0, "y")), [CODE_OVER_LIMIT, 0]);
  t.equal(localCache.counts().entryCount, 1, "a check refused by U alone is cached");
  const hitsBefore = localCache.counts().hitCount;
  t.same(figures(await call(service, "user", 0, "z")), [CODE_OVER_LIMIT, 0]);
  t.equal(localCache.counts().hitCount, hitsBefore + 1, "the next check is answered by the cache");
  t.same(figures(await call(service, "user", 7, "r3")), [CODE_OVER_LIMIT, 0]);
  const counts = ruleCounts(registry, "ai.user");
  t.equal(counts.over_limit_with_local_cache, 0, "hits 0 checks add 0 to the cached count");
  t.equal(counts.total_hits, 20207);
});

t.test("the request id entry never reaches matching, keys or stats", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service, store, registry } = newService(RULES, clock);
  await call(service, "plain", 1, "id-1");
  // The plain rule `plain` matched with the id entry taken out, and counted under the reference's key.
  t.equal(store.ttlSecondsOf("ai_plain_alice_1800000000"), 3600);
  t.equal(ruleCounts(registry, "ai.plain").total_hits, 1);
  t.notOk(
    registry.snapshotLines().some((line) => line.includes("x_request_id") || line.includes("id-1")),
    "no stat names the request id",
  );
});

t.test(
  "rules without a reservation plan exactly as before: the reference's operation, the request untouched",
  async (t) => {
    const registry = newRegistry();
    const engine = newEngine(registry);
    const withReservations = rulesFromYaml(registry, RULES);
    const withoutReservations = rulesFromYaml(
      registry,
      "domain: ai\ndescriptors:\n  - key: plain\n    rate_limit: {unit: hour, requests_per_unit: 10}\n",
    );
    const plain = request("ai", [{ entries: [{ key: "plain", value: "alice" }] }]);
    for (const rules of [withReservations, withoutReservations]) {
      const plan = engine.plan(rules, plain, 1_800_000_001);
      t.strictSame(plan.increments, [
        { key: "ai_plain_alice_1800000000", hits: 1, ttlSeconds: 3600, perSecond: false },
      ]);
      t.equal(plan.request, plain, "the same request object: nothing taken out");
    }
    t.equal(
      withoutReservations.requestIdKeys,
      undefined,
      "a rule set without reservations has no request id keys",
    );
  },
);

t.test(
  "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: a charge still counts when another descriptor is over",
  async (t) => {
    const clock = new TestClock(T0 + 1_000);
    const { service, registry } = newService(RULES, clock, { stopIncrementWhenOverLimit: true });
    const both = (hits: number, id: string) =>
      service.shouldRateLimit(
        request("ai", [
          {
            entries: [
              { key: "user", value: "alice" },
              { key: "x_request_id", value: id },
            ],
            hitsAddend: hits,
          },
          { entries: [{ key: "plain", value: "alice" }], hitsAddend: 11 },
        ]),
      ) as Promise<Decision>;
    // `plain` (10 an hour) is over with 11 hits: the check's hold is placed all the same (a check adds no hits).
    const check = await both(0, "a");
    t.same(
      check.statuses.map((status) => [status.code, status.limitRemaining]),
      [
        [CODE_OK, 8000],
        [CODE_OVER_LIMIT, 0],
      ],
    );
    const charge = await both(1200, "a");
    t.same(charge.statuses[0]!.limitRemaining, 8800, "the 1200 tokens counted, a's hold settled");
    t.equal(ruleCounts(registry, "ai.user").total_hits, 1200);
  },
);

t.test("a descriptor of only a request id matches nothing and is answered OK with no limit", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service } = newService(RULES, clock);
  const decision = (await service.shouldRateLimit(
    request("ai", [{ entries: [{ key: "x_request_id", value: "r" }], hitsAddend: 0 }]),
  )) as Decision;
  t.equal(decision.overallCode, CODE_OK);
  t.same(decision.statuses[0], {
    code: CODE_OK,
    currentLimit: undefined,
    limitRemaining: 0,
    durationUntilResetSeconds: 0,
  });
});

t.test("a request-level override keeps the rule's reservation under its own limit", async (t) => {
  const clock = new TestClock(T0 + 1_000);
  const { service } = newService(RULES, clock);
  const check = async (id: string) =>
    figures(
      (await service.shouldRateLimit(
        request("ai", [
          {
            entries: [
              { key: "user", value: "alice" },
              { key: "x_request_id", value: id },
            ],
            hitsAddend: 0,
            limit: { requestsPerUnit: 5000, unit: 3 },
          },
        ]),
      )) as Decision,
    );
  t.same(await check("a"), [CODE_OK, 3000]);
  t.same(await check("b"), [CODE_OK, 1000]);
  t.same(await check("c"), [CODE_OVER_LIMIT, 0], "2000 + 2000 + 2000 > 5000");
});
