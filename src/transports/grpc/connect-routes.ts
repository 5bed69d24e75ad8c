import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { messageOf, RatelimitdError } from "../../errors.js";
import { RateLimitService } from "../../gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../gen/grpc/health/v1/health_pb.js";
import type { Logger } from "../../observability/logger.js";
import { grpcCallScope } from "../../observability/request-channels.js";
import type { ThrottledLog } from "../../observability/throttled-log.js";
import type { HealthChecker } from "../../service/health-checker.js";
import type { RateLimitService as Service } from "../../service/rate-limit-service.js";
import { rateLimitResponseFromDecision } from "../rate-limit-response.js";
import { logCallFailure } from "./call-failure-log.js";
import { traceConnectCall } from "./call-tracing.js";
import { connectErrorOf } from "./grpc-status.js";
import { servingStatusOf } from "./health-service.js";
import type { ServerMetrics } from "./server-metrics.js";

/** Registers extra services (users, migrations) on the gRPC port's router. */
export type RouteRegistrar = (router: ConnectRouter) => void;

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

/**
 * Maps thrown errors to statuses once and records unary-call metrics. Errors the client only sees as
 * INTERNAL (database failures, bugs) are logged with their details; backend failures (UNAVAILABLE, a short
 * text) too, through `throttledLog`.
 */
export function serverInterceptor(
  metrics: ServerMetrics,
  logger: Logger,
  throttledLog: ThrottledLog,
): Interceptor {
  return (next) => async (request) => {
    const startedMs = performance.now();
    try {
      // Published on the request channels only while tracing listens (streams are not traced).
      if (!request.stream && grpcCallScope.hasSubscribers) return await traceConnectCall(request, next);
      return await next(request);
    } catch (error) {
      logCallFailure(throttledLog, `/${request.method.parent.typeName}/${request.method.name}`, error);
      const mapped = connectErrorOf(error);
      if (mapped.code === Code.Internal && mapped.cause !== undefined) {
        logger.error(
          `${request.method.parent.typeName}/${request.method.name} failed: ${stackOf(mapped.cause)}`,
        );
        // The details are in the log; a client is not shown internals (as the REST routes' `server error`).
        if (!(mapped.cause instanceof RatelimitdError)) {
          throw new ConnectError("server error", Code.Internal, undefined, undefined, mapped.cause);
        }
      }
      throw mapped;
    } finally {
      if (!request.stream) metrics.record(request.method.name, startedMs);
    }
  };
}

function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : messageOf(error);
}
