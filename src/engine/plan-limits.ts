/**
 * The planning half of a decision: for each limited descriptor, the store operation of each of its limits
 * (or the local over-limit cache's answer), placed in one list in the order the store is asked.
 */
import type { Algorithm } from "./algorithms/algorithm.js";
import type { AlgorithmLimit } from "./algorithms/algorithm-limit.js";
import { type CounterOperation, resultCountOf } from "./algorithms/counter-operation.js";
import { fixedWindow, referenceWindow } from "./algorithms/fixed-window.js";
import { baseKeyFor } from "./algorithms/limit-keys.js";
import { algorithmNamed } from "./algorithms/registry.js";
import { reservationOperation, reservedWindow } from "./algorithms/reservation.js";
import type { CounterIncrement } from "./counter-store.js";
import type { ActiveLimit, DecisionPlan, PlannedLimit } from "./decision-plan.js";
import type { DecisionDescriptor, DecisionRequest } from "./decision-request.js";
import { algorithmLimitOf } from "./limit-parts.js";
import type { OverLimitCache } from "./over-limit-cache.js";
import type { ResolvedLimits } from "./resolve-limits.js";
import type { MatchedLimit } from "./rule-matcher.js";
import type { RateLimitRule, Reservation } from "./rule-set.js";

/** What planning needs of the engine's options. */
export interface PlanOptions {
  readonly cacheKeyPrefix: string;
  readonly localCache: OverLimitCache | undefined;
  readonly expirationJitterMaxSeconds: number;
  readonly random: () => number;
}

/** The plan's store operations as they are placed. */
interface OperationList {
  readonly operations: PlannedLimit[];
  readonly increments: CounterIncrement[];
  /** Values the store answers for the operations placed so far. */
  values: number;
}

const NO_LIMITS: readonly PlannedLimit[] = Object.freeze([]);

/**
 * Plans every resolved descriptor at `nowSeconds` / `nowMs`: counts its hits (`total_hits`), asks the
 * local over-limit cache, and places each limit's store operation. `allHits[i]` are descriptor i's hits.
 */
export function planLimits(
  options: PlanOptions,
  request: DecisionRequest,
  resolved: ResolvedLimits,
  allHits: readonly number[],
  nowSeconds: number,
  nowMs: number,
  /** Per descriptor, its reservations' request ids by request_id_key (src/engine/request-ids.ts). */
  requestIds: readonly (ReadonlyMap<string, string> | undefined)[] = [],
): DecisionPlan {
  const list: OperationList = { operations: [], increments: [], values: 0 };
  let anyLocalCacheHit = false;
  const active = resolved.effective.map((matched, i): ActiveLimit | undefined => {
    if (matched === undefined) return undefined;
    const descriptor = request.descriptors[i]!;
    const hits = allHits[i]!;
    matched.stats.totalHits.add(hits);
    const extended = resolved.extended[i];
    const planned =
      extended === undefined
        ? planReferenceWindow(options, list, request.domain, descriptor, matched, hits, nowSeconds)
        : planAlgorithms(
            options,
            list,
            request.domain,
            descriptor,
            matched,
            extended,
            hits,
            nowMs,
            requestIds[i],
          );
    if (planned.localCacheHit) anyLocalCacheHit = true;
    return planned;
  });
  return {
    request,
    active,
    unlimited: resolved.unlimited,
    operations: list.operations,
    increments: list.increments,
    anyLocalCacheHit,
    nowMs,
    releases: [],
  };
}

/** A rule without the extensions: the reference's fixed window, with its key and its operation. */
function planReferenceWindow(
  options: PlanOptions,
  list: OperationList,
  domain: string,
  descriptor: DecisionDescriptor,
  matched: MatchedLimit,
  hits: number,
  nowSeconds: number,
): ActiveLimit {
  const { rule, stats, sharePatterns } = matched;
  const { cacheKeyPrefix, localCache } = options;
  const cacheKey = referenceWindow.key(
    cacheKeyPrefix,
    domain,
    descriptor.entries,
    sharePatterns,
    rule.unit,
    nowSeconds,
  );
  if (localCache?.isOverLimit(cacheKey, rule.requestsPerUnit)) {
    return { rule, stats, hits, reference: true, limits: NO_LIMITS, localCacheHit: true, cacheKey };
  }
  const operation = referenceWindow.operation(cacheKey, rule.unit, hits, jitterOf(options));
  const planned = place(list, rule, algorithmLimitOf(rule), fixedWindow, operation);
  return { rule, stats, hits, reference: true, limits: [planned], localCacheHit: false, cacheKey };
}

/**
 * A rule using the extensions: each of its limits planned by its algorithm. The first limit whose key the
 * local over-limit cache holds answers for the descriptor, and nothing of it is placed.
 */
function planAlgorithms(
  options: PlanOptions,
  list: OperationList,
  domain: string,
  descriptor: DecisionDescriptor,
  matched: MatchedLimit,
  rules: readonly RateLimitRule[],
  hits: number,
  nowMs: number,
  requestIds: ReadonlyMap<string, string> | undefined,
): ActiveLimit {
  const { cacheKeyPrefix, localCache } = options;
  const { stats } = matched;
  const baseKey = baseKeyFor(cacheKeyPrefix, domain, descriptor.entries, matched.sharePatterns);
  const pending: Omit<PlannedLimit, "index" | "offset">[] = [];
  for (const rule of rules) {
    const limit = algorithmLimitOf(rule);
    const jitter = jitterOf(options);
    const reservation = rule.reservation;
    const algorithm = reservation === undefined ? algorithmNamed(limit.algorithm) : reservedWindow;
    const operation =
      reservation === undefined
        ? algorithm.plan(limit, baseKey, rule.limitIndex ?? 0, hits, nowMs, jitter)
        : reservationOperation(
            limit,
            reservation,
            baseKey,
            rule.limitIndex ?? 0,
            hits,
            requestIdOf(reservation, requestIds),
            jitter,
          );
    // A reservation's charge always reaches the store: its cost is real, and it settles a hold.
    const cacheable = operation !== undefined && (reservation === undefined || hits === 0);
    if (cacheable && localCache?.isOverLimit(operation.key, rule.requestsPerUnit)) {
      const cacheKey = operation.key;
      const cacheRemainingMs = localCache.remainingMs?.(cacheKey, rule.requestsPerUnit) ?? 1000;
      const limits = NO_LIMITS;
      return { rule, stats, hits, reference: false, limits, localCacheHit: true, cacheKey, cacheRemainingMs };
    }
    pending.push({ rule, limit, algorithm, operation });
  }
  const planned = pending.map((part) => place(list, part.rule, part.limit, part.algorithm, part.operation));
  const first = planned[0]!;
  const cacheKey = first.operation?.key ?? "";
  return { rule: first.rule, stats, hits, reference: false, limits: planned, localCacheHit: false, cacheKey };
}

/** The request's id for `reservation`: its request_id_key's entry, "" when it has none. */
function requestIdOf(reservation: Reservation, requestIds: ReadonlyMap<string, string> | undefined): string {
  const key = reservation.requestIdKey;
  return key === undefined ? "" : (requestIds?.get(key) ?? "");
}

/** The planned limit, its operation (if any) appended to the list. */
function place(
  list: OperationList,
  rule: RateLimitRule,
  limit: AlgorithmLimit,
  algorithm: Algorithm,
  operation: CounterOperation | undefined,
): PlannedLimit {
  if (operation === undefined) return { rule, limit, algorithm, operation, index: -1, offset: -1 };
  const planned = { rule, limit, algorithm, operation, index: list.increments.length, offset: list.values };
  list.operations.push(planned);
  list.increments.push(operation);
  list.values += resultCountOf(operation);
  return planned;
}

/** Extra TTL for one key: uniform in [0, EXPIRATION_JITTER_MAX_SECONDS − 1], 0 when off. */
function jitterOf({ expirationJitterMaxSeconds, random }: PlanOptions): number {
  return expirationJitterMaxSeconds > 0 ? Math.floor(random() * expirationJitterMaxSeconds) : 0;
}
