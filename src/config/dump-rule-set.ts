import type { RuleLevel, RuleSet } from "../engine/rule-set.js";
import { unitName } from "../engine/units.js";

/**
 * The `/rlconfig` text of the reference's `Dump()`: one line per descriptor that has a rate_limit, parents
 * before children, `<fullKey>: unit=<UNIT> requests_per_unit=<n>, shadow_mode: <b>, quota_mode: <b>`.
 * The reference's order is Go map order (random); ratelimitd uses configuration order.
 */
export function dumpRuleSet(rules: RuleSet | undefined): string {
  if (rules === undefined) return "";
  let text = "";
  for (const level of rules.domains.values()) text += dumpLevel(level);
  return text;
}

function dumpLevel(level: RuleLevel): string {
  let text = "";
  for (const node of level.exact.values()) {
    const limit = node.limit;
    if (limit !== undefined) {
      text +=
        `${limit.fullKey}: unit=${unitName(limit.unit)} requests_per_unit=${limit.requestsPerUnit}, ` +
        `shadow_mode: ${limit.shadowMode}, quota_mode: ${limit.quotaMode}\n`;
    }
    if (node.children !== undefined) text += dumpLevel(node.children);
  }
  return text;
}
