import { algorithmNamed } from "./algorithms/registry.js";
import { secondsUntilReset } from "./cache-key.js";
import { CODE_OVER_LIMIT, type DescriptorStatus, type HeaderPair } from "./decision-request.js";
import { algorithmLimitOf } from "./limit-parts.js";
import { unitSeconds } from "./units.js";

/** Names of the three `RateLimit-*` headers (`LIMIT_*_HEADER` settings). */
export interface HeaderNames {
  readonly limit: string;
  readonly remaining: string;
  readonly reset: string;
}

const UINT32_MAX = 4294967295;

/**
 * `RateLimit-Limit/Remaining/Reset` for the most restrictive descriptor: the status with the lowest
 * remaining (ties keep the earlier), except that any non-quota OVER_LIMIT status wins outright (the last
 * one). No headers when no status carries a limit (test/unit/engine/headers-response.test.ts).
 */
export function responseHeadersFor(
  statuses: readonly DescriptorStatus[],
  isQuota: readonly boolean[],
  names: HeaderNames,
  nowSeconds: number,
): HeaderPair[] {
  let chosen: DescriptorStatus | undefined;
  let minimum = UINT32_MAX;
  for (let i = 0; i < statuses.length; i++) {
    const status = statuses[i]!;
    if (status.currentLimit !== undefined && status.limitRemaining < minimum) {
      chosen = status;
      minimum = status.limitRemaining;
    }
    if (!isQuota[i] && status.code === CODE_OVER_LIMIT) {
      chosen = status;
      minimum = 0;
    }
  }
  if (chosen?.currentLimit === undefined) return [];
  const limit = chosen.currentLimit;
  if (limit.algorithm !== undefined) {
    // The extensions: the limit the remaining counts against (a token bucket's burst) and the status's
    // own reset, which the algorithm computed (docs/algorithms.md).
    const ceiling = algorithmNamed(limit.algorithm).capacityOf(algorithmLimitOf(limit));
    return [
      { key: names.limit, value: String(ceiling) },
      { key: names.remaining, value: String(chosen.limitRemaining) },
      { key: names.reset, value: String(chosen.durationUntilResetSeconds) },
    ];
  }
  return [
    { key: names.limit, value: String(chosen.currentLimit.requestsPerUnit) },
    { key: names.remaining, value: String(chosen.limitRemaining) },
    { key: names.reset, value: String(secondsUntilReset(nowSeconds, unitSeconds(chosen.currentLimit.unit))) },
  ];
}
