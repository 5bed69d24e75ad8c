import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { RequestLimits } from "../../engine/request-limits.js";
import { InvalidArgumentError, messageOf } from "../../errors.js";
import { HealthCheckRequestSchema, HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import type { UnaryMethod } from "./grpc-unary.js";
import { servingStatusOf } from "./health-service.js";
import type { CoreServices } from "./rate-limit-routes.js";
import { decodeRateLimitRequest, encodeRateLimitResponseFrame, frameOf } from "./rls-codec.js";

/**
 * ShouldRateLimit and Health/Check on the raw HTTP/2 fast path (same services as the connect routes).
 * `limits` are enforced while decoding ShouldRateLimit requests.
 */
export function fastMethods(services: CoreServices, limits: RequestLimits): UnaryMethod[] {
  return [
    {
      path: "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      name: "ShouldRateLimit",
      call: (bytes) => {
        const request = decode(
          () => decodeRateLimitRequest(bytes, limits),
          (error) => services.rateLimit.refused(error),
        );
        const decision = services.rateLimit.shouldRateLimit(request);
        return decision instanceof Promise
          ? decision.then(encodeRateLimitResponseFrame)
          : encodeRateLimitResponseFrame(decision);
      },
    },
    {
      path: "/grpc.health.v1.Health/Check",
      name: "Check",
      call: (bytes) => {
        const request = decode(() => fromBinary(HealthCheckRequestSchema, bytes));
        const status = servingStatusOf(services.health, request.service);
        if (status === undefined) throw new ConnectError("unknown service", Code.NotFound);
        return frameOf(toBinary(HealthCheckResponseSchema, create(HealthCheckResponseSchema, { status })));
      },
    },
  ];
}

/**
 * Runs a decoder. A request beyond the request limits (the decoder's own `InvalidArgumentError`) goes to
 * `refused`; anything else it throws is protobuf-es's error, answered as grpc-go's unmarshalling error.
 */
function decode<T>(parse: () => T, refused: (error: InvalidArgumentError) => Error = (error) => error): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw refused(error);
    throw new InvalidArgumentError(`grpc: error unmarshalling request: ${messageOf(error)}`);
  }
}
