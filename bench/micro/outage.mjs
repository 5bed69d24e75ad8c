// Micro-benchmark of a decision while the circuit breaker is open (docs/outages.md):
// RateLimitService over a remote store whose breaker is open, per BACKEND_FAILURE_MODE, beside the same
// decision counted by the memory store. Needs a built dist/.
// Usage: node micro/outage.mjs   (ns/op per case; --json for machine output)
import { CircuitBreaker } from "../../dist/src/backends/circuit-breaker.js";
import { GuardedCounterStore } from "../../dist/src/backends/guarded-counter-store.js";
import { MemoryStore } from "../../dist/src/backends/memory/memory-store.js";
import { buildRuleSet } from "../../dist/src/config/build-rule-set.js";
import { parseRuleYaml } from "../../dist/src/config/yaml/parse-rule-yaml.js";
import { DecisionEngine } from "../../dist/src/engine/decision-engine.js";
import { restatingEngineStats } from "../../dist/src/engine/scaled-rule-set.js";
import { StatsRegistry } from "../../dist/src/observability/stats-registry.js";
import { FailureMode } from "../../dist/src/service/failure-mode.js";
import { LocalLimiter } from "../../dist/src/service/local-limiter.js";
import { RateLimitService } from "../../dist/src/service/rate-limit-service.js";
import { rateLimitRequest } from "../lib/frames.mjs";
import { printNsPerOp } from "../lib/ns-per-op.mjs";

const yaml = `domain: bench
descriptors:
  - key: k0
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
`;
const request = rateLimitRequest(1);
const silent = { debugEnabled: false, debug() {}, info() {}, warn() {}, error() {} };

/** A store standing in for Redis (it never answers: the open breaker never lets a call through). */
class AwayStore extends MemoryStore {
  capabilities = { ...super.capabilities, remote: true };
  increment() {
    throw new Error("the open breaker let a call through");
  }
}

function service(mode) {
  const registry = new StatsRegistry({ maxDynamicKeys: 1000 });
  const rules = buildRuleSet([parseRuleYaml("bench.yaml", yaml)], {
    mergeDomainConfig: false,
    statsFor: (key) => registry.pinnedRuleStats(key),
  });
  const engineOptions = {
    nearLimitRatio: 0.8,
    cacheKeyPrefix: "",
    expirationJitterMaxSeconds: 300,
    shadowMode: false,
    quotaMode: false,
    responseHeaders: undefined,
    dynamicMetadata: false,
    localCache: undefined,
    stats: registry,
    random: Math.random,
  };
  const engine = new DecisionEngine(engineOptions);
  let store = new MemoryStore();
  let failureMode;
  if (mode !== "memory") {
    const breaker = new CircuitBreaker({ failures: 1, cooldownMs: 1e12, maxCooldownMs: 1e12 });
    breaker.failed(breaker.admit(), new Error("redis: connection refused"));
    store = new GuardedCounterStore(new AwayStore(), { breaker, maxPending: 10_000 });
    failureMode = new FailureMode({
      mode,
      engine,
      local:
        mode === "local"
          ? new LocalLimiter({
              engine: new DecisionEngine({ ...engineOptions, stats: restatingEngineStats(registry) }),
              store: new MemoryStore(),
              fraction: 0.5,
            })
          : undefined,
      answered: registry.counter(`ratelimit.service.backend_failure.${mode}`),
      log: { warn() {} },
    });
  }
  const s = new RateLimitService({
    engine,
    store,
    counters: {
      configLoadSuccess: registry.counter("a"),
      configLoadError: registry.counter("b"),
      backendError: registry.counter("c"),
      serviceError: registry.counter("d"),
    },
    logger: silent,
    stopIncrementWhenOverLimit: false,
    failureMode,
  });
  s.applyRuleUpdate({ ok: true, rules });
  return s;
}

const cases = {
  "decision, memory store (baseline)": service("memory"),
  "decision, breaker open, mode allow": service("allow"),
  "decision, breaker open, mode deny": service("deny"),
  "decision, breaker open, mode local (fraction 0.5)": service("local"),
};

/** Each case decides one request; the memory store and an open breaker both answer synchronously. */
printNsPerOp(
  Object.fromEntries(
    Object.entries(cases).map(([name, s]) => {
      if (s.shouldRateLimit(request) instanceof Promise)
        throw new Error(`${name}: expected a synchronous decision`);
      return [name, () => s.shouldRateLimit(request)];
    }),
  ),
);
