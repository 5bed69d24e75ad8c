import { clientReasonOf } from "../backends/client-reason.js";
import type { RuleUpdate } from "../config/rule-source.js";
import type { CounterStore } from "../engine/counter-store.js";
import type { DecisionEngine } from "../engine/decision-engine.js";
import type { DecisionPlan } from "../engine/decision-plan.js";
import type { Decision, DecisionRequest } from "../engine/decision-request.js";
import type { Counter, RuleSet } from "../engine/rule-set.js";
import { BackendError, InvalidArgumentError, messageOf, RatelimitdError } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import { decisionStart, traceDecision } from "../observability/request-channels.js";
import type { FailureMode } from "./failure-mode.js";

/** The service-level counters of the reference (`ratelimit.service.*`). */
export interface ServiceCounters {
  readonly configLoadSuccess: Counter;
  readonly configLoadError: Counter;
  /** `call.should_rate_limit.redis_error`: the backend failed. */
  readonly backendError: Counter;
  /** `call.should_rate_limit.service_error`: the request was refused. */
  readonly serviceError: Counter;
}

export interface RateLimitServiceOptions {
  readonly engine: DecisionEngine;
  readonly store: CounterStore;
  readonly counters: ServiceCounters;
  readonly logger: Logger;
  /** STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT (honoured when the store can read). */
  readonly stopIncrementWhenOverLimit: boolean;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly nowMs?: () => number;
  /**
   * BACKEND_FAILURE_MODE: what a decision gets when the store fails (docs/outages.md); absent = the reference's behaviour (the call fails) and nothing counted beyond `redis_error`.
   */
  readonly failureMode?: FailureMode | undefined;
  /** Counts every decision asked of this service (a worker thread's share, docs/workers.md). */
  readonly decisions?: { add(amount: number): void } | undefined;
}

const NO_COUNTERS: readonly number[] = [];

/** When rules were last (re)loaded, and why it failed (`error`) if it did. */
export interface RuleLoadOutcome {
  readonly atMs: number;
  readonly error: string | undefined;
}

/**
 * `ShouldRateLimit` shared by every transport: holds the active rule set (swapped atomically), runs the
 * engine, and talks to the counter store once per request.
 */
export class RateLimitService {
  #rules: RuleSet | undefined;
  readonly #options: RateLimitServiceOptions;
  readonly #nowMs: () => number;
  #lastLoad: RuleLoadOutcome | undefined;
  readonly #listeners: ((rules: RuleSet) => void)[] = [];

  constructor(options: RateLimitServiceOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** The active rules, undefined until a load succeeds. */
  get rules(): RuleSet | undefined {
    return this.#rules;
  }

  /** The latest load attempt, successful or not (the console's Overview); undefined before the first. */
  get lastLoad(): RuleLoadOutcome | undefined {
    return this.#lastLoad;
  }

  /** Calls `listener` after every successful swap (health's `config` component, …). */
  onRulesChange(listener: (rules: RuleSet) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Applies one load outcome: a success replaces the rules in one assignment (in-flight requests finish on
   * the set they started with); a failure keeps the old rules and counts `config_load_error`.
   */
  applyRuleUpdate(update: RuleUpdate): void {
    const { counters, logger } = this.#options;
    this.#lastLoad = { atMs: this.#nowMs(), error: update.ok ? undefined : update.error.message };
    if (!update.ok) {
      counters.configLoadError.add(1);
      logger.error(`Error loading new configuration: ${update.error.message}`);
      return;
    }
    this.#rules = update.rules;
    counters.configLoadSuccess.add(1);
    // The reference's line, except after the source's warning that no rule file was found: "successfully"
    // would contradict it (the reference itself panics at start on a missing directory).
    if (update.noRuleFiles !== true) logger.info("Successfully loaded new configuration");
    for (const listener of this.#listeners) listener(update.rules);
  }

  /**
   * Swaps in rules the main thread already loaded, counted and logged (a worker thread, docs/workers.md):
   * the same one-assignment swap as {@link applyRuleUpdate}, without counting or logging the load again.
   */
  adoptRules(rules: RuleSet): void {
    this.#lastLoad = { atMs: this.#nowMs(), error: undefined };
    this.#rules = rules;
    for (const listener of this.#listeners) listener(rules);
  }

  /**
   * Decides one request: directly when the store answers directly (memory), else as a promise. Fails with a
   * {@link RatelimitdError} subclass, which the transports map.
   */
  shouldRateLimit(request: DecisionRequest): Decision | Promise<Decision> {
    this.#options.decisions?.add(1);
    // Tracing's `ShouldRateLimit Execution` span: one boolean per request while nobody listens.
    if (decisionStart.hasSubscribers) return traceDecision(request, () => this.#decide(request));
    return this.#decide(request);
  }

  /**
   * Counts a request a transport refused before deciding it — beyond the request limits, found while
   * decoding — as the service counts its own refusals (`call.should_rate_limit.service_error`), and gives
   * the error back to throw.
   */
  refused(error: InvalidArgumentError): InvalidArgumentError {
    this.#options.counters.serviceError.add(1);
    return error;
  }

  #decide(request: DecisionRequest): Decision | Promise<Decision> {
    const { engine, store, counters } = this.#options;
    const rules = this.#rules;
    let plan: DecisionPlan;
    try {
      const nowMs = this.#nowMs();
      plan = engine.plan(rules, request, Math.floor(nowMs / 1000), nowMs);
    } catch (error) {
      counters.serviceError.add(1);
      throw error;
    }
    if (plan.increments.length === 0) return this.#complete(plan, NO_COUNTERS);
    if (this.#options.stopIncrementWhenOverLimit) return this.#decideStoppingOverLimit(plan, rules);
    let values: number[] | Promise<number[]>;
    try {
      values = store.increment(plan.increments);
    } catch (error) {
      return this.#storeFailed(plan, rules, error);
    }
    if (Array.isArray(values)) return this.#complete(plan, values);
    return values.then(
      (counted) => this.#complete(plan, counted),
      (error: unknown) => this.#storeFailed(plan, rules, error),
    );
  }

  /** STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: read first (unless the local cache decided), then count. */
  async #decideStoppingOverLimit(plan: DecisionPlan, rules: RuleSet | undefined): Promise<Decision> {
    const { engine, store } = this.#options;
    try {
      const current = plan.anyLocalCacheHit ? undefined : await store.read(plan.increments);
      engine.suppressIncrementsWhenOverLimit(plan, current);
      return this.#complete(plan, await store.increment(plan.increments));
    } catch (error) {
      return this.#storeFailed(plan, rules, error);
    }
  }

  #complete(plan: DecisionPlan, values: ArrayLike<number>): Decision {
    const nowMs = this.#nowMs();
    const decision = this.#options.engine.complete(plan, values, Math.floor(nowMs / 1000), nowMs);
    // Refused sliding-window hits go back in the background (docs/algorithms.md).
    if (plan.releases.length > 0) this.#options.store.release(plan.releases);
    return decision;
  }

  /**
   * The store failed `plan` (or was not asked): the error, or BACKEND_FAILURE_MODE's answer. A store
   * refusing the request itself (memcached: a key it cannot hold) is the request's fault, whatever the mode.
   */
  #storeFailed(plan: DecisionPlan, rules: RuleSet | undefined, error: unknown): Decision {
    if (error instanceof InvalidArgumentError) {
      this.#options.counters.serviceError.add(1);
      throw error;
    }
    const failure = this.#backendFailure(error);
    const failureMode = this.#options.failureMode;
    if (failureMode === undefined) throw failure;
    return failureMode.answer(plan, rules, failure, this.#nowMs());
  }

  #backendFailure(error: unknown): RatelimitdError {
    this.#options.counters.backendError.add(1);
    if (error instanceof RatelimitdError) return error;
    // A store's failure it did not wrap itself: the details for the log, a short reason for clients.
    return new BackendError(messageOf(error), {
      cause: error,
      clientMessage: `${this.#options.store.name}: ${clientReasonOf(error)}`,
    });
  }
}
