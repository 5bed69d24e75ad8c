import { create, type JsonObject as ProtoJsonObject } from "@bufbuild/protobuf";
import type { Decision } from "../engine/decision-request.js";
import { type RateLimitResponse, RateLimitResponseSchema } from "../gen/envoy/service/ratelimit/v3/rls_pb.js";

/** The wire message for an engine decision; fields the reference never sets stay empty. */
export function rateLimitResponseFromDecision(decision: Decision): RateLimitResponse {
  return create(RateLimitResponseSchema, {
    overallCode: decision.overallCode,
    statuses: decision.statuses.map((status) => ({
      code: status.code,
      currentLimit: status.currentLimit && {
        name: status.currentLimit.name,
        requestsPerUnit: status.currentLimit.requestsPerUnit,
        unit: status.currentLimit.unit,
        // Field 4 only for windows of several units: otherwise the reference's bytes.
        unitMultiplier:
          (status.currentLimit.unitMultiplier ?? 1) > 1 ? status.currentLimit.unitMultiplier : 0,
      },
      limitRemaining: status.limitRemaining,
      durationUntilReset:
        status.durationUntilResetSeconds > 0
          ? { seconds: BigInt(status.durationUntilResetSeconds) }
          : undefined,
    })),
    responseHeadersToAdd: decision.responseHeaders.map((header) => ({
      key: header.key,
      value: header.value,
    })),
    // protobuf-es holds google.protobuf.Struct fields as plain JSON objects.
    dynamicMetadata: decision.dynamicMetadata as ProtoJsonObject | undefined,
  });
}
