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
}
