import type { ExecutionStatus } from "../../migrations/migration.js";
import type { AdminIo } from "./admin-io.js";

/** An execution's progress at one moment, from one consistent read. */
export interface ExecutionProgress {
  readonly executionId: number;
  readonly status: ExecutionStatus;
  readonly itemsProcessed: number;
  readonly itemsTotal: number;
  readonly fromBatch: number;
  readonly toBatch: number;
  /** Batches done so far, ascending. */
  readonly batchesDone: readonly number[];
}

/**
 * How `migrations run/rollback` shows progress on stderr: a bar redrawn in place on a terminal, one
 * line per batch otherwise (logs, CI). Messages in between keep the bar below them.
 */
export interface ProgressDisplay {
  /** A line announcing the execution about to be followed. */
  begin(line: string): void;
  /** `batch` has just been seen done; once per batch, in order. */
  batchDone(progress: ExecutionProgress, batch: number): void;
  /** The latest progress. */
  update(progress: ExecutionProgress): void;
  /** A message (a retry, a worker's warning). */
  note(line: string): void;
  /** The execution ended (or is no longer followed). */
  end(): void;
}

/** The display that suits stderr: a bar on a terminal, lines otherwise. */
export function createProgressDisplay(io: AdminIo): ProgressDisplay {
  return io.errIsTty ? new BarDisplay(io) : new LineDisplay(io);
}

/** `items 2/3, batch 2/3`, as both displays word it. */
function counts(progress: ExecutionProgress): string {
  const lastDone = progress.batchesDone.at(-1) ?? progress.fromBatch - 1;
  return `${progress.itemsProcessed}/${progress.itemsTotal} items, batch ${lastDone}/${progress.toBatch}`;
}

/** One line per batch: what a pipe or a log file can keep. */
class LineDisplay implements ProgressDisplay {
  constructor(private readonly io: AdminIo) {}

  begin(line: string): void {
    this.io.err(line);
  }

  batchDone(progress: ExecutionProgress, batch: number): void {
    this.io.err(
      `execution ${progress.executionId}: batch ${batch}/${progress.toBatch} done, ${progress.itemsProcessed}/${progress.itemsTotal} items`,
    );
  }

  update(): void {}

  note(line: string): void {
    this.io.err(line);
  }

  end(): void {}
}

/** `[=========>          ]  45% 45/100 items, batch 1/1`, redrawn in place. */
class BarDisplay implements ProgressDisplay {
  #last: ExecutionProgress | undefined;
  #drawn = false;
  #line = "";

  constructor(private readonly io: AdminIo) {}

  begin(line: string): void {
    this.#clear();
    this.io.err(line);
    this.#last = undefined;
  }

  batchDone(): void {}

  update(progress: ExecutionProgress): void {
    this.#last = progress;
    this.#draw();
  }

  note(line: string): void {
    this.#clear();
    this.io.err(line);
    this.#draw();
  }

  end(): void {
    // The last bar stays on screen, as the origin's WP-CLI progress bar does.
    if (this.#drawn) this.io.errRaw("\n");
    this.#drawn = false;
    this.#last = undefined;
  }

  #draw(): void {
    const progress = this.#last;
    if (progress === undefined) return;
    const batches = progress.toBatch - progress.fromBatch + 1;
    const done =
      progress.status === "completed" || progress.status === "reverted"
        ? 1
        : progress.itemsTotal > 0
          ? progress.itemsProcessed / progress.itemsTotal
          : progress.batchesDone.length / batches;
    const fraction = Math.min(1, Math.max(0, done));
    const text = ` ${String(Math.floor(fraction * 100)).padStart(3)}% ${counts(progress)}`;
    const width = Math.max(10, Math.min(40, this.io.errColumns - text.length - 3));
    const filled = Math.floor(fraction * width);
    const bar =
      "=".repeat(filled) + (filled < width ? ">" : "") + " ".repeat(Math.max(0, width - filled - 1));
    const line = `[${bar}]${text}`;
    if (this.#drawn && line === this.#line) return;
    this.io.errRaw(`\r\x1b[2K${line}`);
    this.#line = line;
    this.#drawn = true;
  }

  #clear(): void {
    if (this.#drawn) this.io.errRaw("\r\x1b[2K");
    this.#drawn = false;
  }
}
