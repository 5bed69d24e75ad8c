import { LRUCache } from "lru-cache";
import type { Logger } from "../observability/logger.js";

/** Longest user name a log line repeats (the longest valid e-mail address is 254 characters). */
const MAX_USER_CHARS = 254;

/**
 * Warnings about logins for the operator: the client's address and the user name it gave, never the
 * password. Every failed login is logged (the throttle bounds them to AUTH_FAILURES_PER_MINUTE per address
 * and minute); of throttled ones only the first per address and window, so a flood of guesses cannot
 * flood the log — `over_limit` in /stats counts them all.
 */
export class LoginLog {
  /** Address → when its throttle window ends (ms), while its throttling has been logged. */
  readonly #throttledUntilMs = new LRUCache<string, number>({ max: 10_000 });

  constructor(
    private readonly logger: Logger,
    private readonly nowMs: () => number,
  ) {}

  /** The credentials were checked and are wrong. */
  failed(address: string, user: string): void {
    this.logger.warn("authentication failed", { address, user: shown(user) });
  }

  /** The attempt was refused unchecked, for `retryAfterSeconds`. */
  throttled(address: string, user: string, retryAfterSeconds: number): void {
    const now = this.nowMs();
    if ((this.#throttledUntilMs.get(address) ?? 0) > now) return;
    this.#throttledUntilMs.set(address, now + retryAfterSeconds * 1000);
    this.logger.warn(
      "authentication throttled: too many failed logins from this address, or too many at once; later throttled logins from it are not logged until the window ends",
      { address, retry_after_seconds: retryAfterSeconds, user: shown(user) },
    );
  }
}

/** The user name as given, cut to a bounded length (the logger escapes control characters). */
function shown(user: string): string {
  return user.length <= MAX_USER_CHARS ? user : `${user.slice(0, MAX_USER_CHARS)}…`;
}
