/**
 * Reservations' request ids (docs/token-budgets.md): a descriptor entry whose key is a `request_id_key` of a
 * reservation in the request's domain names the request. It is taken out of the descriptor before matching,
 * so it never reaches the rule tree, the counter key or stats names.
 */
import type { DecisionDescriptor, DecisionRequest } from "./decision-request.js";
import type { RuleSet } from "./rule-set.js";

/** The request with its request-id entries taken out, and per descriptor those entries by key. */
export interface RequestIds {
  readonly request: DecisionRequest;
  /** Per descriptor: its request-id entries by key; undefined for a descriptor without any. */
  readonly byDescriptor: readonly (ReadonlyMap<string, string> | undefined)[];
}

const NONE: readonly undefined[] = Object.freeze([]);

/**
 * Takes the request-id entries out of `request`'s descriptors. Without any request_id_key in its domain
 * (every rule set without reservations), the request is returned as it is.
 */
export function takeRequestIds(rules: RuleSet, request: DecisionRequest): RequestIds {
  const keys = rules.requestIdKeys?.get(request.domain);
  if (keys === undefined) return { request, byDescriptor: NONE };
  let changed = false;
  const byDescriptor: (ReadonlyMap<string, string> | undefined)[] = [];
  const descriptors = request.descriptors.map((descriptor): DecisionDescriptor => {
    if (!descriptor.entries.some((entry) => keys.has(entry.key))) {
      byDescriptor.push(undefined);
      return descriptor;
    }
    changed = true;
    const ids = new Map<string, string>();
    const entries = descriptor.entries.filter((entry) => {
      if (!keys.has(entry.key)) return true;
      // The first entry of a key names the request, as the first match of a key wins in the rule tree.
      if (!ids.has(entry.key)) ids.set(entry.key, entry.value);
      return false;
    });
    byDescriptor.push(ids);
    return { ...descriptor, entries };
  });
  return changed ? { request: { ...request, descriptors }, byDescriptor } : { request, byDescriptor: NONE };
}
