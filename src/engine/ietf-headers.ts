/**
 * `LIMIT_RESPONSE_HEADERS_FORMAT=ietf`: the `RateLimit-Policy` and `RateLimit` fields of
 * draft-ietf-httpapi-ratelimit-headers-11 (docs/response-headers.md), one List member per
 * limit that applied to the request, serialised by an RFC 9651 Structured Fields serialiser.
 */
import { type Item, serializeList } from "structured-headers";
import type { LimitPolicy } from "./algorithms/algorithm.js";
import { algorithmNamed } from "./algorithms/registry.js";
import type { DescriptorStatus, HeaderPair } from "./decision-request.js";
import { algorithmLimitOf } from "./limit-parts.js";
import type { RateLimitRule } from "./rule-set.js";

/** The field names the draft defines (fixed: the LIMIT_*_HEADER settings name the legacy fields only). */
export const POLICY_FIELD = "RateLimit-Policy";
export const STATE_FIELD = "RateLimit";

/** One limit's state after a decision: what is left and the seconds until reset (a LimitOutcome fits). */
export interface LimitFigures {
  readonly remaining: number;
  readonly resetSeconds: number;
}

/** What the engine checked a descriptor against: its rule, and its limits (one per `rate_limits` entry). */
export interface AppliedLimits {
  readonly rule: RateLimitRule;
  readonly limits: readonly { readonly rule: RateLimitRule }[];
}

/** The policy of one limit as a List member's figures: `q` quota, `w` window in seconds. */
interface Policy extends LimitPolicy {
  readonly name: string;
}

interface Member extends Policy, LimitFigures {}

/**
 * Both fields for every limit that applied: per descriptor with a limit, each limit's figures when the
 * decision has them (`partFigures[i]`, the extensions), else the status's for the descriptor's rule.
 * Members sharing a name are merged into the one closest to refusing (least remaining, then the longest
 * reset), at the first one's place. No headers when no limit applied.
 */
export function ietfHeadersFor(
  active: readonly (AppliedLimits | undefined)[],
  statuses: readonly DescriptorStatus[],
  partFigures: readonly (readonly LimitFigures[] | undefined)[],
): HeaderPair[] {
  const members = new Map<string, Member>();
  const add = (member: Member) => {
    const seen = members.get(member.name);
    if (seen === undefined || closerToRefusing(member, seen)) members.set(member.name, member);
  };
  for (let i = 0; i < active.length; i++) {
    const applied = active[i];
    const status = statuses[i]!;
    if (applied === undefined || status.currentLimit === undefined) continue;
    const figures = partFigures[i];
    if (figures !== undefined) {
      applied.limits.forEach((part, j) => {
        add(memberOf(policyOf(part.rule), figures[j]!));
      });
    } else {
      const figure = { remaining: status.limitRemaining, resetSeconds: status.durationUntilResetSeconds };
      add(memberOf(policyOf(applied.rule), figure));
    }
  }
  if (members.size === 0) return [];
  const policies: Item[] = [];
  const states: Item[] = [];
  for (const member of members.values()) {
    policies.push([
      member.name,
      new Map([
        ["q", member.quota],
        ["w", member.windowSeconds],
      ]),
    ]);
    states.push([
      member.name,
      new Map([
        ["r", member.remaining],
        ["t", member.resetSeconds],
      ]),
    ]);
  }
  return [
    { key: POLICY_FIELD, value: serializeList(policies) },
    { key: STATE_FIELD, value: serializeList(states) },
  ];
}

function memberOf(policy: Policy, figures: LimitFigures): Member {
  // `r` never exceeds `q`: a failure mode's "empty window" status counts from requests_per_unit, which a
  // token bucket's burst may be below (src/engine/unknown-count-status.ts).
  const remaining = Math.min(figures.remaining, policy.quota);
  return { ...policy, remaining, resetSeconds: figures.resetSeconds };
}

function closerToRefusing(member: Member, seen: Member): boolean {
  return (
    member.remaining < seen.remaining ||
    (member.remaining === seen.remaining && member.resetSeconds > seen.resetSeconds)
  );
}

const policies = new WeakMap<RateLimitRule, Policy>();

/** A rule's List member name and figures; computed once per rule (a request's override: per request). */
function policyOf(rule: RateLimitRule): Policy {
  let policy = policies.get(rule);
  if (policy === undefined) {
    policy = { name: itemNameOf(rule.name !== "" ? rule.name : rule.fullKey), ...figuresOf(rule) };
    policies.set(rule, policy);
  }
  return policy;
}

/**
 * `q` and `w`, as the limit's algorithm states them (`Algorithm.policyOf`): a window's requests over
 * `unit × unit_multiplier` seconds, a token bucket's burst over its time to fill.
 */
function figuresOf(rule: RateLimitRule): LimitPolicy {
  const limit = algorithmLimitOf(rule);
  const { quota, windowSeconds } = algorithmNamed(limit.algorithm).policyOf(limit);
  return { quota, windowSeconds };
}

const UTF8 = new TextEncoder();

/**
 * The draft makes the item a String (§3: "The Item[SF] value MUST be a String[SF]"), which holds printable
 * ASCII only (RFC 9651 §3.3.3), so a Display String is not an option. Every byte of the UTF-8 form outside
 * 0x20–0x7E, and `%` itself, becomes `%xx` (lowercase hex), as RFC 9651 §4.1.11 encodes a Display String:
 * reversible by percent-decoding. The serialiser escapes `"` and `\`.
 */
export function itemNameOf(name: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(name)) return name;
  let out = "";
  for (const byte of UTF8.encode(name)) {
    out +=
      byte < 0x20 || byte > 0x7e || byte === 0x25
        ? `%${byte.toString(16).padStart(2, "0")}`
        : String.fromCharCode(byte);
  }
  return out;
}
