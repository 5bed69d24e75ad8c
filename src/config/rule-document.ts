import type { JsonObject } from "../engine/json-value.js";

/**
 * One source of rules (a YAML file or an xDS resource) in the shape of the reference's YAML structs,
 * before validation. Both rule sources produce this; `build-rule-set.ts` validates and compiles it.
 */
export interface RuleDocument {
  /** File name (or xDS resource name) used to prefix error messages. */
  readonly name: string;
  readonly domain: string;
  readonly descriptors: readonly DescriptorDocument[];
}

export interface DescriptorDocument {
  readonly key: string;
  readonly value: string;
  readonly rateLimit: RateLimitDocument | undefined;
  /**
   * `rate_limits:`, several limits checked together (docs/algorithms.md); undefined when the
   * descriptor does not have the key. Setting it together with `rateLimit` is an error.
   */
  readonly rateLimits?: readonly RateLimitDocument[] | undefined;
  readonly descriptors: readonly DescriptorDocument[];
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  readonly valueToMetric: boolean;
  readonly shareThreshold: boolean;
  readonly metadata: JsonObject | undefined;
}

export interface RateLimitDocument {
  readonly requestsPerUnit: number;
  /** As written (`minute`, `HOUR`, …); validated when the rule set is built. */
  readonly unit: string;
  readonly unlimited: boolean;
  readonly name: string;
  readonly replaces: readonly string[];
  /** `algorithm` as written; undefined when absent (the reference's fixed window). */
  readonly algorithm?: string | undefined;
  /** `burst` as written (any number: validated when the rule set is built); undefined when absent. */
  readonly burst?: number | undefined;
  /** `unit_multiplier` as written (any number: validated when the rule set is built); undefined when absent. */
  readonly unitMultiplier?: number | undefined;
  /** `reservation` as written (validated when the rule set is built); undefined when absent. */
  readonly reservation?: ReservationDocument | undefined;
}

/** A limit's `reservation:` map before validation (docs/token-budgets.md). */
export interface ReservationDocument {
  /** `estimate` as written (any number); undefined when absent. */
  readonly estimate: number | undefined;
  /** `ttl` as written (`300s`, `5m`, `1h`); "" when absent. */
  readonly ttl: string;
  /** `request_id_key`; "" when absent. */
  readonly requestIdKey: string;
}
