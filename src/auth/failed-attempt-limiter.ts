import type { CounterIncrement, CounterStore } from "../engine/counter-store.js";
import type { DecisionEngine } from "../engine/decision-engine.js";
import { CODE_OVER_LIMIT, type DecisionRequest } from "../engine/decision-request.js";
import type { RuleSet } from "../engine/rule-set.js";
import { AUTH_DOMAIN } from "./failed-attempt-rules.js";

/** What {@link FailedAttemptLimiter} decides with, handed in by the wiring. */
export interface FailedAttemptLimiterOptions {
  readonly engine: DecisionEngine;
  /** The rules of domain `ratelimitd_auth` (`failedAttemptRules` in failed-attempt-rules.ts). */
  readonly rules: RuleSet;
  /** Where attempts are counted; its increments must be atomic (every store's are). */
  readonly store: CounterStore;
  readonly nowMs?: () => number;
}

/** A login attempt counted against its address before its credentials are checked. */
export type LoginAttempt =
  | {
      readonly allowed: true;
      /** The credentials were good: the attempt is given back. A failed one stays counted. */
      readonly release: () => Promise<void>;
    }
  | {
      /** Over the budget: refuse without looking at the credentials. */
      readonly allowed: false;
      readonly retryAfterSeconds: number;
    };

/**
 * Throttles clients that keep failing to authenticate — with ratelimitd's own engine (the daemon dogfoods
 * itself): each attempt is a hit on domain `ratelimitd_auth`, descriptor `remote_address=<ip>`, taken
 * before the credentials are checked and given back when they turn out good. So the count is failures plus
 * checks in progress, and however many attempts arrive at once (HTTP/2 streams, many connections), at most
 * the budget of them is ever checked in a window. An attempt over the budget is refused, and given back too:
 * it checked nothing, so the count stays at the budget until the window ends.
 */
export class FailedAttemptLimiter {
  readonly #options: FailedAttemptLimiterOptions;
  readonly #nowMs: () => number;

  constructor(options: FailedAttemptLimiterOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** Counts an attempt from `address`; its credentials may be checked only when it is allowed. */
  async attempt(address: string): Promise<LoginAttempt> {
    const { engine, rules, store } = this.#options;
    const request: DecisionRequest = {
      domain: AUTH_DOMAIN,
      descriptors: [{ entries: [{ key: "remote_address", value: address }] }],
      hitsAddend: 1,
    };
    const plan = engine.plan(rules, request, Math.floor(this.#nowMs() / 1000));
    const decision = engine.complete(
      plan,
      await store.increment(plan.increments),
      Math.floor(this.#nowMs() / 1000),
    );
    const giveBack = async () => {
      await store.increment(
        plan.increments.map((increment): CounterIncrement => ({ ...increment, hits: -1 })),
      );
    };
    if (decision.overallCode !== CODE_OVER_LIMIT) return { allowed: true, release: giveBack };
    await giveBack();
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, decision.statuses[0]?.durationUntilResetSeconds ?? 60),
    };
  }
}
