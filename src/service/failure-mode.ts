import type { DecisionEngine } from "../engine/decision-engine.js";
import type { DecisionPlan } from "../engine/decision-plan.js";
import type { Decision } from "../engine/decision-request.js";
import type { Counter, RuleSet } from "../engine/rule-set.js";
import { messageOf, type RatelimitdError } from "../errors.js";
import type { LocalLimiter } from "./local-limiter.js";

/** BACKEND_FAILURE_MODE. */
export type BackendFailureMode = "error" | "allow" | "deny" | "local";

/** Where answers given in place of the store's are written down (a throttled warn log). */
export interface FailureModeLog {
  warn(kind: string, text: string | (() => string)): void;
}

/** The parts of a {@link FailureMode}. */
export interface FailureModeOptions {
  readonly mode: BackendFailureMode;
  /** The service's engine, which answers allow and deny from the plan. */
  readonly engine: DecisionEngine;
  /** Set for mode local. */
  readonly local: LocalLimiter | undefined;
  /** `ratelimit.service.backend_failure.<mode>`. */
  readonly answered: Counter;
  readonly log: FailureModeLog;
}

const LOG_KIND = "backend failure mode";

/**
 * What a decision gets when its counter store failed, timed out, or was not asked (breaker open, too many
 * calls pending) — docs/outages.md: `error` fails the call as the reference does,
 * `allow` and `deny` answer from the plan alone, `local` decides in process. Every such decision is counted
 * in `backend_failure.<mode>`; those not failed are logged at warn, at most a line a second with a count.
 */
export class FailureMode {
  readonly #options: FailureModeOptions;

  constructor(options: FailureModeOptions) {
    this.#options = options;
  }

  get mode(): BackendFailureMode {
    return this.#options.mode;
  }

  /** The decision for `plan` in place of the store's counters; throws `error` in mode error. */
  answer(plan: DecisionPlan, rules: RuleSet | undefined, error: RatelimitdError, nowMs: number): Decision {
    const { mode, engine, local, answered, log } = this.#options;
    answered.add(1);
    if (mode === "error") throw error;
    log.warn(
      LOG_KIND,
      () => `counter store failed (${messageOf(error)}), answered with failure mode ${mode}`,
    );
    if (mode === "local" && local !== undefined && rules !== undefined) {
      return local.decide(rules, plan.request, nowMs);
    }
    return engine.completeWithoutCounts(plan, mode === "deny" ? "deny" : "allow", Math.floor(nowMs / 1000));
  }
}
