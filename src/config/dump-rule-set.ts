import type { RateLimitRule, Reservation, RuleLevel, RuleSet } from "../engine/rule-set.js";
import { unitName } from "../engine/units.js";

/**
 * The `/rlconfig` text of the reference's `Dump()`: one line per descriptor that has a rate_limit, parents
 * before children, `<fullKey>: unit=<UNIT> requests_per_unit=<n>, shadow_mode: <b>, quota_mode: <b>`.
 * The reference's order is Go map order (random); ratelimitd uses configuration order.
 *
 * A limit using the extensions (docs/algorithms.md) adds `, algorithm=<a>, burst=<n>,
 * unit_multiplier=<m>` (burst for token_bucket only), then `, reservation={estimate=<n>, ttl=<s>s[,
 * request_id_key=<k>]}` for a limit with a reservation; a `rate_limits` list of several limits prints one line per limit, its key followed
 * by ` rate_limits[<i>]`. Lines of plain rules are exactly the reference's.
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
      const stacked = limit.stacked ?? [];
      if (stacked.length === 0) text += limitLine(limit, limit.fullKey);
      else
        for (const each of [limit, ...stacked])
          text += limitLine(each, `${each.fullKey} rate_limits[${each.limitIndex}]`);
    }
    if (node.children !== undefined) text += dumpLevel(node.children);
  }
  return text;
}

function limitLine(limit: RateLimitRule, label: string): string {
  let extensions = "";
  if (limit.algorithm !== undefined) {
    extensions = `, algorithm=${limit.algorithm}`;
    // burst means something for a token bucket only (the YAML refuses it elsewhere).
    if (limit.algorithm === "token_bucket") extensions += `, burst=${limit.burst}`;
    extensions += `, unit_multiplier=${limit.unitMultiplier}`;
    if (limit.reservation !== undefined) extensions += `, reservation=${reservationText(limit.reservation)}`;
  }
  return (
    `${label}: unit=${unitName(limit.unit)} requests_per_unit=${limit.requestsPerUnit}, ` +
    `shadow_mode: ${limit.shadowMode}, quota_mode: ${limit.quotaMode}${extensions}\n`
  );
}

/** A reservation as `/rlconfig` and the config checker print it: `{estimate=2000, ttl=300s, request_id_key=x}`. */
export function reservationText(reservation: Reservation): string {
  const id = reservation.requestIdKey === undefined ? "" : `, request_id_key=${reservation.requestIdKey}`;
  return `{estimate=${reservation.estimate}, ttl=${reservation.ttlSeconds}s${id}}`;
}
