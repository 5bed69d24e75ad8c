/** Logging the memcached store needs: a narrow part of the daemon's logger. */
export interface MemcachedLog {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
}

/** Shortest gap between two lines of one kind, in ms. */
const INTERVAL_MS = 1000;

/**
 * The reference's per-request error lines (`Error multi-getting memcache keys …`, `Failed to increment key
 * …`), at most one per kind per second: while memcached is away every request fails the same way, and one
 * line a second says so without flooding the log. The next line of a kind counts the ones left out.
 */
export class ThrottledErrors {
  readonly #log: MemcachedLog;
  readonly #nowMs: () => number;
  readonly #kinds = new Map<string, { lastMs: number; suppressed: number }>();

  constructor(log: MemcachedLog, nowMs: () => number = () => performance.now()) {
    this.#log = log;
    this.#nowMs = nowMs;
  }

  /** Logs `message()` at error level unless a line of `kind` was logged less than a second ago. */
  error(kind: string, message: () => string): void {
    const now = this.#nowMs();
    const state = this.#kinds.get(kind);
    if (state !== undefined && now - state.lastMs < INTERVAL_MS) {
      state.suppressed++;
      return;
    }
    const suppressed = state?.suppressed ?? 0;
    this.#kinds.set(kind, { lastMs: now, suppressed: 0 });
    this.#log.error(suppressed > 0 ? `${message()} (${suppressed} similar errors not logged)` : message());
  }
}
