import type { RateLimitResponse } from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
} from "../gen/envoy/service/ratelimit/v3/rls_pb.js";

/**
 * A response in protobuf text format, as the reference's client prints it
 * (`overall_code:OK statuses:{code:OK current_limit:{requests_per_unit:20 unit:MINUTE} limit_remaining:19 …}`).
 * Zero values are omitted, as the text format does.
 */
export function responseText(response: RateLimitResponse): string {
  const parts: string[] = [];
  if (response.overallCode) parts.push(`overall_code:${RateLimitResponse_Code[response.overallCode]}`);
  for (const status of response.statuses) {
    const inner: string[] = [];
    if (status.code) inner.push(`code:${RateLimitResponse_Code[status.code]}`);
    const limit = status.currentLimit;
    if (limit) {
      const fields: string[] = [];
      if (limit.name) fields.push(`name:${JSON.stringify(limit.name)}`);
      if (limit.requestsPerUnit) fields.push(`requests_per_unit:${limit.requestsPerUnit}`);
      if (limit.unit) fields.push(`unit:${RateLimitResponse_RateLimit_Unit[limit.unit]}`);
      if (limit.unitMultiplier) fields.push(`unit_multiplier:${limit.unitMultiplier}`);
      inner.push(`current_limit:{${fields.join(" ")}}`);
    }
    if (status.limitRemaining) inner.push(`limit_remaining:${status.limitRemaining}`);
    if (status.durationUntilReset)
      inner.push(`duration_until_reset:{seconds:${status.durationUntilReset.seconds}}`);
    parts.push(`statuses:{${inner.join(" ")}}`);
  }
  for (const header of response.responseHeadersToAdd) {
    parts.push(
      `response_headers_to_add:{key:${JSON.stringify(header.key)} value:${JSON.stringify(header.value)}}`,
    );
  }
  if (response.dynamicMetadata) parts.push(`dynamic_metadata:${JSON.stringify(response.dynamicMetadata)}`);
  return parts.join(" ");
}
