import type { LimitAlgorithm } from "../engine/algorithms/algorithm-limit.js";
import { LIMIT_ALGORITHMS } from "../engine/algorithms/registry.js";
import type { RateLimitRule, Reservation, RuleStats } from "../engine/rule-set.js";
import { unitFromName, unitName, unitSeconds } from "../engine/units.js";
import { ConfigError } from "../errors.js";
import type { DescriptorDocument, RateLimitDocument, ReservationDocument } from "./rule-document.js";

/** Largest `burst` and `unit_multiplier`: both are uint32 in the xDS resource. */
const UINT32_MAX = 4_294_967_295;

/**
 * Longest window (unit × unit_multiplier) a limit may have: 100 years of 365 days. Microsecond times one
 * window from now then stay below 2^53, exact as JavaScript numbers.
 */
export const MAX_WINDOW_SECONDS = 100 * 31_536_000;

/**
 * The descriptor's limit: its `rate_limit`, or the first of its `rate_limits` carrying the others in
 * `stacked`; undefined when it has neither. Every limit shares the descriptor's key, stats and flags.
 * Throws {@link ConfigError} (prefixed with `source`) for the first problem.
 */
export function compileDescriptorLimit(
  descriptor: DescriptorDocument,
  fullKey: string,
  source: string,
  statsFor: (fullKey: string) => RuleStats,
  /** The keys of the rule's descriptor path, its own last. */
  pathKeys: readonly string[] = [],
): RateLimitRule | undefined {
  const list = descriptor.rateLimits;
  if (list === undefined) {
    const policy = descriptor.rateLimit;
    if (policy === undefined) return undefined;
    const where = `rate_limit of '${fullKey}'`;
    return compileLimit(descriptor, policy, { fullKey, source, where, stats: statsFor(fullKey), pathKeys });
  }
  if (descriptor.rateLimit !== undefined) {
    throw new ConfigError(source, `descriptor '${fullKey}' has both rate_limit and rate_limits: use one`);
  }
  if (list.length === 0)
    throw new ConfigError(source, `descriptor '${fullKey}' has an empty rate_limits list`);
  const names = new Set<string>();
  for (const policy of list) {
    if (policy.name !== "" && names.has(policy.name)) {
      throw new ConfigError(source, `descriptor '${fullKey}' has two rate_limits named '${policy.name}'`);
    }
    names.add(policy.name);
  }
  list.forEach((policy, index) => {
    // Its own name and an empty entry are the reference's checks, made with its texts below.
    const sibling = policy.replaces.find((name) => name !== "" && name !== policy.name && names.has(name));
    if (sibling !== undefined) {
      throw new ConfigError(
        source,
        `rate_limits[${index}] of '${fullKey}': replaces '${sibling}', a limit of the same rate_limits list`,
      );
    }
  });
  const stats = statsFor(fullKey);
  const [first, ...stacked] = list.map((policy, index) =>
    compileLimit(descriptor, policy, {
      fullKey,
      source,
      where: `rate_limits[${index}] of '${fullKey}'`,
      stats,
      index,
      pathKeys,
    }),
  );
  return stacked.length === 0 ? first : { ...first!, stacked };
}

interface LimitContext {
  readonly fullKey: string;
  readonly source: string;
  /** How messages name the limit: `rate_limit of 'domain.key_value'`, `rate_limits[1] of '…'`. */
  readonly where: string;
  readonly stats: RuleStats;
  /** Place in `rate_limits`; undefined for a single `rate_limit`. */
  readonly index?: number;
  readonly pathKeys: readonly string[];
}

function compileLimit(
  descriptor: DescriptorDocument,
  policy: RateLimitDocument,
  context: LimitContext,
): RateLimitRule {
  const { source, where, index } = context;
  if (index !== undefined && policy.unlimited) {
    throw new ConfigError(
      source,
      `${where}: unlimited is only allowed in a single rate_limit, not in rate_limits`,
    );
  }
  // The reference's checks and texts, unchanged.
  const unit = unitFromName(policy.unit);
  const validUnit = unit !== undefined && unit !== 0;
  if (policy.unlimited && validUnit) {
    throw new ConfigError(source, "should not specify rate limit unit when unlimited");
  }
  if (!policy.unlimited && !validUnit)
    throw new ConfigError(source, `invalid rate limit unit '${policy.unit}'`);
  for (const replaced of policy.replaces) {
    if (replaced === "") throw new ConfigError(source, "should not have an empty replaces entry");
    if (replaced === policy.name)
      throw new ConfigError(source, "replaces should not contain name of same descriptor");
  }
  const rule: RateLimitRule = {
    requestsPerUnit: policy.requestsPerUnit,
    unit: validUnit ? unit : 0,
    name: policy.name,
    replaces: policy.replaces,
    unlimited: policy.unlimited,
    shadowMode: descriptor.shadowMode,
    quotaMode: descriptor.quotaMode,
    detailedMetric: descriptor.detailedMetric,
    fullKey: context.fullKey,
    stats: context.stats,
    metadata: descriptor.metadata,
  };
  const written = extensionFieldsOf(policy);
  // A limit without extensions leaves their fields absent: the engine then takes the reference's path.
  if (index === undefined && written.length === 0) return rule;
  if (policy.unlimited) {
    throw new ConfigError(source, `${where}: unlimited cannot be combined with ${written.join(", ")}`);
  }
  const algorithm = algorithmOf(policy, source, where);
  if (policy.burst !== undefined && algorithm !== "token_bucket") {
    throw new ConfigError(source, `${where}: burst applies only to algorithm token_bucket, not ${algorithm}`);
  }
  const burst = positiveUint32(policy.burst, "burst", source, where) ?? policy.requestsPerUnit;
  const unitMultiplier = positiveUint32(policy.unitMultiplier, "unit_multiplier", source, where) ?? 1;
  const windowSeconds = unitSeconds(rule.unit) * unitMultiplier;
  if (!(windowSeconds > 0 && windowSeconds <= MAX_WINDOW_SECONDS)) {
    throw new ConfigError(
      source,
      `${where}: the window of ${unitMultiplier} × ${unitName(rule.unit)} is ${windowSeconds} seconds; ` +
        `it must be positive and at most ${MAX_WINDOW_SECONDS} seconds (100 years)`,
    );
  }
  if (algorithm === "token_bucket") checkBucket(policy.requestsPerUnit, burst, windowSeconds, source, where);
  const compiled: RateLimitRule = { ...rule, algorithm, unitMultiplier, burst, limitIndex: index ?? 0 };
  if (policy.reservation === undefined) return compiled;
  // A bucket's L is its capacity (docs/token-budgets.md).
  const capacity = algorithm === "token_bucket" ? burst : policy.requestsPerUnit;
  const reservation = compileReservation(policy.reservation, capacity, context);
  return { ...compiled, reservation };
}

/** Longest reservation ttl: a day. */
const MAX_RESERVATION_TTL_SECONDS = 86_400;

const DURATION_UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600 };

/** A limit's `reservation`, validated (docs/token-budgets.md). */
function compileReservation(written: ReservationDocument, limit: number, context: LimitContext): Reservation {
  const { source, where, pathKeys } = context;
  const { estimate } = written;
  if (estimate === undefined) throw new ConfigError(source, `${where}: reservation needs an estimate`);
  if (!(Number.isInteger(estimate) && estimate >= 1 && estimate <= UINT32_MAX)) {
    throw new ConfigError(
      source,
      `${where}: reservation estimate must be an integer from 1 to ${UINT32_MAX}, got ${estimate}`,
    );
  }
  if (estimate > limit) {
    throw new ConfigError(
      source,
      `${where}: reservation estimate ${estimate} is larger than the limit of ${limit}: no check could ever be admitted`,
    );
  }
  const ttlSeconds = ttlSecondsOf(written.ttl);
  if (ttlSeconds === undefined) {
    throw new ConfigError(
      source,
      `${where}: reservation ttl '${written.ttl}' is not a duration from 1s to 24h written as Ns, Nm or Nh`,
    );
  }
  const requestIdKey = written.requestIdKey;
  if (requestIdKey !== "" && pathKeys.includes(requestIdKey)) {
    throw new ConfigError(
      source,
      `${where}: reservation request_id_key '${requestIdKey}' is a key of the rule's own descriptors; it must name another entry`,
    );
  }
  return requestIdKey === "" ? { estimate, ttlSeconds } : { estimate, ttlSeconds, requestIdKey };
}

/** `Ns`, `Nm` or `Nh` (N a whole number) in seconds, if from 1 s to 24 h; else undefined. */
function ttlSecondsOf(text: string): number | undefined {
  const match = /^([0-9]{1,6})([smh])$/.exec(text);
  if (match === null) return undefined;
  const seconds = Number(match[1]) * DURATION_UNIT_SECONDS[match[2]!]!;
  return seconds >= 1 && seconds <= MAX_RESERVATION_TTL_SECONDS ? seconds : undefined;
}

/**
 * A bucket that never refills (requests_per_unit 0) refuses every hit, so a burst would mean nothing; and a
 * full bucket's debt, burst × window / requests_per_unit, stays within the longest window so that its
 * time in microseconds is exact.
 */
function checkBucket(
  rate: number,
  burst: number,
  windowSeconds: number,
  source: string,
  where: string,
): void {
  if (rate === 0 && burst !== 0) {
    throw new ConfigError(
      source,
      `${where}: burst needs requests_per_unit above 0 (a token bucket of rate 0 refuses every hit)`,
    );
  }
  const capacitySeconds = rate === 0 ? 0 : (burst * windowSeconds) / rate;
  if (capacitySeconds > MAX_WINDOW_SECONDS) {
    throw new ConfigError(
      source,
      `${where}: a full bucket of ${burst} tokens takes ${Math.ceil(capacitySeconds)} seconds to refill; ` +
        `it must be at most ${MAX_WINDOW_SECONDS} seconds (100 years)`,
    );
  }
}

/** The extension keys a limit sets, as YAML spells them. */
function extensionFieldsOf(policy: RateLimitDocument): string[] {
  const written: string[] = [];
  if (policy.algorithm !== undefined) written.push("algorithm");
  if (policy.burst !== undefined) written.push("burst");
  if (policy.unitMultiplier !== undefined) written.push("unit_multiplier");
  if (policy.reservation !== undefined) written.push("reservation");
  return written;
}

function algorithmOf(policy: RateLimitDocument, source: string, where: string): LimitAlgorithm {
  const algorithm = policy.algorithm ?? "fixed_window";
  if (!(LIMIT_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new ConfigError(
      source,
      `${where}: unknown algorithm '${algorithm}', valid: ${LIMIT_ALGORITHMS.join(", ")}`,
    );
  }
  return algorithm as LimitAlgorithm;
}

function positiveUint32(
  value: number | undefined,
  key: string,
  source: string,
  where: string,
): number | undefined {
  if (value === undefined) return undefined;
  if (Number.isInteger(value) && value >= 1 && value <= UINT32_MAX) return value;
  throw new ConfigError(source, `${where}: ${key} must be an integer from 1 to ${UINT32_MAX}, got ${value}`);
}
