/**
 * Shared set-up for the decision, status, headers, metadata and local-cache tests: rule sets from YAML,
 * an engine with the reference's defaults (NEAR_LIMIT_RATIO 0.8, no jitter), and exact stat reads.
 * Not a test file (no `.test.ts`), so tap does not run it on its own.
 */

import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import type { CounterStore } from "../../../src/engine/counter-store.js";
import type { DecisionEngine, DecisionEngineOptions } from "../../../src/engine/decision-engine.js";
import {
  CODE_OK,
  type Decision,
  type DecisionDescriptor,
  type DecisionRequest,
} from "../../../src/engine/decision-request.js";
import type { RateLimitRule, RuleSet } from "../../../src/engine/rule-set.js";
import type { UnitValue } from "../../../src/engine/units.js";
import { silentLogger } from "../../../src/observability/logger.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { RateLimitService } from "../../../src/service/rate-limit-service.js";
import { newEngine, rulesFromYaml } from "../../helpers/engine-fixtures.js";

/** The clock of the reference's service tests (`test/service/ratelimit_test.go`). */
export const CLOCK_SECONDS = 2222;
export const UINT32_MAX = 4294967295;
/** The engine's status for an unmatched, replaced or unknown-domain descriptor: `{code: OK}` only. */
export const NO_LIMIT = Object.freeze({
  code: CODE_OK,
  currentLimit: undefined,
  limitRemaining: 0,
  durationUntilResetSeconds: 0,
});
export const SECOND = 1;
export const MINUTE = 2;
export const HOUR = 3;

export function newRegistry(): StatsRegistry {
  return new StatsRegistry({ maxDynamicKeys: 1000 });
}

/** Every counter and gauge of the registry as `name → value`. */
export function statValues(registry: StatsRegistry): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of registry.snapshotLines()) {
    const at = line.lastIndexOf(": ");
    values.set(line.slice(0, at), Number(line.slice(at + 2)));
  }
  return values;
}

/** One stat's value; undefined when the registry never created it. */
export function stat(registry: StatsRegistry, name: string): number | undefined {
  return statValues(registry).get(name);
}

/** The six per-rule counters of `ratelimit.service.rate_limit.<key>`, absent ones as 0. */
export function ruleCounts(registry: StatsRegistry, key: string): Record<string, number> {
  const values = statValues(registry);
  const base = `ratelimit.service.rate_limit.${key}.`;
  const names = [
    "total_hits",
    "over_limit",
    "near_limit",
    "within_limit",
    "shadow_mode",
    "over_limit_with_local_cache",
  ];
  return Object.fromEntries(names.map((name) => [name, values.get(base + name) ?? 0]));
}

/** `key=value, …` descriptors in one request. */
export function request(domain: string, descriptors: DecisionDescriptor[], hitsAddend = 0): DecisionRequest {
  return { domain, descriptors, hitsAddend };
}

export function entries(...pairs: [string, string][]): DecisionDescriptor {
  return { entries: pairs.map(([key, value]) => ({ key, value })) };
}

/**
 * plan + complete with the counter store replaced by `countersAfter` (the INCRBY results, one per
 * increment), as the reference's service tests stub DoLimit.
 */
export function decideWith(
  engine: DecisionEngine,
  rules: RuleSet,
  req: DecisionRequest,
  countersAfter: number[],
  nowSeconds = CLOCK_SECONDS,
): Decision {
  const plan = engine.plan(rules, req, nowSeconds);
  if (plan.increments.length !== countersAfter.length) {
    throw new Error(
      `test set-up: ${plan.increments.length} increments planned, ${countersAfter.length} counters given`,
    );
  }
  return engine.complete(plan, countersAfter, nowSeconds);
}

/** A bare rule for the status formulas (stats passed separately). */
export function bareRule(
  registry: StatsRegistry,
  requestsPerUnit: number,
  unit: UnitValue,
  shadowMode = false,
): RateLimitRule {
  const stats = registry.pinnedRuleStats("d.k");
  return {
    requestsPerUnit,
    unit,
    name: "",
    replaces: [],
    unlimited: false,
    shadowMode,
    quotaMode: false,
    detailedMetric: false,
    fullKey: "d.k",
    stats,
    metadata: undefined,
  };
}

/** A mutable clock in milliseconds, shared by the service and its MemoryStore. */
export class TestClock {
  constructor(public ms: number) {}
  readonly now = (): number => this.ms;
}

/**
 * RateLimitService over a MemoryStore (or the given store), on `clock`, with `yaml` loaded; for in-process
 * end-to-end flows. The service's own counters live in `registry` under the reference's names.
 */
export function newService<S extends CounterStore = MemoryStore>(
  yaml: string,
  clock: TestClock,
  options: { engine?: Partial<DecisionEngineOptions>; stopIncrementWhenOverLimit?: boolean; store?: S } = {},
) {
  const registry = newRegistry();
  const store = options.store ?? (new MemoryStore({ nowMs: clock.now }) as unknown as S);
  const service = new RateLimitService({
    engine: newEngine(registry, options.engine),
    store,
    counters: {
      configLoadSuccess: registry.counter("ratelimit.service.config_load_success"),
      configLoadError: registry.counter("ratelimit.service.config_load_error"),
      backendError: registry.counter("ratelimit.service.call.should_rate_limit.redis_error"),
      serviceError: registry.counter("ratelimit.service.call.should_rate_limit.service_error"),
    },
    logger: silentLogger,
    stopIncrementWhenOverLimit: options.stopIncrementWhenOverLimit ?? false,
    nowMs: clock.now,
  });
  service.applyRuleUpdate({ ok: true, rules: rulesFromYaml(registry, yaml) });
  return { service, store, registry };
}

/** What the store holds for `key` right now (0 when absent or expired). */
export async function counterValue(store: CounterStore, key: string): Promise<number> {
  const [value] = await store.read([{ key, hits: 0, ttlSeconds: 1, perSecond: false }]);
  return value!;
}

export { newEngine, rulesFromYaml };
