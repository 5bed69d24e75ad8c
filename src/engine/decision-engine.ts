import { InvalidArgumentError, ServiceError } from "../errors.js";
import type { AlgorithmLimit } from "./algorithms/algorithm-limit.js";
import { resultCountOf, type SlidingOperation } from "./algorithms/counter-operation.js";
import { operationFor } from "./algorithms/limit-decision.js";
import { baseKeyFor } from "./algorithms/limit-keys.js";
import { cacheKeyFor, secondsUntilReset, windowStart } from "./cache-key.js";
import type { CounterIncrement } from "./counter-store.js";
import {
  CODE_OK,
  CODE_OVER_LIMIT,
  type Decision,
  type DecisionDescriptor,
  type DecisionRequest,
  type DescriptorStatus,
} from "./decision-request.js";
import { statusFromCounter, statusFromCounts, statusFromLocalCache } from "./descriptor-status.js";
import { dynamicMetadataFor } from "./dynamic-metadata.js";
import { ietfHeadersFor, type LimitFigures } from "./ietf-headers.js";
import type { JsonObject } from "./json-value.js";
import {
  algorithmLimitOf,
  decideParts,
  limitsOf,
  type PlannedPart,
  usesExtensions,
  wouldRefuse,
} from "./limit-parts.js";
import type { OverLimitCache } from "./over-limit-cache.js";
import { checkRequestLimits, DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request-limits.js";
import { type HeaderNames, responseHeadersFor } from "./response-headers.js";
import { type MatchedLimit, matchLimit, overrideStatsKey } from "./rule-matcher.js";
import type { EngineStats, RateLimitRule, RuleLevel, RuleSet, RuleStats } from "./rule-set.js";
import { isValidOverrideUnit, UNIT_SECOND, type UnitValue, unitName, unitSeconds } from "./units.js";
import { type UnknownCountAnswer, unknownCountStatus } from "./unknown-count-status.js";

/** Engine behaviour fixed at start-up (from settings). */
export interface DecisionEngineOptions {
  readonly nearLimitRatio: number;
  readonly cacheKeyPrefix: string;
  /** Extra TTL drawn from [0, N-1] seconds per key; 0 disables (EXPIRATION_JITTER_MAX_SECONDS). */
  readonly expirationJitterMaxSeconds: number;
  /** SHADOW_MODE: never answer OVER_LIMIT overall. */
  readonly shadowMode: boolean;
  /** QUOTA_MODE: every descriptor counts as quota_mode. */
  readonly quotaMode: boolean;
  /** Header names when LIMIT_RESPONSE_HEADERS_ENABLED, else undefined. */
  readonly responseHeaders: HeaderNames | undefined;
  /** LIMIT_RESPONSE_HEADERS_FORMAT: `legacy` (absent) or `ietf` (src/engine/ietf-headers.ts). */
  readonly responseHeadersFormat?: "legacy" | "ietf" | undefined;
  /** RESPONSE_DYNAMIC_METADATA. */
  readonly dynamicMetadata: boolean;
  readonly localCache: OverLimitCache | undefined;
  readonly stats: EngineStats;
  /** Uniform in [0, 1); injectable for deterministic jitter in tests. */
  readonly random: () => number;
  /** Receives per-request debug lines; set only when debug logging is on. */
  readonly debug?: ((line: string) => void) | undefined;
  /** Bounds on a request's descriptors, entries and lengths; {@link DEFAULT_REQUEST_LIMITS} when absent. */
  readonly requestLimits?: RequestLimits | undefined;
}

/** A limit a descriptor is actually checked against. */
interface ActiveLimit {
  readonly rule: RateLimitRule;
  readonly stats: RuleStats;
  readonly cacheKey: string;
  readonly hits: number;
  readonly localCacheHit: boolean;
  /** Where its counter is in the store's flat answer, or -1 for a local-cache hit. */
  readonly increment: number;
  /** A rule using the extensions: one part per limit (src/engine/limit-parts.ts); else undefined. */
  readonly parts?: readonly PlannedPart[] | undefined;
  /** Extensions, local-cache hit: how long the cache still holds the key, for the reset. */
  readonly cacheRemainingMs?: number;
}

/** Limits after GetLimit, `replaces` and `unlimited`. */
interface ResolvedLimits {
  readonly effective: readonly (MatchedLimit | undefined)[];
  readonly unlimited: readonly boolean[];
  /** Per descriptor whose rule uses the extensions: its limits left after `replaces`. */
  readonly extended: readonly (readonly RateLimitRule[] | undefined)[];
}

/** Everything decided before the backend is consulted. */
export interface DecisionPlan {
  readonly request: DecisionRequest;
  /** Per descriptor; undefined for unmatched, replaced and unlimited descriptors. */
  readonly active: readonly (ActiveLimit | undefined)[];
  readonly unlimited: readonly boolean[];
  /** What to send to the counter store, one per active descriptor not answered by the local cache. */
  readonly increments: CounterIncrement[];
  /** `requests_per_unit` of the limit behind each increment. */
  readonly incrementLimits: readonly number[];
  /** Whether any active descriptor was answered by the local over-limit cache. */
  readonly anyLocalCacheHit: boolean;
  /** The clock reading the plan was made with, in ms (the algorithms' windows are planned from it). */
  readonly nowMs: number;
  /** Where each increment's values start in the store's flat answer (`resultCountOf` each). */
  readonly offsets: readonly number[];
  /** The extensions' limit behind each increment; undefined for the reference's fixed windows. */
  readonly operationLimits: readonly (AlgorithmLimit | undefined)[];
  /** Sliding-window increments refused by `complete`, for the store to give back (`release`). */
  readonly releases: SlidingOperation[];
}

const UINT32_MAX = 4294967295;
const OK_NO_LIMIT: Readonly<DescriptorStatus> = Object.freeze({
  code: CODE_OK,
  currentLimit: undefined,
  limitRemaining: 0,
  durationUntilResetSeconds: 0,
});

/**
 * The reference's decision logic with no I/O: {@link plan} resolves limits and cache keys, the caller
 * applies `plan.increments` to a counter store, and {@link complete} turns the counters into a response.
 */
export class DecisionEngine {
  readonly #options: DecisionEngineOptions;
  readonly #limits: RequestLimits;

  constructor(options: DecisionEngineOptions) {
    this.#options = options;
    this.#limits = options.requestLimits ?? DEFAULT_REQUEST_LIMITS;
  }

  /**
   * Validates the request (the reference's checks, then {@link RequestLimits}) and resolves every
   * descriptor's limit at `nowSeconds` (Unix seconds).
   */
  plan(
    rules: RuleSet | undefined,
    request: DecisionRequest,
    nowSeconds: number,
    nowMs: number = nowSeconds * 1000,
  ): DecisionPlan {
    if (request.domain === "") throw new ServiceError("rate limit domain must not be empty");
    if (request.descriptors.length === 0)
      throw new ServiceError("rate limit descriptor list must not be empty");
    checkRequestLimits(request, this.#limits);
    if (rules === undefined) throw new ServiceError("no rate limit configuration loaded");
    const hits = request.descriptors.map((descriptor, i) => validatedHits(descriptor, request.hitsAddend, i));
    const resolved = this.#resolveLimits(rules, request);
    return this.#planCounters(request, resolved, hits, nowSeconds, nowMs);
  }

  /**
   * Builds the response from the counters after increment (`counters[i]` for `plan.increments[i]`), with
   * `nowSeconds` read after the backend answered.
   */
  complete(
    plan: DecisionPlan,
    counters: ArrayLike<number>,
    nowSeconds: number,
    nowMs: number = nowSeconds * 1000,
  ): Decision {
    const options = this.#options;
    const partFigures: (readonly LimitFigures[] | undefined)[] = [];
    const statuses = plan.active.map((active, i) => {
      if (active === undefined) return { ...OK_NO_LIMIT };
      if (active.parts !== undefined || active.cacheRemainingMs !== undefined) {
        return this.#extendedStatus(plan, active, counters, nowMs, (figures) => (partFigures[i] = figures));
      }
      const windowSeconds = unitSeconds(active.rule.unit);
      const reset = secondsUntilReset(nowSeconds, windowSeconds);
      if (active.localCacheHit) return statusFromLocalCache(active.rule, active.stats, active.hits, reset);
      const after = counters[active.increment]!;
      const status = statusFromCounter(
        active.rule,
        active.stats,
        active.hits,
        after,
        options.nearLimitRatio,
        reset,
      );
      if (after > active.rule.requestsPerUnit) {
        options.localCache?.markOverLimit(active.cacheKey, active.rule.requestsPerUnit, windowSeconds);
      }
      options.debug?.(
        `cache key: ${active.cacheKey} current: ${after} limit: ${active.rule.requestsPerUnit}` +
          (status.code === CODE_OVER_LIMIT ? " (over limit)" : ""),
      );
      return status;
    });
    return this.#aggregate(plan, statuses, nowSeconds, partFigures);
  }

  /**
   * The response when the counter store could not give the plan's counters and BACKEND_FAILURE_MODE is
   * allow or deny ({@link unknownCountStatus}): every limited descriptor gets that answer, unlimited and
   * unmatched ones stay as usual, and the reference's aggregation (quota, global shadow mode, headers,
   * metadata) follows. A local-cache hit keeps its OVER_LIMIT: that much is known without the store.
   */
  completeWithoutCounts(plan: DecisionPlan, answer: UnknownCountAnswer, nowSeconds: number): Decision {
    const statuses = plan.active.map((active): DescriptorStatus => {
      if (active === undefined) return { ...OK_NO_LIMIT };
      if (active.localCacheHit && !active.rule.shadowMode) {
        return unknownCountStatus(active.rule, active.hits, "deny", nowSeconds);
      }
      return unknownCountStatus(active.rule, active.hits, answer, nowSeconds);
    });
    // Each limit of a `rate_limits` list answered on its own, for the IETF fields' one member per limit.
    const ietf =
      this.#options.responseHeaders !== undefined && this.#options.responseHeadersFormat === "ietf";
    const partFigures = plan.active.map((active) =>
      !ietf
        ? undefined
        : active?.parts?.map((part) => {
            const status = unknownCountStatus(part.rule, active.hits, answer, nowSeconds);
            return { remaining: status.limitRemaining, resetSeconds: status.durationUntilResetSeconds };
          }),
    );
    return this.#aggregate(plan, statuses, nowSeconds, partFigures);
  }

  /**
   * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: when any key is over its limit — known from the local cache,
   * or from `current` counter values read first — only the over keys count their hits and every other key
   * is incremented by 0. `current` is undefined when a local-cache hit decided it
   * (test/unit/engine/decision-stop-increment.test.ts).
   */
  suppressIncrementsWhenOverLimit(plan: DecisionPlan, current: ArrayLike<number> | undefined): void {
    const over = plan.increments.map((increment, i) => {
      if (current === undefined) return false;
      const offset = plan.offsets[i]!;
      const limit = plan.operationLimits[i];
      if (limit === undefined) return current[offset]! + increment.hits > plan.incrementLimits[i]!;
      return wouldRefuse(limit, increment, increment.hits, current, offset, plan.nowMs);
    });
    if (current !== undefined && !over.includes(true)) return;
    plan.increments.forEach((increment, i) => {
      if (!over[i]) plan.increments[i] = { ...increment, hits: 0 };
    });
  }

  /** GetLimit for every descriptor, then `replaces` and `unlimited` (the reference's order). */
  #resolveLimits(rules: RuleSet, request: DecisionRequest): ResolvedLimits {
    const { stats, debug } = this.#options;
    const root = rules.domains.get(request.domain);
    const limits = request.descriptors.map((descriptor) => {
      if (debug) debug(`got descriptor: ${descriptor.entries.map((e) => `(${e.key}=${e.value})`).join(",")}`);
      if (root === undefined) {
        stats.domainNotFound(request.domain).add(1);
        return undefined;
      }
      if (descriptor.limit) return this.#overrideLimit(request.domain, descriptor, root);
      return matchLimit(root, request.domain, descriptor.entries, stats);
    });
    const replaced = new Set<string>();
    for (const limit of limits) {
      if (limit === undefined) continue;
      for (const name of limit.rule.replaces) replaced.add(name);
      for (const more of limit.rule.stacked ?? []) for (const name of more.replaces) replaced.add(name);
    }
    const unlimited = limits.map((limit) => limit?.rule.unlimited === true);
    const extended: (readonly RateLimitRule[] | undefined)[] = [];
    const effective = limits.map((limit, i) => {
      if (limit === undefined || unlimited[i]) return undefined;
      if (usesExtensions(limit.rule)) {
        // Each limit of a `rate_limits` list is replaced on its own name.
        const kept = limitsOf(limit.rule).filter((rule) => rule.name === "" || !replaced.has(rule.name));
        if (kept.length === 0) return undefined;
        extended[i] = kept;
        return limit;
      }
      if (limit.rule.name !== "" && replaced.has(limit.rule.name)) return undefined;
      return limit;
    });
    if (debug) {
      effective.forEach((limit) => {
        debug(
          limit
            ? `applying limit: ${limit.rule.requestsPerUnit} requests per ${unitName(limit.rule.unit)}, shadow_mode: ${limit.rule.shadowMode}, quota: ${limit.rule.quotaMode}`
            : "descriptor does not match any limit, no limits applied",
        );
      });
    }
    return { effective, unlimited, extended };
  }

  /**
   * A request-level override. It keeps the algorithm of the rule the descriptor matches (found without
   * touching any stats), with a window of one of its own unit and, for a token bucket, a burst of its own
   * requests_per_unit; a rule without the extensions leaves it the reference's fixed window.
   */
  #overrideLimit(domain: string, descriptor: DecisionDescriptor, root: RuleLevel): MatchedLimit {
    const { requestsPerUnit, unit } = descriptor.limit!;
    const stats = this.#options.stats.ruleStats(overrideStatsKey(domain, descriptor.entries));
    const algorithm = matchLimit(root, domain, descriptor.entries, UNCOUNTED_STATS)?.rule.algorithm;
    const rule: RateLimitRule = {
      ...(algorithm !== undefined && algorithm !== "fixed_window" ? { algorithm } : {}),
      requestsPerUnit,
      unit: unit as UnitValue,
      name: "",
      replaces: [],
      unlimited: false,
      shadowMode: false,
      quotaMode: false,
      detailedMetric: false,
      fullKey: stats.key,
      stats,
      metadata: undefined,
    };
    return { rule, stats, sharePatterns: undefined };
  }

  #planCounters(
    request: DecisionRequest,
    resolved: ResolvedLimits,
    allHits: readonly number[],
    nowSeconds: number,
    nowMs: number,
  ): DecisionPlan {
    const { cacheKeyPrefix, localCache, expirationJitterMaxSeconds, random } = this.#options;
    const increments: CounterIncrement[] = [];
    const incrementLimits: number[] = [];
    const offsets: number[] = [];
    const operationLimits: (AlgorithmLimit | undefined)[] = [];
    let values = 0;
    let anyLocalCacheHit = false;
    const active = resolved.effective.map((limit, i): ActiveLimit | undefined => {
      if (limit === undefined) return undefined;
      const descriptor = request.descriptors[i]!;
      const hits = allHits[i]!;
      limit.stats.totalHits.add(hits);
      const extended = resolved.extended[i];
      if (extended !== undefined) {
        const baseKey = baseKeyFor(cacheKeyPrefix, request.domain, descriptor.entries, limit.sharePatterns);
        const parts: PlannedPart[] = [];
        for (const rule of extended) {
          const algorithmLimit = algorithmLimitOf(rule);
          const jitter =
            expirationJitterMaxSeconds > 0 ? Math.floor(random() * expirationJitterMaxSeconds) : 0;
          const operation = operationFor(algorithmLimit, baseKey, rule.limitIndex ?? 0, hits, nowMs, jitter);
          if (operation !== undefined && localCache?.isOverLimit(operation.key, rule.requestsPerUnit)) {
            anyLocalCacheHit = true;
            const cacheRemainingMs = localCache.remainingMs?.(operation.key, rule.requestsPerUnit) ?? 1000;
            const { stats } = limit;
            const cacheKey = operation.key;
            return { rule, stats, cacheKey, hits, localCacheHit: true, increment: -1, cacheRemainingMs };
          }
          parts.push({ rule, limit: algorithmLimit, operation, offset: -1, increment: -1 });
        }
        const placed = parts.map((part): PlannedPart => {
          if (part.operation === undefined) return part;
          increments.push(part.operation);
          incrementLimits.push(part.rule.requestsPerUnit);
          offsets.push(values);
          operationLimits.push(part.limit);
          values += resultCountOf(part.operation);
          return {
            ...part,
            offset: values - resultCountOf(part.operation),
            increment: increments.length - 1,
          };
        });
        const first = placed[0]!;
        return {
          rule: first.rule,
          stats: limit.stats,
          cacheKey: first.operation?.key ?? "",
          hits,
          localCacheHit: false,
          increment: first.offset,
          parts: placed,
        };
      }
      const windowSeconds = unitSeconds(limit.rule.unit);
      const start = windowStart(nowSeconds, windowSeconds);
      const cacheKey = cacheKeyFor(
        cacheKeyPrefix,
        request.domain,
        descriptor.entries,
        limit.sharePatterns,
        start,
      );
      const localCacheHit = localCache?.isOverLimit(cacheKey, limit.rule.requestsPerUnit) ?? false;
      if (localCacheHit) {
        anyLocalCacheHit = true;
        return { rule: limit.rule, stats: limit.stats, cacheKey, hits, localCacheHit, increment: -1 };
      }
      const jitter = expirationJitterMaxSeconds > 0 ? Math.floor(random() * expirationJitterMaxSeconds) : 0;
      increments.push({
        key: cacheKey,
        hits,
        ttlSeconds: windowSeconds + jitter,
        perSecond: limit.rule.unit === UNIT_SECOND,
      });
      incrementLimits.push(limit.rule.requestsPerUnit);
      offsets.push(values);
      operationLimits.push(undefined);
      values += 1;
      return {
        rule: limit.rule,
        stats: limit.stats,
        cacheKey,
        hits,
        localCacheHit,
        increment: values - 1,
      };
    });
    return {
      request,
      active,
      unlimited: resolved.unlimited,
      increments,
      incrementLimits,
      anyLocalCacheHit,
      nowMs,
      offsets,
      operationLimits,
      releases: [],
    };
  }

  /**
   * The status of a descriptor whose rule uses the extensions: OVER_LIMIT when any of its limits is, the
   * figures of the limit closest to refusing, the stats formulas on the first over limit (else on that
   * one). Over limits are remembered by the local cache for as long as they certainly stay over, refused
   * sliding-window hits are queued for release, and a local-cache hit resets when its entry ends.
   */
  #extendedStatus(
    plan: DecisionPlan,
    active: ActiveLimit,
    counters: ArrayLike<number>,
    nowMs: number,
    reportParts: (figures: readonly LimitFigures[]) => void,
  ): DescriptorStatus {
    const { localCache, nearLimitRatio, debug } = this.#options;
    if (active.parts === undefined) {
      const reset = Math.max(1, Math.ceil((active.cacheRemainingMs ?? 0) / 1000));
      return statusFromLocalCache(active.rule, active.stats, active.hits, reset);
    }
    const { hits } = active;
    const decided = decideParts(active.parts, hits, counters, plan.nowMs);
    reportParts(decided.outcomes);
    decided.outcomes.forEach((outcome, i) => {
      const part = active.parts![i]!;
      const operation = part.operation;
      if (!outcome.over || operation === undefined) return;
      // Give back what was counted: the increment sent, which suppression may have set to 0 hits.
      const sent = plan.increments[part.increment]!;
      if (sent.kind === "sliding" && sent.hits > 0) plan.releases.push(sent);
      // The outcome describes the moment of the plan (a token bucket's, a moment of the round trip): the
      // time since then counts against how long the key stays certainly over.
      const cacheMs = outcome.overLimitCacheMs - (nowMs - plan.nowMs);
      if (cacheMs > 0) localCache?.markOverLimit(operation.key, part.rule.requestsPerUnit, cacheMs / 1000);
    });
    const chosen = decided.outcomes[decided.chosen]!;
    const counted = decided.outcomes[decided.counted]!;
    debug?.(
      active.parts
        .map(
          (part, i) =>
            `cache key: ${part.operation?.key ?? "(none)"} ${part.limit.algorithm} after: ${decided.outcomes[i]!.after} limit: ${decided.outcomes[i]!.limit}` +
            (decided.outcomes[i]!.over ? " (over limit)" : ""),
        )
        .join("; "),
    );
    const status = statusFromCounts(
      active.parts[decided.chosen]!.rule,
      active.stats,
      hits,
      counted.limit,
      counted.before,
      counted.after,
      nearLimitRatio,
      decided.over,
      chosen.resetSeconds,
    );
    // Remaining is the chosen limit's, which need not be the limit the stats counted.
    status.limitRemaining = decided.over ? 0 : chosen.remaining;
    return status;
  }

  /**
   * Unlimited statuses, quota accounting, overall code, headers, global shadow, metadata, in the reference's
   * order.
   */
  #aggregate(
    plan: DecisionPlan,
    statuses: DescriptorStatus[],
    nowSeconds: number,
    partFigures: readonly (readonly LimitFigures[] | undefined)[],
  ): Decision {
    const options = this.#options;
    let failedRate = 0;
    let failedQuota = 0;
    let totalQuota = 0;
    const isQuota = plan.active.map((active) => options.quotaMode || active?.rule.quotaMode === true);
    const headers = !options.responseHeaders
      ? []
      : options.responseHeadersFormat === "ietf"
        ? ietfHeadersFor(plan.active, statuses, partFigures)
        : responseHeadersFor(statuses, isQuota, options.responseHeaders, nowSeconds);
    const passedMetadata: JsonObject[] = [];
    for (let i = 0; i < statuses.length; i++) {
      if (plan.unlimited[i]) {
        statuses[i] = {
          code: CODE_OK,
          currentLimit: undefined,
          limitRemaining: UINT32_MAX,
          durationUntilResetSeconds: 0,
        };
        continue;
      }
      if (statuses[i]!.code === CODE_OVER_LIMIT) {
        if (isQuota[i]) failedQuota++;
        else failedRate++;
      } else {
        const metadata = plan.active[i]?.rule.metadata;
        if (metadata !== undefined) passedMetadata.push(metadata);
      }
      if (isQuota[i]) totalQuota++;
    }
    let overallCode =
      failedRate > 0 || (totalQuota > 0 && totalQuota === failedQuota) ? CODE_OVER_LIMIT : CODE_OK;
    if (options.shadowMode && overallCode === CODE_OVER_LIMIT) {
      overallCode = CODE_OK;
      options.stats.globalShadowMode.add(1);
    }
    const dynamicMetadata = options.dynamicMetadata
      ? dynamicMetadataFor(plan.request, passedMetadata)
      : undefined;
    return { overallCode, statuses, responseHeaders: headers, dynamicMetadata };
  }
}

/** Stats for the override's rule lookup, which must not create or count any. */
const UNCOUNTED: RuleStats = Object.freeze({
  key: "",
  totalHits: { add() {} },
  overLimit: { add() {} },
  nearLimit: { add() {} },
  overLimitWithLocalCache: { add() {} },
  withinLimit: { add() {} },
  shadowMode: { add() {} },
});
const UNCOUNTED_STATS: EngineStats = {
  ruleStats: () => UNCOUNTED,
  domainNotFound: () => UNCOUNTED.totalHits,
  globalShadowMode: UNCOUNTED.totalHits,
};

/**
 * Checks what the reference would crash on or mis-count (an override unit outside SECOND…YEAR, an addend
 * beyond 2^53) before anything is counted, and returns the descriptor's hits: its own hits_addend when set
 * (even 0), else max(1, request hits_addend).
 */
function validatedHits(descriptor: DecisionDescriptor, requestHits: number, index: number): number {
  if (descriptor.limit && !isValidOverrideUnit(descriptor.limit.unit)) {
    const unit = descriptor.limit.unit;
    throw new InvalidArgumentError(
      `descriptor ${index}: rate limit override has invalid unit ${unitName(unit)} (${unit})`,
    );
  }
  const own = descriptor.hitsAddend;
  if (own === undefined) return Math.max(1, requestHits);
  const hits = Number(own);
  if (!Number.isSafeInteger(hits) || hits < 0) {
    throw new InvalidArgumentError(`descriptor ${index}: hits_addend ${own} is out of range`);
  }
  return hits;
}
