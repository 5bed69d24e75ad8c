/**
 * Shared helpers for the matching, stats-key and cache-key tests: build a rule set from YAML text the way
 * the daemon does (parse, validate, compile with pinned stats), then match or plan against it.
 */

import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import type { DecisionEngine, DecisionEngineOptions } from "../../../src/engine/decision-engine.js";
import type { DecisionDescriptor, DecisionEntry } from "../../../src/engine/decision-request.js";
import { type MatchedLimit, matchLimit } from "../../../src/engine/rule-matcher.js";
import type { RuleLevel, RuleSet } from "../../../src/engine/rule-set.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { newEngine, rulesFromYaml } from "../../helpers/engine-fixtures.js";

export interface Rules {
  readonly ruleSet: RuleSet;
  readonly registry: StatsRegistry;
  readonly domain: string;
  readonly root: RuleLevel;
  /** matchLimit for `entries` in this rule set's domain. */
  match(...entries: string[]): MatchedLimit | undefined;
}

/** `"key=value"` → entry; only the first `=` splits, so `"k="` is an empty value. */
export function entriesOf(...pairs: string[]): DecisionEntry[] {
  return pairs.map((pair) => {
    const at = pair.indexOf("=");
    if (at < 0) throw new Error(`entry "${pair}" has no "="`);
    return { key: pair.slice(0, at), value: pair.slice(at + 1) };
  });
}

/** Compiles one YAML document; its `domain:` must be present. */
export function rulesFrom(yaml: string): Rules {
  const registry = new StatsRegistry({ maxDynamicKeys: 1000 });
  const document = parseRuleYaml("test.yaml", yaml);
  const ruleSet = rulesFromYaml(registry, yaml);
  const root = ruleSet.domains.get(document.domain);
  if (root === undefined) throw new Error(`domain ${document.domain} missing from rule set`);
  return {
    ruleSet,
    registry,
    domain: document.domain,
    root,
    match: (...pairs) => matchLimit(root, document.domain, entriesOf(...pairs), registry),
  };
}

/** An engine with the reference defaults and no jitter, overridable per test. */
export function engineFor(rules: Rules, options: Partial<DecisionEngineOptions> = {}): DecisionEngine {
  return newEngine(rules.registry, options);
}

/** One descriptor per element, each given as `"key=value"` pairs. */
export function descriptorsOf(...descriptors: string[][]): DecisionDescriptor[] {
  return descriptors.map((pairs) => ({ entries: entriesOf(...pairs) }));
}

/** Cache keys the engine would increment for `descriptors` at `nowSeconds`. */
export function cacheKeysAt(rules: Rules, nowSeconds: number, ...descriptors: string[][]): string[] {
  const plan = engineFor(rules).plan(
    rules.ruleSet,
    { domain: rules.domain, descriptors: descriptorsOf(...descriptors), hitsAddend: 1 },
    nowSeconds,
  );
  return plan.increments.map((increment) => increment.key);
}
