import { BackendError, messageOf } from "../../errors.js";
import type { StoreLog } from "../store-context.js";

/** REDIS_STARTUP_*: exponential backoff (factor 2, with jitter) until connected, or until the time runs out. */
export interface StartupRetryOptions {
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
  /** 0 = retry for ever. */
  readonly maxElapsedMs: number;
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
      // Start-up failures stop the daemon before it serves anyone; the client text is never shown.
      if (signal.aborted) {
        throw new BackendError(`stopped while waiting for Redis connection to ${label}`, {
          clientMessage: "redis: not connected",
        });
      }
      if (retry.maxElapsedMs > 0 && elapsed >= retry.maxElapsedMs) {
        throw new BackendError(
          `timed out waiting for Redis connection to ${label} after ${elapsed}ms: ${messageOf(error)}`,
          { cause: error, clientMessage: "redis: not connected" },
        );
      }
      const ceiling = Math.min(retry.maxIntervalMs, retry.initialIntervalMs * 2 ** attempt);
      let delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
      if (retry.maxElapsedMs > 0) delay = Math.max(0, Math.min(delay, retry.maxElapsedMs - elapsed));
      log.warn(
        `Retrying Redis connection to ${label} in ${delay}ms (elapsed: ${elapsed}ms): ${messageOf(error)}`,
      );
      if (attempt === 0) log.warn(startupHint(label, retry.maxElapsedMs));
      await sleep(delay, signal);
    }
  }
}

/**
 * Said once, after the first failed attempt: how long start-up will wait, and the way to run without Redis
 * (the default REDIS_URL is a unix socket few machines have, so this is a newcomer's usual first line).
 */
export function startupHint(label: string, maxElapsedMs: number): string {
  const waits =
    maxElapsedMs > 0
      ? `for at most ${Number((maxElapsedMs / 1000).toFixed(3))} s (REDIS_STARTUP_MAX_ELAPSED_TIME)`
      : "for ever (REDIS_STARTUP_MAX_ELAPSED_TIME=0; set a duration such as 30s to give up instead)";
  return `redis ${label} is not answering yet: start-up waits for it before the daemon listens, ${waits}; to run without Redis, set BACKEND_TYPE=memory (counters in the daemon's memory, one replica)`;
}

/** What {@link openPool} needs of a pool. */
export interface PoolOpening {
  readonly label: string;
  readonly size: number;
  readonly log: StoreLog;
  /** One throw-away connection that must answer PING with PONG. */
  readonly probe: () => Promise<void>;
  /** Opens every pool connection; those that fail keep retrying by themselves. */
  readonly openAll: () => Promise<unknown>[];
  /** Connections up once all have been tried. */
  readonly active: () => number;
}

/**
 * Start-up of a pool: waits (with the start-up retry policy) until the deployment answers PING, then opens
 * the pool's connections.
 */
export async function openPool(
  pool: PoolOpening,
  retry: StartupRetryOptions,
  signal: AbortSignal,
): Promise<void> {
  pool.log.warn(`connecting to redis on ${pool.label} with pool size ${pool.size}`);
  await waitForRedis(pool.probe, pool.label, retry, pool.log, signal);
  await Promise.allSettled(pool.openAll());
  if (pool.active() === 0)
    pool.log.warn(`redis ${pool.label}: answered PING but no pool connection is up yet; retrying`);
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
