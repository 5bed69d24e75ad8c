import type { DecisionPlan } from "./decision-plan.js";
import { CODE_OK, CODE_OVER_LIMIT, type Decision, type DescriptorStatus } from "./decision-request.js";
import { dynamicMetadataFor } from "./dynamic-metadata.js";
import { ietfHeadersFor, type LimitFigures } from "./ietf-headers.js";
import type { JsonObject } from "./json-value.js";
import { type HeaderNames, responseHeadersFor } from "./response-headers.js";
import type { EngineStats } from "./rule-set.js";

/** What the aggregation needs of the engine's options. */
export interface AggregateOptions {
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly responseHeaders: HeaderNames | undefined;
  readonly responseHeadersFormat?: "legacy" | "ietf" | undefined;
  readonly dynamicMetadata: boolean;
  readonly stats: EngineStats;
}

const UINT32_MAX = 4294967295;

/**
 * The response from every descriptor's status: unlimited statuses, quota accounting, overall code,
 * headers, global shadow mode, metadata, in the reference's order. `partFigures[i]` are descriptor i's
 * limits' figures when the extensions decided it (the IETF fields show one member per limit).
 */
export function aggregateDecision(
  options: AggregateOptions,
  plan: DecisionPlan,
  statuses: DescriptorStatus[],
  nowSeconds: number,
  partFigures: readonly (readonly LimitFigures[] | undefined)[],
): Decision {
  let failedRate = 0;
  let failedQuota = 0;
  let totalQuota = 0;
  const isQuota = plan.active.map((active) => options.quotaMode || active?.rule.quotaMode === true);
  const headers = !options.responseHeaders
    ? []
    : options.responseHeadersFormat === "ietf"
      ? ietfHeadersFor(plan.active, statuses, partFigures)
      : responseHeadersFor(statuses, isQuota, options.responseHeaders, nowSeconds);
  const passedMetadata: JsonObject[] = [];
  for (let i = 0; i < statuses.length; i++) {
    if (plan.unlimited[i]) {
      statuses[i] = {
        code: CODE_OK,
        currentLimit: undefined,
        limitRemaining: UINT32_MAX,
        durationUntilResetSeconds: 0,
      };
      continue;
    }
    if (statuses[i]!.code === CODE_OVER_LIMIT) {
      if (isQuota[i]) failedQuota++;
      else failedRate++;
    } else {
      const metadata = plan.active[i]?.rule.metadata;
      if (metadata !== undefined) passedMetadata.push(metadata);
    }
    if (isQuota[i]) totalQuota++;
  }
  let overallCode =
    failedRate > 0 || (totalQuota > 0 && totalQuota === failedQuota) ? CODE_OVER_LIMIT : CODE_OK;
  if (options.shadowMode && overallCode === CODE_OVER_LIMIT) {
    overallCode = CODE_OK;
    options.stats.globalShadowMode.add(1);
  }
  const dynamicMetadata = options.dynamicMetadata
    ? dynamicMetadataFor(plan.request, passedMetadata)
    : undefined;
  return { overallCode, statuses, responseHeaders: headers, dynamicMetadata };
}
