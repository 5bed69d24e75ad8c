import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
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
import { servingStatusOf } from "./health-service.js";
import type { RouteRegistrar } from "./route-registrar.js";

/** Everything the rate-limit and health services need. */
export interface CoreServices {
  readonly rateLimit: Service;
  readonly health: HealthChecker;
}

/** The RLS and health services for connect-node: gRPC (compressed or not), gRPC-Web and Connect. */
export function rateLimitRoutes(services: CoreServices): RouteRegistrar {
  return (router) => {
    router.service(RateLimitService, {
      async shouldRateLimit(request) {
        return rateLimitResponseFromDecision(await services.rateLimit.shouldRateLimit(request));
      },
    });
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
