/**
 * The request and result shapes the engine works on. The request types are structurally compatible with
 * the generated `RateLimitRequest`, so transports pass decoded messages through unchanged.
 */

import type { JsonObject } from "./json-value.js";
import type { RateLimitRule } from "./rule-set.js";

export interface DecisionEntry {
  readonly key: string;
  readonly value: string;
}

/** A request-level limit (`RateLimitDescriptor.limit`); `unit` is an envoy.type.v3.RateLimitUnit number. */
export interface DecisionOverride {
  readonly requestsPerUnit: number;
  readonly unit: number;
}

export interface DecisionDescriptor {
  readonly entries: readonly DecisionEntry[];
  readonly limit?: DecisionOverride | undefined;
  /** Per-descriptor hits (`google.protobuf.UInt64Value`); when present, even 0, it wins. */
  readonly hitsAddend?: bigint | number | undefined;
}

export interface DecisionRequest {
  readonly domain: string;
  readonly descriptors: readonly DecisionDescriptor[];
  /** Request-level hits; 0 means 1. */
  readonly hitsAddend: number;
}

/** `RateLimitResponse.Code`. */
export const CODE_UNKNOWN = 0;
export const CODE_OK = 1;
export const CODE_OVER_LIMIT = 2;

/** The part of a limit shown in `current_limit`. */
export type CurrentLimit = Pick<
  RateLimitRule,
  "name" | "requestsPerUnit" | "unit" | "unitMultiplier" | "algorithm" | "burst"
>;

/** `RateLimitResponse.DescriptorStatus` in engine terms. */
export interface DescriptorStatus {
  code: number;
  /** Absent for unmatched, replaced and unlimited descriptors. */
  currentLimit: CurrentLimit | undefined;
  limitRemaining: number;
  /** Seconds until the window ends; 0 = not set. */
  durationUntilResetSeconds: number;
}

export interface HeaderPair {
  readonly key: string;
  readonly value: string;
}

/** A complete answer, ready for any transport to encode. */
export interface Decision {
  readonly overallCode: number;
  readonly statuses: readonly DescriptorStatus[];
  readonly responseHeaders: readonly HeaderPair[];
  readonly dynamicMetadata: JsonObject | undefined;
}
