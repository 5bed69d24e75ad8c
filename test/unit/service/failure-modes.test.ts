import t from "tap";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import type { CounterIncrement, CounterStore } from "../../../src/engine/counter-store.js";
import { CODE_OK, CODE_OVER_LIMIT, type DecisionRequest } from "../../../src/engine/decision-request.js";
import { restatingEngineStats } from "../../../src/engine/scaled-rule-set.js";
import { BackendError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/observability/logger.js";
import type { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { type BackendFailureMode, FailureMode } from "../../../src/service/failure-mode.js";
import { LocalLimiter } from "../../../src/service/local-limiter.js";
import { RateLimitService } from "../../../src/service/rate-limit-service.js";
import {
  counterValue,
  entries,
  newEngine,
  newRegistry,
  request,
  ruleCounts,
  rulesFromYaml,
  stat,
  TestClock,
  UINT32_MAX,
} from "../engine/decision-fixture.js";

// BACKEND_FAILURE_MODE (docs/outages.md) in process: a store that fails while `down`,
// the service, and what each mode answers, counts and logs.
const YAML = `domain: d
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: shadow
    rate_limit: {unit: minute, requests_per_unit: 10}
    shadow_mode: true
  - key: free
    rate_limit: {unlimited: true}
  - key: slide
    rate_limit: {unit: minute, requests_per_unit: 6, algorithm: sliding_window}
  - key: bucket
    rate_limit: {unit: minute, requests_per_unit: 60, algorithm: token_bucket, burst: 4}
`;
const TIMEOUT = new BackendError("redis 10.0.0.7:6379: no answer within 300 ms", {
  clientMessage: "redis: timed out",
});

/** A memory store standing in for Redis: while `down`, every call fails as a timed-out Redis call does. */
class FailingStore implements CounterStore {
  readonly name = "redis";
  readonly capabilities = {
    readsWithoutCounting: true,
    algorithms: ["fixed_window"] as const,
    reservations: false,
    remote: true,
  };
  readonly #memory: MemoryStore;
  down = false;
  constructor(options: { nowMs: () => number }) {
    this.#memory = new MemoryStore(options);
  }
  increment(increments: readonly CounterIncrement[]): Promise<number[]> {
    if (this.down) return Promise.reject(TIMEOUT);
    return Promise.resolve(this.#memory.increment(increments));
  }
  read(increments: readonly CounterIncrement[]): Promise<number[]> {
    if (this.down) return Promise.reject(TIMEOUT);
    return Promise.resolve(this.#memory.read(increments));
  }
  release(): void {}
  traceSpan() {
    return { name: "redis", attributes: {} };
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  onHealthChange(): void {}
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function setUp(mode: BackendFailureMode, options: { fraction?: number; shadowMode?: boolean } = {}) {
  const clock = new TestClock(2222_500);
  const registry: StatsRegistry = newRegistry();
  const engineOptions = { shadowMode: options.shadowMode ?? false };
  const engine = newEngine(registry, engineOptions);
  const lines: [string, string][] = [];
  const local =
    mode === "local"
      ? new LocalLimiter({
          engine: newEngine(registry, { ...engineOptions, stats: restatingEngineStats(registry) }),
          store: new MemoryStore({ nowMs: clock.now }),
          fraction: options.fraction ?? 1,
        })
      : undefined;
  const store = new FailingStore({ nowMs: clock.now });
  const service = new RateLimitService({
    engine,
    store,
    counters: {
      configLoadSuccess: registry.counter("ratelimit.service.config_load_success"),
      configLoadError: registry.counter("ratelimit.service.config_load_error"),
      backendError: registry.counter("ratelimit.service.call.should_rate_limit.redis_error"),
      serviceError: registry.counter("ratelimit.service.call.should_rate_limit.service_error"),
    },
    logger: silentLogger,
    stopIncrementWhenOverLimit: false,
    nowMs: clock.now,
    failureMode: new FailureMode({
      mode,
      engine,
      local,
      answered: registry.counter(`ratelimit.service.backend_failure.${mode}`),
      log: { warn: (kind, text) => lines.push([kind, typeof text === "string" ? text : text()]) },
    }),
  });
  service.applyRuleUpdate({ ok: true, rules: rulesFromYaml(registry, YAML) });
  return { clock, registry, store, service, lines };
}

const ALL: DecisionRequest = request("d", [
  entries(["k", "v"]),
  entries(["shadow", "v"]),
  entries(["free", "v"]),
  entries(["other", "v"]),
]);
const failures = (registry: StatsRegistry, mode: string) => [
  stat(registry, "ratelimit.service.call.should_rate_limit.redis_error"),
  stat(registry, `ratelimit.service.backend_failure.${mode}`),
];

t.test(
  "error: the call fails as the reference's does, counted in redis_error and backend_failure.error",
  async (t) => {
    const { service, store, registry, lines } = setUp("error");
    store.down = true;
    t.equal(await Promise.resolve(service.shouldRateLimit(ALL)).catch((error: unknown) => error), TIMEOUT);
    t.strictSame(failures(registry, "error"), [1, 1]);
    t.strictSame(lines, [], "the transports log failed calls, not the failure mode");
  },
);

t.test("allow: every limited descriptor OK with an empty window's figures; nothing counted", async (t) => {
  const { service, store, registry, lines } = setUp("allow");
  store.down = true;
  const decision = await service.shouldRateLimit({ ...ALL, hitsAddend: 3 });
  t.equal(decision.overallCode, CODE_OK);
  t.strictSame(
    decision.statuses.map((s) => [
      s.code,
      s.currentLimit?.requestsPerUnit,
      s.limitRemaining,
      s.durationUntilResetSeconds,
    ]),
    [
      [CODE_OK, 10, 7, 58],
      [CODE_OK, 10, 7, 58],
      [CODE_OK, undefined, UINT32_MAX, 0],
      [CODE_OK, undefined, 0, 0],
    ],
  );
  t.strictSame(failures(registry, "allow"), [1, 1]);
  t.strictSame(ruleCounts(registry, "d.k"), {
    total_hits: 3,
    over_limit: 0,
    near_limit: 0,
    within_limit: 0,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
  t.strictSame(lines, [
    [
      "backend failure mode",
      "counter store failed (redis 10.0.0.7:6379: no answer within 300 ms), answered with failure mode allow",
    ],
  ]);
});

t.test("deny: limited descriptors OVER_LIMIT, shadow-mode rules and unlimited ones OK", async (t) => {
  const { service, store, registry } = setUp("deny");
  store.down = true;
  const decision = await service.shouldRateLimit(ALL);
  t.equal(decision.overallCode, CODE_OVER_LIMIT);
  t.strictSame(
    decision.statuses.map((s) => [s.code, s.limitRemaining, s.durationUntilResetSeconds]),
    [
      [CODE_OVER_LIMIT, 0, 58],
      [CODE_OK, 9, 58],
      [CODE_OK, UINT32_MAX, 0],
      [CODE_OK, 0, 0],
    ],
  );
  t.strictSame(failures(registry, "deny"), [1, 1]);
  const unmatched = await service.shouldRateLimit(request("d", [entries(["other", "v"])]));
  t.equal(unmatched.overallCode, CODE_OK, "a request needing no counter never asks the store");
  t.strictSame(failures(registry, "deny"), [1, 1]);
});

t.test("deny under SHADOW_MODE: the overall answer stays OK", async (t) => {
  const { service, store } = setUp("deny", { shadowMode: true });
  store.down = true;
  const decision = await service.shouldRateLimit(request("d", [entries(["k", "v"])]));
  t.equal(decision.overallCode, CODE_OK);
  t.equal(decision.statuses[0]!.code, CODE_OVER_LIMIT);
});

t.test("deny: sliding windows and token buckets reset after their whole length", async (t) => {
  const { service, store } = setUp("deny");
  store.down = true;
  const decision = await service.shouldRateLimit(
    request("d", [entries(["slide", "v"]), entries(["bucket", "v"])]),
  );
  t.strictSame(
    decision.statuses.map((s) => [s.code, s.durationUntilResetSeconds]),
    [
      [CODE_OVER_LIMIT, 60],
      [CODE_OVER_LIMIT, 60],
    ],
  );
});

t.test("local, fraction 0.5: half of each limit in process, the store's counts untouched", async (t) => {
  const { service, store, registry } = setUp("local", { fraction: 0.5 });
  const one = request("d", [entries(["k", "v"])]);
  for (let i = 0; i < 2; i++) await service.shouldRateLimit(one);
  t.equal(await counterValue(store, "d_k_v_2220"), 2);
  store.down = true;
  const answers = [];
  for (let i = 0; i < 6; i++) {
    const decision = await service.shouldRateLimit(one);
    const status = decision.statuses[0]!;
    answers.push([status.code, status.currentLimit?.requestsPerUnit, status.limitRemaining]);
  }
  t.strictSame(answers, [
    [CODE_OK, 5, 4],
    [CODE_OK, 5, 3],
    [CODE_OK, 5, 2],
    [CODE_OK, 5, 1],
    [CODE_OK, 5, 0],
    [CODE_OVER_LIMIT, 5, 0],
  ]);
  t.strictSame(failures(registry, "local"), [6, 6]);
  t.strictSame(ruleCounts(registry, "d.k"), {
    total_hits: 8,
    over_limit: 1,
    near_limit: 1,
    within_limit: 7,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
  store.down = false;
  const back = await service.shouldRateLimit(one);
  t.strictSame([back.statuses[0]!.currentLimit?.requestsPerUnit, back.statuses[0]!.limitRemaining], [10, 7]);
  t.equal(await counterValue(store, "d_k_v_2220"), 3, "local counts are not written back");
});

t.test("local: token buckets, sliding windows and request overrides are scaled too", async (t) => {
  const { service, store } = setUp("local", { fraction: 0.5 });
  store.down = true;
  const codes = async (req: DecisionRequest, n: number) => {
    const seen = [];
    for (let i = 0; i < n; i++) seen.push((await service.shouldRateLimit(req)).overallCode);
    return seen;
  };
  t.strictSame(await codes(request("d", [entries(["bucket", "v"])]), 3), [CODE_OK, CODE_OK, CODE_OVER_LIMIT]);
  t.strictSame(await codes(request("d", [entries(["slide", "v"])]), 4), [
    CODE_OK,
    CODE_OK,
    CODE_OK,
    CODE_OVER_LIMIT,
  ]);
  const override = request("d", [{ ...entries(["k", "o"]), limit: { requestsPerUnit: 4, unit: 2 } }]);
  t.strictSame(await codes(override, 3), [CODE_OK, CODE_OK, CODE_OVER_LIMIT]);
});
