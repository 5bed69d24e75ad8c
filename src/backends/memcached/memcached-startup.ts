import { BackendError, messageOf } from "../../errors.js";
import type { StoreLog } from "../store-context.js";

/** Start-up retry: exponential backoff (factor 2, with jitter) until connected, for as long as it takes. */
export interface MemcachedStartupOptions {
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
}

/**
 * Runs `attempt` until it resolves, waiting between failures with backoff and logging each as
 * `Retrying memcache connection to <what> in <d>ms (elapsed: <e>ms): <err>`. Rejects when `signal` aborts
 * (the daemon stopping meanwhile).
 */
export async function retryUntilConnected(
  attempt: () => Promise<void>,
  what: () => string,
  retry: MemcachedStartupOptions,
  log: StoreLog,
  signal: AbortSignal,
): Promise<void> {
  const started = Date.now();
  for (let round = 0; ; round++) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (signal.aborted) throw stopped(what());
      const ceiling = Math.min(retry.maxIntervalMs, retry.initialIntervalMs * 2 ** round);
      const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
      log.warn(
        `Retrying memcache connection to ${what()} in ${delay}ms (elapsed: ${Date.now() - started}ms): ${messageOf(error)}`,
      );
      await sleep(delay, signal);
      if (signal.aborted) throw stopped(what());
    }
  }
}

/** The daemon stopped before memcached answered: nobody was served, so no client sees this. */
function stopped(what: string): BackendError {
  return new BackendError(`stopped while waiting for memcache connection to ${what}`, {
    clientMessage: "memcache: not connected",
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
