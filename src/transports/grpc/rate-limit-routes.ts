import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { RequestLimits } from "../../engine/request-limits.js";
import { InvalidArgumentError } from "../../errors.js";
import { RateLimitService } from "../../gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../gen/grpc/health/v1/health_pb.js";
import type { HealthChecker } from "../../service/health-checker.js";
import type { RateLimitService as Service } from "../../service/rate-limit-service.js";
import { rateLimitResponseFromDecision } from "../rate-limit-response.js";
import { EARLY_REFUSAL, withEarlyRequestLimits } from "./early-request-limits.js";
import { servingStatusOf } from "./health-service.js";
import type { RouteRegistrar } from "./route-registrar.js";

/** Everything the rate-limit and health services need. */
export interface CoreServices {
  readonly rateLimit: Service;
  readonly health: HealthChecker;
}

/**
 * The RLS and health services for connect-node: gRPC (compressed or not), gRPC-Web and Connect.
 * ShouldRateLimit is held to `limits` and the message size before connect-node decodes it
 * ({@link withEarlyRequestLimits}), as the gRPC fast path.
 */
export function rateLimitRoutes(services: CoreServices, limits: RequestLimits): RouteRegistrar {
  return (router) => {
    router.service(RateLimitService, {
      async shouldRateLimit(request, context) {
        const refusal = context.values.get(EARLY_REFUSAL);
        if (refusal !== undefined) {
          throw refusal instanceof InvalidArgumentError ? services.rateLimit.refused(refusal) : refusal;
        }
        return rateLimitResponseFromDecision(await services.rateLimit.shouldRateLimit(request));
      },
    });
    const { handlers } = router;
    for (let i = 0; i < handlers.length; i++) {
      if (handlers[i]!.service === RateLimitService) {
        handlers[i] = withEarlyRequestLimits(handlers[i]!, limits);
      }
    }
    router.service(Health, {
      check(request) {
        const status = servingStatusOf(services.health, request.service);
        if (status === undefined) throw new ConnectError("unknown service", Code.NotFound);
        return create(HealthCheckResponseSchema, { status });
      },
      watch: (request, context) => watchHealth(services.health, request.service, context.signal),
    });
  };
}

/** Streams the current status, then every change, until the client goes away. */
async function* watchHealth(
  health: HealthChecker,
  service: string,
  signal: AbortSignal,
): AsyncGenerator<HealthCheckResponse> {
  const statusNow = () => servingStatusOf(health, service) ?? ServingStatus.SERVICE_UNKNOWN;
  let wake: (() => void) | undefined;
  const unsubscribe = health.onChange(() => wake?.());
  const aborted = new Promise<void>((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
  try {
    let last: ServingStatus | undefined;
    while (!signal.aborted) {
      const status = statusNow();
      if (status !== last) {
        last = status;
        yield create(HealthCheckResponseSchema, { status });
      }
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
    }
  } finally {
    unsubscribe();
  }
}
