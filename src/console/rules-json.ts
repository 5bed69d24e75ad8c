import type { RateLimitRule, RuleNode, RuleSet, RuleStats } from "../engine/rule-set.js";
import { unitName } from "../engine/units.js";
import type { RuleCounts } from "../observability/stats-registry.js";

/** A limit as the console's Rules page shows it. */
export interface LimitJson {
  readonly name: string | null;
  readonly requestsPerUnit: number;
  readonly unit: string | null;
  readonly unitMultiplier: number;
  readonly algorithm: string;
  readonly burst: number | null;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  readonly replaces: readonly string[];
  readonly stacked: readonly LimitJson[];
}

/** One configured descriptor, with its counts since start when it has a limit. */
export interface RuleNodeJson {
  readonly key: string;
  readonly value: string;
  readonly fullKey: string;
  readonly source: string | null;
  readonly wildcard: boolean;
  readonly shareThreshold: boolean;
  readonly valueToMetric: boolean;
  readonly limit: LimitJson | null;
  readonly totals: RuleCounts | null;
  readonly children: readonly RuleNodeJson[];
}

/** `GET /console/api/rules`: every domain's rule tree in configuration order. */
export function rulesJson(
  rules: RuleSet | undefined,
  countsOf: (stats: RuleStats) => RuleCounts,
): { loadedAtMs: number | null; domains: { domain: string; rules: RuleNodeJson[] }[] } {
  const domains = [...(rules?.domains ?? [])].map(([domain, level]) => ({
    domain,
    rules: [...level.exact.values()].map((node) => nodeJson(node, countsOf)),
  }));
  return { loadedAtMs: rules?.origin?.loadedAtMs ?? null, domains };
}

function nodeJson(node: RuleNode, countsOf: (stats: RuleStats) => RuleCounts): RuleNodeJson {
  return {
    key: node.key,
    value: node.value,
    fullKey: node.fullKey,
    source: node.source ?? null,
    wildcard: node.wildcard !== undefined,
    shareThreshold: node.shareThreshold,
    valueToMetric: node.valueToMetric,
    limit: node.limit === undefined ? null : limitJson(node.limit),
    totals: node.limit === undefined ? null : countsOf(node.limit.stats),
    children: [...(node.children?.exact.values() ?? [])].map((child) => nodeJson(child, countsOf)),
  };
}

function limitJson(rule: RateLimitRule): LimitJson {
  return {
    name: rule.name === "" ? null : rule.name,
    requestsPerUnit: rule.requestsPerUnit,
    unit: rule.unit === 0 ? null : unitName(rule.unit),
    unitMultiplier: rule.unitMultiplier ?? 1,
    algorithm: rule.algorithm ?? "fixed_window",
    burst: rule.algorithm === "token_bucket" ? (rule.burst ?? rule.requestsPerUnit) : null,
    unlimited: rule.unlimited,
    shadowMode: rule.shadowMode,
    quotaMode: rule.quotaMode,
    detailedMetric: rule.detailedMetric,
    replaces: rule.replaces,
    stacked: (rule.stacked ?? []).map(limitJson),
  };
}

/** How many descriptors carry a limit, over every domain. */
export function countRules(rules: RuleSet | undefined): number {
  let count = 0;
  const visit = (node: RuleNode) => {
    if (node.limit !== undefined) count++;
    for (const child of node.children?.exact.values() ?? []) visit(child);
  };
  for (const level of rules?.domains.values() ?? []) for (const node of level.exact.values()) visit(node);
  return count;
}
