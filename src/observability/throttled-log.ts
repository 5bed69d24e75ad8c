import type { Logger } from "./logger.js";

/** Where a throttled line goes: the daemon's logger, or any object with the same methods. */
export type ThrottledLogTarget = Pick<Logger, "warn" | "error">;

/** A line's text, or a function building it (only called when the line is written). */
export type LineText = string | (() => string);

/** How a {@link ThrottledLog} writes and keeps time. */
export interface ThrottledLogOptions {
  readonly logger: ThrottledLogTarget;
  /** Shortest gap between two lines of one kind, in ms; 1000 by default. */
  readonly intervalMs?: number;
  /** A monotonic clock in ms (`performance.now` by default); injectable for tests. */
  readonly nowMs?: () => number;
  /**
   * Runs `run` once after `delayMs` and returns a function cancelling it; an unref'd `setTimeout` by
   * default (a pending line never keeps the process alive). Injectable for tests.
   */
  readonly schedule?: (run: () => void, delayMs: number) => () => void;
}

type Level = "warn" | "error";

interface KindState {
  /** When the last line of this kind was written. */
  lastLineMs: number;
  /** Occurrences since then that were held back. */
  held: number;
  /** The latest held occurrence: the one the next line shows. */
  latest: LineText;
  level: Level;
  cancel: (() => void) | undefined;
}

/** Idle kinds are forgotten once this many are known (they behave exactly as unknown ones). */
const MAX_IDLE_KINDS = 256;

/**
 * Log lines of recurring events, at most one per kind per interval (a second). The first occurrence is
 * written at once; later ones within the interval are held, and when it ends one line is written for them:
 * the latest one's text followed by how many others it stands for, e.g.
 * `error: redis: connection refused (and 41 more in the last 1.0 s)` (no suffix when it stands only for
 * itself). Every occurrence is thus counted in exactly one line, and the last line of a kind always shows
 * its latest state (a connection's loss and recovery share a kind for that reason).
 *
 * Kinds are free-form strings naming what recurs (`/json backend`, `redis 127.0.0.1:6379 connection`).
 * One instance is shared by the daemon's transports and backends; {@link flush} writes what is held.
 */
export class ThrottledLog {
  readonly #logger: ThrottledLogTarget;
  readonly #intervalMs: number;
  readonly #nowMs: () => number;
  readonly #schedule: (run: () => void, delayMs: number) => () => void;
  readonly #kinds = new Map<string, KindState>();

  constructor(options: ThrottledLogOptions) {
    this.#logger = options.logger;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#nowMs = options.nowMs ?? (() => performance.now());
    this.#schedule = options.schedule ?? scheduleUnref;
  }

  /** Logs `text` at warn level, unless a line of `kind` was written less than an interval ago. */
  warn(kind: string, text: LineText): void {
    this.#occur("warn", kind, text);
  }

  /** Logs `text` at error level, unless a line of `kind` was written less than an interval ago. */
  error(kind: string, text: LineText): void {
    this.#occur("error", kind, text);
  }

  /** Writes every held line now (at shutdown, so that no count is lost). */
  flush(): void {
    for (const state of this.#kinds.values()) {
      state.cancel?.();
      this.#writeHeld(state);
    }
  }

  #occur(level: Level, kind: string, text: LineText): void {
    const now = this.#nowMs();
    const state = this.#kinds.get(kind);
    if (state === undefined) {
      if (this.#kinds.size >= MAX_IDLE_KINDS) this.#forgetIdle(now);
      this.#kinds.set(kind, { lastLineMs: now, held: 0, latest: "", level, cancel: undefined });
      this.#write(level, textOf(text));
      return;
    }
    if (state.held === 0 && now - state.lastLineMs >= this.#intervalMs) {
      state.lastLineMs = now;
      this.#write(level, textOf(text));
      return;
    }
    state.held++;
    state.latest = text;
    state.level = level;
    state.cancel ??= this.#scheduleHeld(state, now);
  }

  #scheduleHeld(state: KindState, now: number): () => void {
    return this.#schedule(
      () => {
        // Timers may fire a little before the clock says the interval is over: never write early.
        const at = this.#nowMs();
        if (at - state.lastLineMs < this.#intervalMs) state.cancel = this.#scheduleHeld(state, at);
        else this.#writeHeld(state);
      },
      Math.max(0, state.lastLineMs + this.#intervalMs - now),
    );
  }

  /** The line standing for the held occurrences, if there are any. */
  #writeHeld(state: KindState): void {
    state.cancel = undefined;
    if (state.held === 0) return;
    const now = this.#nowMs();
    const others = state.held - 1;
    const seconds = ((now - state.lastLineMs) / 1000).toFixed(1);
    const text = textOf(state.latest);
    state.held = 0;
    state.latest = "";
    state.lastLineMs = now;
    this.#write(state.level, others === 0 ? text : `${text} (and ${others} more in the last ${seconds} s)`);
  }

  #write(level: Level, line: string): void {
    if (level === "warn") this.#logger.warn(line);
    else this.#logger.error(line);
  }

  #forgetIdle(now: number): void {
    for (const [kind, state] of this.#kinds) {
      if (state.held === 0 && now - state.lastLineMs >= this.#intervalMs) this.#kinds.delete(kind);
    }
  }
}

function textOf(text: LineText): string {
  return typeof text === "string" ? text : text();
}

function scheduleUnref(run: () => void, delayMs: number): () => void {
  const timer = setTimeout(run, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
}
