import type { CounterStore } from "../engine/counter-store.js";
import type { DecisionEngine } from "../engine/decision-engine.js";
import type { Decision, DecisionRequest } from "../engine/decision-request.js";
import type { RuleSet } from "../engine/rule-set.js";
import { scaledRequest, scaledRuleSet } from "../engine/scaled-rule-set.js";

/** The parts of a {@link LocalLimiter}. */
export interface LocalLimiterOptions {
  /** An engine of its own: no local over-limit cache, rule stats without `total_hits`. */
  readonly engine: DecisionEngine;
  /** An in-process store that answers at once (the memory store). */
  readonly store: CounterStore;
  /** BACKEND_LOCAL_LIMIT_FRACTION. */
  readonly fraction: number;
}

/**
 * BACKEND_FAILURE_MODE=local: decides a request the counter store could not count with the same rules and
 * algorithms in process, each limit scaled to this replica's share (docs/outages.md).
 * Its counts stay here: nothing is written back to the store when it returns.
 */
export class LocalLimiter {
  readonly #options: LocalLimiterOptions;
  /** The scaled copy of each rule set, made the first time an outage needs it. */
  readonly #scaled = new WeakMap<RuleSet, RuleSet>();

  constructor(options: LocalLimiterOptions) {
    this.#options = options;
  }

  decide(rules: RuleSet, request: DecisionRequest, nowMs: number): Decision {
    const { engine, store, fraction } = this.#options;
    const nowSeconds = Math.floor(nowMs / 1000);
    const plan = engine.plan(this.#scaledRules(rules), scaledRequest(request, fraction), nowSeconds, nowMs);
    if (plan.increments.length === 0) return engine.complete(plan, [], nowSeconds, nowMs);
    const values = store.increment(plan.increments);
    if (!Array.isArray(values))
      throw new Error(`the local limiter's ${store.name} store must answer at once`);
    const decision = engine.complete(plan, values, nowSeconds, nowMs);
    if (plan.releases.length > 0) store.release(plan.releases);
    return decision;
  }

  #scaledRules(rules: RuleSet): RuleSet {
    let scaled = this.#scaled.get(rules);
    if (scaled === undefined) {
      scaled = scaledRuleSet(rules, this.#options.fraction);
      this.#scaled.set(rules, scaled);
    }
    return scaled;
  }
}
