import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { messageOf, RatelimitdError } from "../../errors.js";
import type { Logger } from "../../observability/logger.js";
import { grpcCallScope } from "../../observability/request-channels.js";
import type { ThrottledLog } from "../../observability/throttled-log.js";
import { connectErrorOf } from "../grpc-status.js";
import { logCallFailure } from "./call-failure-log.js";
import { traceConnectCall } from "./call-tracing.js";
import type { ServerMetrics } from "./server-metrics.js";

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
