/**
 * Building blocks shared by the engine and service tests: rule sets compiled from YAML as the file source
 * compiles them, and an engine with the reference's defaults (NEAR_LIMIT_RATIO 0.8, no jitter).
 */
import { buildRuleSet } from "../../src/config/build-rule-set.js";
import { parseRuleYaml } from "../../src/config/yaml/parse-rule-yaml.js";
import { DecisionEngine, type DecisionEngineOptions } from "../../src/engine/decision-engine.js";
import type { RuleSet } from "../../src/engine/rule-set.js";
import type { StatsRegistry } from "../../src/observability/stats-registry.js";

/** One YAML document compiled as the file source would, with pinned stats in `registry`. */
export function rulesFromYaml(registry: StatsRegistry, yaml: string, name = "test.yaml"): RuleSet {
  return buildRuleSet([parseRuleYaml(name, yaml)], {
    mergeDomainConfig: false,
    statsFor: (key) => registry.pinnedRuleStats(key),
  });
}

/** An engine with the reference defaults and no jitter, overridable per test. */
export function newEngine(
  registry: StatsRegistry,
  options: Partial<DecisionEngineOptions> = {},
): DecisionEngine {
  return new DecisionEngine({
    nearLimitRatio: 0.8,
    cacheKeyPrefix: "",
    expirationJitterMaxSeconds: 0,
    shadowMode: false,
    quotaMode: false,
    responseHeaders: undefined,
    dynamicMetadata: false,
    localCache: undefined,
    stats: registry,
    random: () => 0,
    ...options,
  });
}
