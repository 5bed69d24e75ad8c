import type { CounterIncrement } from "../../engine/counter-store.js";
import { commandsOf, onlyFixed, resultsOf } from "./operation-shapes.js";

interface Waiting {
  readonly increments: readonly CounterIncrement[];
  /** Numbers its answer holds: one per fixed window, `resultCountOf` per operation otherwise. */
  readonly results: number;
  readonly resolve: (values: number[]) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Implicit pipelining (REDIS_PIPELINE_WINDOW / REDIS_PIPELINE_LIMIT): increments of concurrent requests are
 * gathered and sent together, flushed when the window ends or when `limitCommands` commands wait, whichever
 * comes first. Windows under 1 ms flush at the end of the current event-loop turn (timers cannot be finer).
 * A failed flush fails every request in it.
 */
export class PipelineBatcher {
  #waiting: Waiting[] = [];
  #commands = 0;
  #scheduled = false;

  constructor(
    private readonly run: (increments: readonly CounterIncrement[]) => Promise<number[]>,
    private readonly windowMs: number,
    /** 0 = no limit (the window alone decides). */
    private readonly limitCommands: number,
  ) {}

  submit(increments: readonly CounterIncrement[]): Promise<number[]> {
    return new Promise((resolve, reject) => {
      const fixed = onlyFixed(increments);
      const results = fixed ? increments.length : resultsOf(increments);
      this.#waiting.push({ increments, results, resolve, reject });
      this.#commands += fixed ? increments.length * 2 : commandsOf(increments);
      if (this.limitCommands > 0 && this.#commands >= this.limitCommands) this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        if (this.windowMs < 1) setImmediate(() => this.#flush());
        else setTimeout(() => this.#flush(), this.windowMs);
      }
    });
  }

  #flush(): void {
    const batch = this.#waiting;
    if (batch.length === 0) return;
    this.#waiting = [];
    this.#commands = 0;
    this.#scheduled = false;
    const all = batch.length === 1 ? batch[0]!.increments : batch.flatMap((w) => w.increments);
    this.run(all).then(
      (values) => {
        let offset = 0;
        for (const waiting of batch) {
          waiting.resolve(values.slice(offset, offset + waiting.results));
          offset += waiting.results;
        }
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }
}
