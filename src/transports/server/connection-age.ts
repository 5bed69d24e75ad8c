import type { Http2Session } from "node:http2";

/** GRPC_MAX_CONNECTION_AGE and GRPC_MAX_CONNECTION_AGE_GRACE (grpc-go's keepalive.ServerParameters). */
export interface ConnectionAgeOptions {
  /** Age after which a connection gets GOAWAY, before jitter; 0 = never (grpc-go: infinity). */
  readonly maxAgeMs: number;
  /** Time the connection's streams get after GOAWAY before it is closed; 0 = no limit. */
  readonly graceMs: number;
  /** Jitter source in [0, 1); `Math.random` in production. */
  readonly random: () => number;
}

/** The longest delay `setTimeout` honours (about 24.8 days); longer ones are re-armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** grpc-go's jitter: the age plus a uniform offset in [-10 %, +10 %). */
export function jitteredAgeMs(maxAgeMs: number, random: () => number): number {
  const range = maxAgeMs / 10;
  return maxAgeMs + (random() * 2 - 1) * range;
}

/**
 * Limits an HTTP/2 session's life as grpc-go does: at the jittered age it sends GOAWAY (Node's
 * `session.close()`: streams already started complete, new ones go to a new connection), and after the
 * grace it destroys whatever is left. Timers die with the session.
 */
export function limitSessionAge(session: Http2Session, options: ConnectionAgeOptions): void {
  if (options.maxAgeMs <= 0) return;
  let grace: (() => void) | undefined;
  const age = longTimeout(
    () => {
      session.close();
      if (options.graceMs > 0 && !session.destroyed)
        grace = longTimeout(() => session.destroy(), options.graceMs);
    },
    jitteredAgeMs(options.maxAgeMs, options.random),
  );
  session.once("close", () => {
    age();
    grace?.();
  });
}

/** An unref'd timeout of any length; returns its cancel function. */
function longTimeout(fire: () => void, delayMs: number): () => void {
  let timer: NodeJS.Timeout;
  const arm = (remainingMs: number) => {
    timer = setTimeout(
      () => (remainingMs > MAX_TIMER_MS ? arm(remainingMs - MAX_TIMER_MS) : fire()),
      Math.min(remainingMs, MAX_TIMER_MS),
    );
    timer.unref();
  };
  arm(delayMs);
  return () => clearTimeout(timer);
}
