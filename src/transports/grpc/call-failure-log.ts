import { BackendError } from "../../errors.js";
import type { ThrottledLog } from "../../observability/throttled-log.js";

/**
 * Logs a call that failed on the backend, at warn, with the details its client was not shown:
 * `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit failed: redis 10.0.0.7:6379: …`. At most one
 * line a second per method (plain gRPC and Connect alike), counting the others. Other failures are the
 * request's own and are not logged, as the reference does not log them.
 */
export function logCallFailure(log: ThrottledLog, path: string, error: unknown): void {
  if (!(error instanceof BackendError)) return;
  log.warn(`grpc ${path}`, () => `${path.slice(1)} failed: ${error.message}`);
}
