import type { RuleSet } from "../engine/rule-set.js";
import type { RuleDocument } from "./rule-document.js";

/** The outcome of one (re)load: a complete new rule set, or why there is none. */
export type RuleUpdate =
  | {
      readonly ok: true;
      readonly rules: RuleSet;
      /**
       * Set when the load found no rule files and the source has already warned why (a missing or empty
       * rule directory): the service then adds no "Successfully loaded" line after that warning.
       */
      readonly noRuleFiles?: true;
    }
  | { readonly ok: false; readonly error: Error };

/**
 * Where rules come from (files, xDS). A source reports every load attempt; the service swaps in successful
 * rule sets atomically and keeps the previous ones on failure.
 */
export interface RuleSource {
  /** Starts loading; `onUpdate` receives the first outcome as soon as it is known, then every reload. */
  start(onUpdate: (update: RuleUpdate) => void): void;
  stop(): Promise<void>;
}

/**
 * Turns parsed documents into a rule set (validation, stats); shared by every source. Asynchronous so that
 * a large rule set compiles in slices between decisions; `signal` ends it early (the source is stopping),
 * rejecting with the signal's reason.
 */
export type RuleCompiler = (documents: readonly RuleDocument[], signal: AbortSignal) => Promise<RuleSet>;
