/** How long the xDS client waits before re-opening its stream (CONFIG_GRPC_XDS_* and XDS_CLIENT_BACKOFF_*). */
export interface ReconnectPolicy {
  /** CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: between attempts while the server has never answered. */
  readonly connectRetryIntervalMs: number;
  /** XDS_CLIENT_BACKOFF_*: after an established stream broke. */
  readonly backoff: {
    readonly initialMs: number;
    readonly maxMs: number;
    /** XDS_CLIENT_BACKOFF_RANDOM_FACTOR, which the reference uses as the multiplier. */
    readonly factor: number;
    readonly jitter: boolean;
  };
}

/**
 * The delay before reconnect attempt `attempt` (0 for the first since the last answer), as the reference
 * computes it. Until the server first answered: the connect retry interval with ±50 % jitter (grpc_retry's
 * `BackoffLinearWithJitter(interval, 0.5)`). After that: jpillora/backoff's `ForAttempt` with
 * Min = initial, Max = max, Factor = factor: `initial × factor^attempt`, jittered uniformly between that and
 * `initial` when `jitter`, then kept within [initial, max]. With the defaults (10 s, 60 s, 0.5, jitter) that
 * is always 10 s, since a factor below 1 never grows. `random` gives values in [0, 1).
 */
export function reconnectDelayMs(
  policy: ReconnectPolicy,
  everAnswered: boolean,
  attempt: number,
  random: () => number,
): number {
  if (!everAnswered) return Math.round(policy.connectRetryIntervalMs * (0.5 + random()));
  const { initialMs, maxMs, jitter } = policy.backoff;
  // jpillora's short cut, and its default factor for a non-positive one.
  if (initialMs >= maxMs) return maxMs;
  const factor = policy.backoff.factor > 0 ? policy.backoff.factor : 2;
  let delayMs = initialMs * factor ** attempt;
  if (jitter) delayMs = random() * (delayMs - initialMs) + initialMs;
  return Math.round(Math.min(maxMs, Math.max(initialMs, delayMs)));
}
