import type { DecisionEntry } from "./decision-request.js";
import type { EngineStats, RateLimitRule, RuleLevel, RuleNode, RuleStats } from "./rule-set.js";
import { wildcardMatches } from "./wildcard.js";

/** A configured limit matched by a request descriptor, with the stats and cache-key details it implies. */
export interface MatchedLimit {
  readonly rule: RateLimitRule;
  readonly stats: RuleStats;
  /**
   * Per entry index, the wildcard value that replaces the request value in the cache key
   * (`share_threshold`), or undefined when no entry shares.
   */
  readonly sharePatterns: readonly (string | undefined)[] | undefined;
}

const EXACT = 0;
const WILDCARD = 1;
const KEY_ONLY = 2;

// Scratch space for the path walked by one match; the engine is synchronous, so one set suffices.
const pathNodes: RuleNode[] = [];
const pathKinds: number[] = [];

/**
 * Finds the limit for one descriptor (reference `GetLimit`). At each level: exact `key_value`, else the
 * first matching wildcard in config order, else the value-less `key`. The request's depth must equal the
 * config depth. Returns undefined when nothing with a `rate_limit` matches at the last entry.
 */
export function matchLimit(
  root: RuleLevel,
  domain: string,
  entries: readonly DecisionEntry[],
  stats: EngineStats,
): MatchedLimit | undefined {
  let level: RuleLevel = root;
  let rule: RateLimitRule | undefined;
  let share: (string | undefined)[] | undefined;
  let statsKeyDiffers = false;
  const count = entries.length;
  for (let i = 0; i < count; i++) {
    const entry = entries[i]!;
    const keyValue = `${entry.key}_${entry.value}`;
    let kind = EXACT;
    let node = level.exact.get(keyValue);
    if (node === undefined) {
      kind = WILDCARD;
      for (const candidate of level.wildcards) {
        if (wildcardMatches(candidate.wildcard!, keyValue)) {
          node = candidate;
          break;
        }
      }
    }
    if (node === undefined) {
      kind = KEY_ONLY;
      node = level.exact.get(entry.key);
      if (node === undefined) break;
    }
    pathNodes[i] = node;
    pathKinds[i] = kind;
    if (kind === WILDCARD && node.shareThreshold) {
      share ??= new Array<string | undefined>(count);
      share[i] = trimKeyPrefix(node.composite, entry.key);
    }
    if (!statsKeyDiffers) statsKeyDiffers = levelChangesStatsKey(kind, node, entry);
    if (node.limit !== undefined && i === count - 1) rule = node.limit;
    if (node.children === undefined) break;
    level = node.children;
  }
  if (rule === undefined) return undefined;
  if (rule.detailedMetric) {
    return { rule, stats: stats.ruleStats(detailedStatsKey(domain, entries, share)), sharePatterns: share };
  }
  if (statsKeyDiffers) {
    const key = valueToMetricStatsKey(domain, entries, share);
    if (key !== rule.fullKey) return { rule, stats: stats.ruleStats(key), sharePatterns: share };
  }
  return { rule, stats: rule.stats, sharePatterns: share };
}

/** Stats key of a request-level override: `domain.k1_v1.k2` (value omitted when empty). */
export function overrideStatsKey(domain: string, entries: readonly DecisionEntry[]): string {
  let key = domain;
  for (const entry of entries) key += entry.value === "" ? `.${entry.key}` : `.${entry.key}_${entry.value}`;
  return key;
}

/** `composite` minus a leading `key_`, as the reference's TrimPrefix (unchanged when it does not start so). */
function trimKeyPrefix(composite: string, key: string): string {
  return startsWithKey(composite, key) ? composite.slice(key.length + 1) : composite;
}

function startsWithKey(composite: string, key: string): boolean {
  return (
    composite.length > key.length && composite.charCodeAt(key.length) === 95 && composite.startsWith(key)
  );
}

/** Whether this level writes something other than its config composite into the value_to_metric key. */
function levelChangesStatsKey(kind: number, node: RuleNode, entry: DecisionEntry): boolean {
  if (kind === EXACT) return entry.value === "";
  if (kind === KEY_ONLY) return node.valueToMetric && entry.value !== "";
  return node.shareThreshold || node.valueToMetric || !startsWithKey(node.composite, entry.key);
}

/** detailed_metric: every entry as `key_value` (share_threshold entries as `key_pattern`). */
function detailedStatsKey(
  domain: string,
  entries: readonly DecisionEntry[],
  share: readonly (string | undefined)[] | undefined,
): string {
  let key = domain;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const pattern = share?.[i];
    if (pattern !== undefined) key += `.${entry.key}_${pattern}`;
    else if (share !== undefined)
      key += entry.value === "" ? `.${entry.key}` : `.${entry.key}_${entry.value}`;
    else key += `.${entry.key}_${entry.value}`;
  }
  return key;
}

/**
 * value_to_metric: runtime values for levels that ask for them (and matched value-less or by wildcard),
 * wildcard patterns for share_threshold levels, config text elsewhere.
 */
function valueToMetricStatsKey(
  domain: string,
  entries: readonly DecisionEntry[],
  share: readonly (string | undefined)[] | undefined,
): string {
  let key = domain;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const node = pathNodes[i]!;
    const kind = pathKinds[i];
    const withValue = entry.value === "" ? entry.key : `${entry.key}_${entry.value}`;
    const pattern = share?.[i];
    if (pattern !== undefined) key += `.${entry.key}_${pattern}`;
    else if (kind === EXACT) key += `.${withValue}`;
    else if (kind === WILDCARD)
      key += node.valueToMetric
        ? `.${withValue}`
        : `.${entry.key}_${trimKeyPrefix(node.composite, entry.key)}`;
    else key += node.valueToMetric ? `.${withValue}` : `.${entry.key}`;
  }
  return key;
}
