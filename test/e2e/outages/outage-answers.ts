/**
 * The rules every outage test loads and the answers each BACKEND_FAILURE_MODE gives to them (docs/outages.md): one limited, one shadow_mode, one unlimited and one unmatched descriptor.
 */
import type { EnvoyResponse } from "../../helpers/envoy-rls-client.js";
import { type FailureMode, type Outcome, timed } from "./outage-harness.js";

/** limit_remaining of an unlimited descriptor. */
export const UINT32_MAX = 4294967295;

/**
 * The limits are 10 a minute (local mode with BACKEND_LOCAL_LIMIT_FRACTION=0.5: 5), but `roomy`'s, for
 * streams of decisions that must all pass.
 */
export const RULES = `domain: outage
descriptors:
  - key: limited
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: free
    rate_limit: { unlimited: true }
  - key: roomy
    rate_limit: { unit: hour, requests_per_unit: 1000000 }
`;

/** One limited, one shadow, one unlimited and one unmatched descriptor, valued by the daemon's mode. */
export const request = (mode: string) => ({
  domain: "outage",
  descriptors: ["limited", "shadow", "free", "other"].map((key) => ({ entries: [{ key, value: mode }] })),
});
/** Only the roomy descriptor, valued `value`. */
export const roomy = (value: string) => ({
  domain: "outage",
  descriptors: [{ entries: [{ key: "roomy", value }] }],
});
/** Only the limited descriptor (local mode's write-back check). */
export const limitedOnly = (value: string) => ({
  domain: "outage",
  descriptors: [{ entries: [{ key: "limited", value }] }],
});

/** A current_limit of so many requests a minute. */
export const limit = (requestsPerUnit: number) => ({ requests_per_unit: requestsPerUnit, unit: "MINUTE" });
/** Placeholder for a duration_until_reset that was what the minute window gives (checked by `normalized`). */
export const RESET = { seconds: "window" };
/** The unlimited descriptor: as the reference answers it, store or no store. */
export const FREE = { code: "OK", limit_remaining: UINT32_MAX };
/** A descriptor no rule matches. */
export const UNMATCHED = { code: "OK" };

/**
 * The response with every duration_until_reset that equals the minute window's remaining seconds (at the
 * start or the end of the call) replaced by {@link RESET}, so whole responses compare exactly.
 */
export function normalized(outcome: Outcome, startedMs: number): unknown {
  if (outcome.error) return { error: outcome.error };
  const allowed = new Set([startedMs, Date.now()].map((ms) => String(60 - (Math.floor(ms / 1000) % 60))));
  return {
    ...outcome.response,
    statuses: outcome.response.statuses.map((status) =>
      status.duration_until_reset?.seconds !== undefined && allowed.has(status.duration_until_reset.seconds)
        ? { ...status, duration_until_reset: RESET }
        : status,
    ),
  };
}

/** What the failure mode answers to `request(mode)`; `nth` counts the outage's decisions from 1 (local). */
export function failureAnswer(mode: FailureMode, nth: number, detail: string): unknown {
  switch (mode) {
    case "error":
      return { error: { code: 14, details: detail } };
    case "allow":
      return {
        overall_code: "OK",
        statuses: [
          { code: "OK", current_limit: limit(10), limit_remaining: 9, duration_until_reset: RESET },
          { code: "OK", current_limit: limit(10), limit_remaining: 9, duration_until_reset: RESET },
          FREE,
          UNMATCHED,
        ],
      };
    case "deny":
      return {
        overall_code: "OVER_LIMIT",
        statuses: [
          { code: "OVER_LIMIT", current_limit: limit(10), duration_until_reset: RESET },
          // A shadow_mode rule never denies: answered as allow mode would (the contract leaves its
          // remaining open; the implementation gives limit - hits).
          { code: "OK", current_limit: limit(10), limit_remaining: 9, duration_until_reset: RESET },
          FREE,
          UNMATCHED,
        ],
      };
    case "local": {
      // Half of 10 per minute, counted in memory from the outage's first decision.
      const remaining = Math.max(0, 5 - nth);
      const within = nth <= 5;
      const counted = (code: string) => ({
        code,
        current_limit: limit(5),
        ...(remaining > 0 ? { limit_remaining: remaining } : {}),
        duration_until_reset: RESET,
      });
      return {
        overall_code: within ? "OK" : "OVER_LIMIT",
        statuses: [counted(within ? "OK" : "OVER_LIMIT"), counted("OK"), FREE, UNMATCHED],
      };
    }
  }
}

/** The settings of a daemon on Redis `url` in failure `mode`, with the JSON log the tests read. */
export function outageEnv(
  redisUrl: string,
  mode: FailureMode,
  breaker: { timeoutMs: number; failures: number; cooldownMs: number },
): Record<string, string> {
  return {
    BACKEND_TYPE: "redis",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: redisUrl,
    REDIS_POOL_SIZE: "1",
    REDIS_TIMEOUT: `${breaker.timeoutMs}ms`,
    BACKEND_FAILURE_MODE: mode,
    BACKEND_BREAKER_FAILURES: String(breaker.failures),
    BACKEND_BREAKER_COOLDOWN: `${breaker.cooldownMs}ms`,
    LOG_FORMAT: "json",
  };
}

/** Asks `call` once; resolves with the raw outcome and the answer {@link normalized} for comparison. */
export async function ask(
  call: () => Promise<EnvoyResponse>,
): Promise<{ outcome: Outcome; answer: unknown }> {
  const started = Date.now();
  const outcome = await timed(call);
  return { outcome, answer: normalized(outcome, started) };
}
