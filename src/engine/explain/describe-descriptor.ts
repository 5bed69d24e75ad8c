import type { ReserveOperation } from "../algorithms/counter-operation.js";
import { algorithmNamed } from "../algorithms/registry.js";
import type { ActiveLimit, DecisionPlan } from "../decision-plan.js";
import type { DecisionDescriptor } from "../decision-request.js";
import { algorithmLimitOf, usesExtensions } from "../limit-parts.js";
import type { RateLimitRule } from "../rule-set.js";
import { unitName, unitSeconds } from "../units.js";
import type { MatchTrace } from "./trace-match.js";

/** One limit a descriptor was checked against, as `POST /explain` shows it. */
export interface ExplainedLimit {
  readonly name: string;
  readonly algorithm: string;
  readonly requestsPerUnit: number;
  readonly unit: string;
  readonly unitMultiplier: number;
  readonly windowSeconds: number;
  readonly burst?: number;
  /** Each counter the limit reads, with its current value (before this request). */
  readonly counters: readonly { readonly key: string; readonly value: number }[];
  readonly localCacheHit: boolean;
  /** A limit with a `reservation` (docs/token-budgets.md): its settings and its record now. */
  readonly reservation?: ExplainedReservation;
}

/** A reservation as `POST /explain` shows it, read before this request. */
export interface ExplainedReservation {
  readonly estimate: number;
  readonly ttlSeconds: number;
  readonly requestIdKey: string | null;
  /** The request's id (its request_id_key entry's value); null when it carries none. */
  readonly requestId: string | null;
  /** Whether the request's own hold is live. */
  readonly ownHold: boolean;
  /** U: the window's count. */
  readonly used: number;
  /** R: the sum of the live holds. */
  readonly held: number;
  /** How many holds are live. */
  readonly liveHolds: number;
  /** Whether this request is a check (hits 0: it holds the estimate) or a charge (it settles a hold). */
  readonly role: "check" | "charge";
}

/** Everything about one descriptor but its status (which comes from the decision). */
export interface DescriptorStory {
  readonly rule: string | null;
  readonly override: { readonly requestsPerUnit: number; readonly unit: string } | null;
  readonly replaced: boolean;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly why: string;
  readonly limits: readonly ExplainedLimit[];
}

/**
 * The story of descriptor `index` of `plan`: which rule the search ended on, what overrides, `replaces`,
 * `unlimited`, shadow and quota mode did, and every limit checked with its counters' current values
 * (`current`, the store's read of `plan.increments`). `trace` is undefined when the domain is unknown.
 */
export function describeDescriptor(
  plan: DecisionPlan,
  index: number,
  trace: MatchTrace | undefined,
  current: ArrayLike<number>,
  quotaModeEverywhere: boolean,
): DescriptorStory {
  const descriptor: DecisionDescriptor = plan.request.descriptors[index]!;
  const active = plan.active[index];
  const matched = trace?.last?.limit;
  const override = descriptor.limit
    ? { requestsPerUnit: descriptor.limit.requestsPerUnit, unit: unitName(descriptor.limit.unit) }
    : null;
  const unlimited = plan.unlimited[index] === true;
  const replaced = active === undefined && !unlimited && (matched !== undefined || override !== null);
  const rule = matched?.fullKey ?? null;
  const applying = active?.rule ?? matched;
  const shadowMode = applying?.shadowMode === true;
  const quotaMode = quotaModeEverywhere || applying?.quotaMode === true;
  return {
    rule,
    override,
    replaced,
    unlimited,
    shadowMode,
    quotaMode,
    why: whyOf(plan, trace, { rule, override: override !== null, replaced, unlimited }),
    limits: active === undefined ? [] : limitsOf(active, current),
  };
}

function whyOf(
  plan: DecisionPlan,
  trace: MatchTrace | undefined,
  found: { rule: string | null; override: boolean; replaced: boolean; unlimited: boolean },
): string {
  const domain = plan.request.domain;
  if (trace === undefined) return `domain '${domain}' not found`;
  if (found.unlimited) return `rule ${found.rule} is unlimited`;
  if (found.replaced) return `${found.rule ?? "the override"} is replaced by another descriptor's rule`;
  if (found.override) return "the request's override applies";
  if (found.rule !== null) return `matched rule ${found.rule}`;
  const levels = trace.levels.map((level) => level.entry.key).join(", ");
  return `no rule matched: domain '${domain}' searched at levels ${levels}`;
}

function limitsOf(active: ActiveLimit, current: ArrayLike<number>): ExplainedLimit[] {
  if (active.reference || active.localCacheHit) {
    const first = active.limits[0];
    const value = first === undefined ? [] : [{ key: active.cacheKey, value: current[first.offset]! }];
    return [plainLimit(active.rule, value, active.localCacheHit)];
  }
  return active.limits.map((part) => {
    const { limit, operation, algorithm } = part;
    return {
      name: part.rule.name,
      algorithm: limit.algorithm,
      requestsPerUnit: limit.requestsPerUnit,
      unit: unitName(limit.unit),
      unitMultiplier: limit.unitMultiplier,
      windowSeconds: limit.windowSeconds,
      ...(algorithm.usesBurst ? { burst: limit.burst } : {}),
      counters: operation === undefined ? [] : algorithm.countersOf(operation, current, part.offset),
      localCacheHit: false,
      ...(operation?.kind === "reserve"
        ? { reservation: reservationOf(operation, part.rule, current, part.offset) }
        : {}),
    };
  });
}

function reservationOf(
  operation: ReserveOperation,
  rule: RateLimitRule,
  current: ArrayLike<number>,
  offset: number,
): ExplainedReservation {
  return {
    estimate: operation.estimate,
    ttlSeconds: operation.holdTtlMs / 1000,
    requestIdKey: rule.reservation?.requestIdKey ?? null,
    requestId: operation.requestId === "" ? null : operation.requestId,
    ownHold: current[offset] === 1,
    used: current[offset + 1]!,
    held: current[offset + 2]!,
    liveHolds: current[offset + 3]!,
    role: operation.charge ? "charge" : "check",
  };
}

function plainLimit(
  rule: RateLimitRule,
  counters: { key: string; value: number }[],
  localCacheHit: boolean,
): ExplainedLimit {
  if (usesExtensions(rule)) {
    const limit = algorithmLimitOf(rule);
    return {
      name: rule.name,
      algorithm: limit.algorithm,
      requestsPerUnit: limit.requestsPerUnit,
      unit: unitName(limit.unit),
      unitMultiplier: limit.unitMultiplier,
      windowSeconds: limit.windowSeconds,
      ...(algorithmNamed(limit.algorithm).usesBurst ? { burst: limit.burst } : {}),
      counters,
      localCacheHit,
    };
  }
  return {
    name: rule.name,
    algorithm: "fixed_window",
    requestsPerUnit: rule.requestsPerUnit,
    unit: unitName(rule.unit),
    unitMultiplier: 1,
    windowSeconds: unitSeconds(rule.unit),
    counters,
    localCacheHit,
  };
}
