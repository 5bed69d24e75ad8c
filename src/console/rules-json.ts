import type { RateLimitRule, RuleNode, RuleSet, RuleStats } from "../engine/rule-set.js";
import { unitName } from "../engine/units.js";
import type { RuleCounts } from "../observability/rule-counts.js";
import type { LimitJson, RuleNodeJson, RulesAnswer } from "./console-contract.js";

/** Options of {@link rulesJson}. */
export interface RulesJsonOptions {
  /** Only descriptors whose key, value or full key contain this (any case), with their ancestors and children. */
  readonly query: string;
  /**
   * About this many descriptors at most (the ancestors of the last ones shown may add a few): a rule set of
   * 200,000 would be tens of MB of JSON for one page.
   */
  readonly maxNodes: number;
}

/** `GET /console/api/rules`: every domain's rule tree in configuration order, filtered and bounded. */
export function rulesJson(
  rules: RuleSet | undefined,
  countsOf: (stats: RuleStats) => RuleCounts,
  options: RulesJsonOptions,
): RulesAnswer {
  const walk = {
    needle: options.query.trim().toLowerCase(),
    left: options.maxNodes,
    truncated: false,
    countsOf,
  };
  const domains: RulesAnswer["domains"][number][] = [];
  let total = 0;
  for (const [domain, level] of rules?.domains ?? []) {
    total += countNodes(level.exact.values());
    const shown = pick(level.exact.values(), walk, false);
    if (shown.length > 0 || walk.needle === "") domains.push({ domain, rules: shown });
  }
  return {
    loadedAtMs: rules?.origin?.loadedAtMs ?? null,
    domains,
    total,
    shown: options.maxNodes - walk.left,
    truncated: walk.truncated,
  };
}

interface Walk {
  readonly needle: string;
  left: number;
  truncated: boolean;
  readonly countsOf: (stats: RuleStats) => RuleCounts;
}

/** The nodes to show of one level: those matching (with all below them) and those with a match below. */
function pick(nodes: Iterable<RuleNode>, walk: Walk, inMatch: boolean): RuleNodeJson[] {
  const shown: RuleNodeJson[] = [];
  for (const node of nodes) {
    if (walk.left === 0) {
      // Cut short only if something left out would have been shown.
      if (inMatch || walk.needle === "" || hasMatch(node, walk.needle)) walk.truncated = true;
      if (walk.truncated) break;
      continue;
    }
    const matched = inMatch || walk.needle === "" || matches(node, walk.needle);
    if (matched) walk.left--;
    const children = pick(node.children?.exact.values() ?? [], walk, matched);
    if (!matched && children.length === 0) continue;
    if (!matched) walk.left = Math.max(walk.left - 1, 0);
    shown.push(nodeJson(node, children, walk.countsOf));
  }
  return shown;
}

function matches(node: RuleNode, needle: string): boolean {
  return (
    node.key.toLowerCase().includes(needle) ||
    node.value.toLowerCase().includes(needle) ||
    node.fullKey.toLowerCase().includes(needle)
  );
}

function hasMatch(node: RuleNode, needle: string): boolean {
  if (matches(node, needle)) return true;
  for (const child of node.children?.exact.values() ?? []) if (hasMatch(child, needle)) return true;
  return false;
}

function countNodes(nodes: Iterable<RuleNode>): number {
  let count = 0;
  for (const node of nodes) count += 1 + countNodes(node.children?.exact.values() ?? []);
  return count;
}

function nodeJson(
  node: RuleNode,
  children: RuleNodeJson[],
  countsOf: (stats: RuleStats) => RuleCounts,
): RuleNodeJson {
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
    children,
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
    reservation:
      rule.reservation === undefined
        ? null
        : {
            estimate: rule.reservation.estimate,
            ttlSeconds: rule.reservation.ttlSeconds,
            requestIdKey: rule.reservation.requestIdKey ?? null,
          },
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
