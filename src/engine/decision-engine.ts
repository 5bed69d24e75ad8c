import { ServiceError } from "../errors.js";
import { aggregateDecision } from "./aggregate-decision.js";
import { decideLimits } from "./decide-limits.js";
import type { DecisionPlan } from "./decision-plan.js";
import { CODE_OK, type Decision, type DecisionRequest, type DescriptorStatus } from "./decision-request.js";
import { validatedHits } from "./descriptor-hits.js";
import type { LimitFigures } from "./ietf-headers.js";
import type { OverLimitCache } from "./over-limit-cache.js";
import { planLimits } from "./plan-limits.js";
import { takeRequestIds } from "./request-ids.js";
import { checkRequestLimits, DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request-limits.js";
import { resolveLimits } from "./resolve-limits.js";
import type { HeaderNames } from "./response-headers.js";
import type { EngineStats, RuleSet } from "./rule-set.js";
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

const OK_NO_LIMIT: Readonly<DescriptorStatus> = Object.freeze({
  code: CODE_OK,
  currentLimit: undefined,
  limitRemaining: 0,
  durationUntilResetSeconds: 0,
});

/**
 * The reference's decision logic with no I/O: {@link plan} resolves limits and plans their store
 * operations, the caller applies `plan.increments` to a counter store, and {@link complete} turns the
 * store's values into a response. Each limit is decided by its algorithm (src/engine/algorithms/).
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
    const ids = takeRequestIds(rules, request);
    const resolved = resolveLimits(this.#options, rules, ids.request);
    return planLimits(this.#options, ids.request, resolved, hits, nowSeconds, nowMs, ids.byDescriptor);
  }

  /**
   * Builds the response from the store's values for `plan.increments` (each operation's values in order,
   * `resultCountOf` each), with `nowSeconds` read after the backend answered.
   */
  complete(
    plan: DecisionPlan,
    counters: ArrayLike<number>,
    nowSeconds: number,
    nowMs: number = nowSeconds * 1000,
  ): Decision {
    const partFigures: (readonly LimitFigures[] | undefined)[] = [];
    const statuses = plan.active.map((active, i) => {
      if (active === undefined) return { ...OK_NO_LIMIT };
      const report = (figures: readonly LimitFigures[]) => (partFigures[i] = figures);
      return decideLimits(this.#options, plan, active, counters, nowSeconds, nowMs, report);
    });
    return aggregateDecision(this.#options, plan, statuses, nowSeconds, partFigures);
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
      !ietf || active === undefined || active.reference || active.localCacheHit
        ? undefined
        : active.limits.map((part) => {
            const status = unknownCountStatus(part.rule, active.hits, answer, nowSeconds);
            return { remaining: status.limitRemaining, resetSeconds: status.durationUntilResetSeconds };
          }),
    );
    return aggregateDecision(this.#options, plan, statuses, nowSeconds, partFigures);
  }

  /**
   * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: when any key is over its limit — known from the local cache,
   * or from `current` values read first, each limit's algorithm judging its own — only the over keys count
   * their hits and every other key is incremented by 0. `current` is undefined when a local-cache hit
   * decided it (test/unit/engine/decision-stop-increment.test.ts).
   */
  suppressIncrementsWhenOverLimit(plan: DecisionPlan, current: ArrayLike<number> | undefined): void {
    const { operations, increments } = plan;
    const over = operations.map((planned, i) => {
      if (current === undefined) return false;
      const sent = increments[i]!;
      return planned.algorithm.wouldRefuse(
        planned.limit,
        sent,
        sent.hits,
        current,
        planned.offset,
        plan.nowMs,
      );
    });
    if (current !== undefined && !over.includes(true)) return;
    increments.forEach((increment, i) => {
      // A reservation's charge always counts: the tokens were spent, whatever the answer (docs/token-budgets.md).
      if (!over[i] && !(increment.kind === "reserve" && increment.charge))
        increments[i] = { ...increment, hits: 0 };
    });
  }
}
