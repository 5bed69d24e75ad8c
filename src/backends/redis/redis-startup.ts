import { BackendError, messageOf } from "../../errors.js";

/** REDIS_STARTUP_*: exponential backoff (factor 2, with jitter) until connected, or until the time runs out. */
export interface StartupRetryOptions {
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
  /** 0 = retry for ever. */
  readonly maxElapsedMs: number;
}

/** Logging the store needs: a narrow part of the daemon's logger. */
export interface StoreLog {
  warn(message: string): void;
  info(message: string): void;
}

/**
 * Waits until `probe` succeeds (a fresh connection answering `PING` with `PONG`), retrying with backoff as
 * the reference does (`Retrying Redis connection to <url> in <d> (elapsed: <e>): <err>`). Rejects when the
 * elapsed time passes `maxElapsedMs` or when `signal` aborts (the daemon stopping meanwhile).
 */
export async function waitForRedis(
  probe: () => Promise<void>,
  label: string,
  retry: StartupRetryOptions,
  log: StoreLog,
  signal: AbortSignal,
): Promise<void> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      await probe();
      return;
    } catch (error) {
      const elapsed = Date.now() - started;
      if (signal.aborted) throw new BackendError(`stopped while waiting for Redis connection to ${label}`);
      if (retry.maxElapsedMs > 0 && elapsed >= retry.maxElapsedMs) {
        throw new BackendError(
          `timed out waiting for Redis connection to ${label} after ${elapsed}ms: ${messageOf(error)}`,
          { cause: error },
        );
      }
      const ceiling = Math.min(retry.maxIntervalMs, retry.initialIntervalMs * 2 ** attempt);
      let delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
      if (retry.maxElapsedMs > 0) delay = Math.max(0, Math.min(delay, retry.maxElapsedMs - elapsed));
      log.warn(
        `Retrying Redis connection to ${label} in ${delay}ms (elapsed: ${elapsed}ms): ${messageOf(error)}`,
      );
      await sleep(delay, signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
