import t from "tap";
import { LocalOverLimitCache } from "../../../src/backends/local-over-limit-cache.js";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import type { CounterIncrement } from "../../../src/engine/counter-store.js";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import { BackendError, InvalidArgumentError, ServiceError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/observability/logger.js";
import { RateLimitService } from "../../../src/service/rate-limit-service.js";
import {
  counterValue,
  entries,
  newEngine,
  newRegistry,
  newService,
  request,
  ruleCounts,
  rulesFromYaml,
  stat,
  TestClock,
} from "../engine/decision-fixture.js";

// ShouldRateLimit end to end in process (the reference's src/service/ratelimit.go and
// src/limiter/base_limiter.go), on a MemoryStore with an injected clock.
const YAML = `domain: d
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 10}
`;
const SERVICE_ERROR = "ratelimit.service.call.should_rate_limit.service_error";
const BACKEND_ERROR = "ratelimit.service.call.should_rate_limit.redis_error";

/** The error `decide` fails with, whether it throws at once or rejects later. */
async function rejection(decide: () => unknown): Promise<unknown> {
  try {
    await decide();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

t.test("10/min at 2222 s: ten OK, the 11th OVER, the next window OK again", async (t) => {
  const clock = new TestClock(2222_500);
  const { service, store, registry } = newService(YAML, clock);
  const req = request("d", [entries(["k", "v"])]);
  for (let i = 1; i <= 10; i++) {
    const decision = await service.shouldRateLimit(req);
    t.match(decision.statuses[0], { code: CODE_OK, limitRemaining: 10 - i, durationUntilResetSeconds: 58 });
  }
  const over = await service.shouldRateLimit(req);
  t.equal(over.overallCode, CODE_OVER_LIMIT);
  t.match(over.statuses[0], { code: CODE_OVER_LIMIT, limitRemaining: 0, durationUntilResetSeconds: 58 });
  t.equal(await counterValue(store, "d_k_v_2220"), 11);
  clock.ms = 2280_000;
  const next = await service.shouldRateLimit(req);
  t.match(next.statuses[0], { code: CODE_OK, limitRemaining: 9, durationUntilResetSeconds: 60 });
  t.same(ruleCounts(registry, "d.k"), {
    total_hits: 12,
    over_limit: 1,
    near_limit: 2,
    within_limit: 11,
    shadow_mode: 0,
    over_limit_with_local_cache: 0,
  });
});

t.test("counters expire with the window's TTL in the store", async (t) => {
  const clock = new TestClock(2222_000);
  const { service, store } = newService(YAML, clock);
  await service.shouldRateLimit(request("d", [entries(["k", "v"])]));
  clock.ms = 2222_000 + 59_999;
  t.equal(await counterValue(store, "d_k_v_2220"), 1);
  clock.ms = 2222_000 + 60_000;
  t.equal(await counterValue(store, "d_k_v_2220"), 0);
});

t.test(
  "rule updates: success swaps the rules, failure keeps them and counts config_load_error",
  async (t) => {
    const { service, registry } = newService(YAML, new TestClock(2222_000));
    const seen: unknown[] = [];
    service.onRulesChange((rules) => seen.push(rules));
    const first = service.rules;
    service.applyRuleUpdate({
      ok: false,
      error: new Error("bad.yaml: config file cannot have empty domain"),
    });
    t.equal(service.rules, first);
    t.equal(stat(registry, "ratelimit.service.config_load_error"), 1);
    const replacement = rulesFromYaml(registry, YAML.replace("10", "3"));
    service.applyRuleUpdate({ ok: true, rules: replacement });
    t.equal(service.rules, replacement);
    t.same(seen, [replacement]);
    t.equal(stat(registry, "ratelimit.service.config_load_success"), 2);
    const decision = await service.shouldRateLimit(request("d", [entries(["k", "v"])]));
    t.equal(decision.statuses[0]!.limitRemaining, 2);
  },
);

t.test("request errors are ServiceErrors counted in service_error", async (t) => {
  const registry = newRegistry();
  const service = new RateLimitService({
    engine: newEngine(registry),
    store: new MemoryStore(),
    counters: {
      configLoadSuccess: registry.counter("ratelimit.service.config_load_success"),
      configLoadError: registry.counter("ratelimit.service.config_load_error"),
      backendError: registry.counter(BACKEND_ERROR),
      serviceError: registry.counter(SERVICE_ERROR),
    },
    logger: silentLogger,
    stopIncrementWhenOverLimit: false,
  });
  const noRules = await rejection(() => service.shouldRateLimit(request("d", [entries(["k", "v"])])));
  t.ok(noRules instanceof ServiceError);
  t.equal((noRules as Error).message, "no rate limit configuration loaded");
  service.applyRuleUpdate({ ok: true, rules: rulesFromYaml(registry, YAML) });
  const noDomain = await rejection(() => service.shouldRateLimit(request("", [entries(["k", "v"])])));
  t.equal((noDomain as Error).message, "rate limit domain must not be empty");
  const noDescriptors = await rejection(() => service.shouldRateLimit(request("d", [])));
  t.equal((noDescriptors as Error).message, "rate limit descriptor list must not be empty");
  t.equal(stat(registry, SERVICE_ERROR), 3);
  t.equal(stat(registry, BACKEND_ERROR), 0);
});

t.test("an override with an invalid unit is rejected and never reaches the store", async (t) => {
  const { service, store, registry } = newService(YAML, new TestClock(2222_000));
  for (const unit of [0, 7, 99]) {
    const req = request("d", [
      entries(["k", "v"]),
      { ...entries(["k", "w"]), limit: { requestsPerUnit: 1, unit } },
    ]);
    const error = await rejection(() => service.shouldRateLimit(req));
    t.ok(error instanceof InvalidArgumentError, `unit ${unit}`);
  }
  t.equal(store.size, 0);
  t.match(ruleCounts(registry, "d.k"), { total_hits: 0 });
  t.equal(stat(registry, "ratelimit.service.rate_limit.d.k_w.total_hits"), undefined);
});

/** A store whose every call fails, as a backend that is down. */
/** A store whose increments fail asynchronously, as a network backend's do. */
class FailingStore extends MemoryStore {
  reads = 0;
  constructor(readonly failure: Error) {
    super();
  }
  // @ts-expect-error: MemoryStore answers synchronously; this stand-in for a network store does not.
  override increment(): Promise<number[]> {
    return Promise.reject(this.failure);
  }
  override read(increments: readonly CounterIncrement[]): number[] {
    this.reads++;
    return super.read(increments);
  }
}

function failingService(
  failure: Error,
  stopIncrementWhenOverLimit = false,
  localCache?: LocalOverLimitCache,
) {
  const registry = newRegistry();
  const store = new FailingStore(failure);
  const service = new RateLimitService({
    engine: newEngine(registry, { localCache }),
    store,
    counters: {
      configLoadSuccess: registry.counter("ratelimit.service.config_load_success"),
      configLoadError: registry.counter("ratelimit.service.config_load_error"),
      backendError: registry.counter(BACKEND_ERROR),
      serviceError: registry.counter(SERVICE_ERROR),
    },
    logger: silentLogger,
    stopIncrementWhenOverLimit,
    nowMs: () => 2222_000,
  });
  service.applyRuleUpdate({ ok: true, rules: rulesFromYaml(registry, YAML) });
  return { service, store, registry };
}

// A backend error fails the request, counts redis_error; total_hits was already counted.
t.test("a backend failure becomes a BackendError with the cause, counted in redis_error", async (t) => {
  const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" });
  const { service, registry } = failingService(cause);
  const error = await rejection(() => service.shouldRateLimit(request("d", [entries(["k", "v"])])));
  t.ok(error instanceof BackendError);
  t.equal((error as BackendError).message, "connect ECONNREFUSED 127.0.0.1:6379", "the details, for the log");
  t.equal((error as BackendError).clientMessage, "memory: connection refused", "no address for clients");
  t.equal((error as BackendError).cause, cause);
  t.equal(stat(registry, BACKEND_ERROR), 1);
  t.equal(stat(registry, SERVICE_ERROR), 0);
  t.match(ruleCounts(registry, "d.k"), { total_hits: 1, within_limit: 0, over_limit: 0 });
});

t.test("a BackendError from the store is passed through unchanged", async (t) => {
  const failure = new BackendError("redis 127.0.0.1:6379: no answer within 1000 ms", {
    clientMessage: "redis: no answer within 1000 ms",
  });
  const { service } = failingService(failure);
  t.equal(await rejection(() => service.shouldRateLimit(request("d", [entries(["k", "v"])]))), failure);
});

t.test("the store is not called when nothing needs counting", async (t) => {
  const { service, registry } = failingService(new Error("must not be called"), true);
  const decision = await service.shouldRateLimit(request("other", [entries(["k", "v"])]));
  t.equal(decision.overallCode, CODE_OK);
  t.equal(stat(registry, BACKEND_ERROR), 0);
});

t.test(
  "current values are read only with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT and no local-cache hit",
  async (t) => {
    const req = request("d", [entries(["k", "v"])]);
    const off = failingService(new Error("down"));
    await rejection(() => off.service.shouldRateLimit(req));
    t.equal(off.store.reads, 0, "setting off: no read");
    const on = failingService(new Error("down"), true);
    await rejection(() => on.service.shouldRateLimit(req));
    t.equal(on.store.reads, 1, "setting on: one read before the increment");
    const cache = new LocalOverLimitCache(1024 * 1024);
    cache.markOverLimit("d_k_v_2220", 10, 60);
    const cached = failingService(new Error("down"), true, cache);
    await rejection(() =>
      cached.service.shouldRateLimit(request("d", [entries(["k", "v"]), entries(["k", "w"])])),
    );
    t.equal(cached.store.reads, 0, "a local-cache hit decides without reading");
  },
);
