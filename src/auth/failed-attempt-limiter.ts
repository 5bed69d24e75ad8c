import { LRUCache } from "lru-cache";
import { MemoryStore } from "../backends/memory/memory-store.js";
import { buildRuleSet } from "../config/build-rule-set.js";
import { parseRuleYaml } from "../config/yaml/parse-rule-yaml.js";
import { DecisionEngine } from "../engine/decision-engine.js";
import { CODE_OVER_LIMIT } from "../engine/decision-request.js";
import type { Logger } from "../observability/logger.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import { RateLimitService } from "../service/rate-limit-service.js";

/** The rate-limit domain of failed authentication attempts (visible in /stats like any other). */
export const AUTH_DOMAIN = "ratelimitd_auth";

/** Options of {@link FailedAttemptLimiter}. */
export interface FailedAttemptLimiterOptions {
  /** Failed attempts a client address may make per minute before it is refused for the rest of it. */
  readonly failuresPerMinute: number;
  readonly stats: StatsRegistry;
  readonly logger: Logger;
  readonly nowMs?: () => number;
}

/**
 * Throttles clients that keep failing to authenticate — with ratelimitd's own engine (the daemon dogfoods
 * itself): each failure is a `ShouldRateLimit` on domain `ratelimitd_auth`, descriptor
 * `remote_address=<ip>`, against an in-process memory store. Once over the limit, the address is refused
 * (even with good credentials) until the minute's window ends, so guessing cannot continue.
 */
export class FailedAttemptLimiter {
  readonly #service: RateLimitService;
  readonly #blockedUntilMs = new LRUCache<string, number>({ max: 100_000 });
  readonly #nowMs: () => number;

  constructor(options: FailedAttemptLimiterOptions) {
    this.#nowMs = options.nowMs ?? Date.now;
    const yaml = `domain: ${AUTH_DOMAIN}\ndescriptors:\n  - key: remote_address\n    rate_limit: { unit: minute, requests_per_unit: ${options.failuresPerMinute} }\n`;
    const rules = buildRuleSet([parseRuleYaml("failed-authentication.yaml", yaml)], {
      mergeDomainConfig: false,
      statsFor: (key) => options.stats.pinnedRuleStats(key),
    });
    const engine = new DecisionEngine({
      nearLimitRatio: 0.8,
      cacheKeyPrefix: "",
      expirationJitterMaxSeconds: 0,
      shadowMode: false,
      quotaMode: false,
      responseHeaders: undefined,
      dynamicMetadata: false,
      localCache: undefined,
      stats: options.stats,
      random: Math.random,
    });
    const counter = (name: string) => options.stats.counter(`ratelimit.auth.${name}`);
    this.#service = new RateLimitService({
      engine,
      store: new MemoryStore({ nowMs: this.#nowMs }),
      counters: {
        configLoadSuccess: counter("config_load_success"),
        configLoadError: counter("config_load_error"),
        backendError: counter("backend_error"),
        serviceError: counter("service_error"),
      },
      logger: options.logger,
      stopIncrementWhenOverLimit: false,
      nowMs: this.#nowMs,
      initialRules: rules,
    });
  }

  /** Seconds until `address` may try again; 0 when it may now. */
  retryAfterSeconds(address: string): number {
    const until = this.#blockedUntilMs.get(address);
    if (until === undefined) return 0;
    const left = until - this.#nowMs();
    if (left > 0) return Math.ceil(left / 1000);
    this.#blockedUntilMs.delete(address);
    return 0;
  }

  /** Counts a failed attempt; returns the seconds the address is now blocked for (0: not blocked). */
  recordFailure(address: string): number {
    // The memory store answers synchronously.
    const decision = this.#service.shouldRateLimit({
      domain: AUTH_DOMAIN,
      descriptors: [{ entries: [{ key: "remote_address", value: address }] }],
      hitsAddend: 1,
    }) as Exclude<ReturnType<RateLimitService["shouldRateLimit"]>, Promise<unknown>>;
    if (decision.overallCode !== CODE_OVER_LIMIT) return 0;
    const seconds = Math.max(1, decision.statuses[0]?.durationUntilResetSeconds ?? 60);
    this.#blockedUntilMs.set(address, this.#nowMs() + seconds * 1000);
    return seconds;
  }
}
