import type { CounterIncrement } from "../../engine/counter-store.js";
import { commandsOf, onlyFixed, resultsOf } from "./operation-shapes.js";

/**
 * How a flush's answer is cut into one request's: its `operations` operations start at `firstOperation` of
 * the flush, its `results` numbers at `firstResult`.
 */
export type AnswerSlicer<Answer> = (
  answer: Answer,
  part: {
    readonly firstOperation: number;
    readonly operations: number;
    readonly firstResult: number;
    readonly results: number;
  },
) => Answer;

interface Waiting<Answer> {
  readonly increments: readonly CounterIncrement[];
  /** Numbers its answer holds: one per fixed window, `resultCountOf` per operation otherwise. */
  readonly results: number;
  readonly resolve: (answer: Answer) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Implicit pipelining (REDIS_PIPELINE_WINDOW / REDIS_PIPELINE_LIMIT): increments of concurrent requests are
 * gathered and sent together, flushed when the window ends or when `limitCommands` commands wait, whichever
 * comes first. Windows under 1 ms flush at the end of the current event-loop turn (timers cannot be finer).
 * Each request gets its own part of the flush's answer (`slice`), so an answer that tells failures apart
 * (a cluster's, per slot group: cluster-commands.ts) fails only the requests whose commands failed; a
 * flush that fails as a whole (it rejects) fails every request in it.
 */
export class AnswerBatcher<Answer> {
  #waiting: Waiting<Answer>[] = [];
  #commands = 0;
  #scheduled = false;

  constructor(
    private readonly run: (increments: readonly CounterIncrement[]) => Promise<Answer>,
    private readonly windowMs: number,
    /** 0 = no limit (the window alone decides). */
    private readonly limitCommands: number,
    private readonly slice: AnswerSlicer<Answer>,
  ) {}

  submit(increments: readonly CounterIncrement[]): Promise<Answer> {
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
    if (batch.length === 1) {
      const [only] = batch as [Waiting<Answer>];
      this.run(only.increments).then(only.resolve, only.reject);
      return;
    }
    this.run(batch.flatMap((w) => w.increments)).then(
      (answer) => {
        let firstOperation = 0;
        let firstResult = 0;
        for (const waiting of batch) {
          const operations = waiting.increments.length;
          waiting.resolve(
            this.slice(answer, { firstOperation, operations, firstResult, results: waiting.results }),
          );
          firstOperation += operations;
          firstResult += waiting.results;
        }
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }
}

/** An {@link AnswerBatcher} whose answer is the flat counter values (single and sentinel deployments). */
export class PipelineBatcher extends AnswerBatcher<number[]> {
  constructor(
    run: (increments: readonly CounterIncrement[]) => Promise<number[]>,
    windowMs: number,
    limitCommands: number,
  ) {
    super(run, windowMs, limitCommands, (values, { firstResult, results }) =>
      values.slice(firstResult, firstResult + results),
    );
  }
}
