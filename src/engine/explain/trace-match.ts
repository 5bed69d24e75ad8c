import type { DecisionEntry } from "../decision-request.js";
import type { RuleLevel, RuleNode } from "../rule-set.js";
import { wildcardMatches } from "../wildcard.js";

/** How a level's node was found: `key_value` exactly, a `*` pattern, or the value-less `key`. */
export type MatchHow = "exact" | "wildcard" | "key only";

/** One candidate of a level, in the order matching tries them. */
export interface TriedCandidate {
  readonly candidate: string;
  readonly how: MatchHow;
  readonly matched: boolean;
}

/** One level of the search: the request entry, what was tried, and the node chosen (if any). */
export interface SearchLevel {
  readonly entry: DecisionEntry;
  readonly tried: readonly TriedCandidate[];
  readonly matched: string | null;
  readonly how: MatchHow | null;
}

/** The search for one descriptor's rule, level by level, and the node it ended on. */
export interface MatchTrace {
  readonly levels: readonly SearchLevel[];
  /** The node of the last entry when the walk reached it, whether or not it holds a limit. */
  readonly last: RuleNode | undefined;
}

/**
 * The rule matcher's walk (src/engine/rule-matcher.ts `matchLimit`) told step by step, for `POST /explain`:
 * at each level the exact `key_value` node, then every wildcard in configuration order until one matches,
 * then the value-less `key` node. Touches no stats.
 */
export function traceMatch(root: RuleLevel, entries: readonly DecisionEntry[]): MatchTrace {
  const levels: SearchLevel[] = [];
  let level: RuleLevel | undefined = root;
  let last: RuleNode | undefined;
  for (let i = 0; i < entries.length && level !== undefined; i++) {
    const entry = entries[i]!;
    const keyValue = `${entry.key}_${entry.value}`;
    const tried: TriedCandidate[] = [];
    let node: RuleNode | undefined = level.exact.get(keyValue);
    let how: MatchHow | null = null;
    tried.push({ candidate: keyValue, how: "exact", matched: node !== undefined });
    if (node !== undefined) how = "exact";
    else {
      for (const candidate of level.wildcards) {
        const matched = wildcardMatches(candidate.wildcard!, keyValue);
        tried.push({ candidate: candidate.composite, how: "wildcard", matched });
        if (matched) {
          node = candidate;
          how = "wildcard";
          break;
        }
      }
    }
    if (node === undefined) {
      node = level.exact.get(entry.key);
      tried.push({ candidate: entry.key, how: "key only", matched: node !== undefined });
      if (node !== undefined) how = "key only";
    }
    levels.push({ entry, tried, matched: node?.composite ?? null, how });
    if (node === undefined) break;
    if (i === entries.length - 1) last = node;
    level = node.children;
  }
  return { levels, last };
}
