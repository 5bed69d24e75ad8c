import type { RuleDocument } from "../../config/rule-document.js";
import type { RuleCompiler, RuleSource, RuleUpdate } from "../../config/rule-source.js";

/** The first outcome of a worker started while the main thread has no rules (they failed, or none yet). */
export const NO_RULES_YET = new Error("the main thread has loaded no rules yet");

/**
 * A worker thread's rules (docs/workers.md): the documents of each rule set the main thread compiled,
 * compiled again here (with this thread's stats and store) and swapped in whole, one set after another in
 * the order they arrive — so a request is never decided on a mix of two sets, and the newest set wins.
 */
export class RelayedRuleSource implements RuleSource {
  readonly #compile: RuleCompiler;
  readonly #initial: readonly RuleDocument[] | undefined;
  readonly #stopping = new AbortController();
  #onUpdate: ((update: RuleUpdate) => void) | undefined;
  #queue: Promise<void> = Promise.resolve();

  constructor(compile: RuleCompiler, initial: readonly RuleDocument[] | undefined) {
    this.#compile = compile;
    this.#initial = initial;
  }

  start(onUpdate: (update: RuleUpdate) => void): void {
    this.#onUpdate = onUpdate;
    if (this.#initial === undefined) onUpdate({ ok: false, error: NO_RULES_YET });
    else this.update(this.#initial);
  }

  /** Compiles `documents` after the sets before them, and reports the outcome. */
  update(documents: readonly RuleDocument[]): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      const signal = this.#stopping.signal;
      if (signal.aborted) return;
      let update: RuleUpdate;
      try {
        update = { ok: true, rules: await this.#compile(documents, signal) };
      } catch (error) {
        if (signal.aborted) return;
        update = { ok: false, error: error as Error };
      }
      this.#onUpdate?.(update);
    });
    return this.#queue;
  }

  async stop(): Promise<void> {
    this.#stopping.abort(new Error("stopping"));
    await this.#queue;
  }
}
