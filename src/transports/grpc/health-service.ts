import { HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import type { HealthChecker } from "../../service/health-checker.js";

/** The health service name the reference reports its checker under. */
export const RATELIMIT_HEALTH_SERVICE = "ratelimit";

/**
 * `grpc.health.v1.Health` statuses: `""` is always SERVING (grpc-go's default), `ratelimit` follows the
 * health checker, anything else is unknown (undefined).
 */
export function servingStatusOf(health: HealthChecker, service: string): ServingStatus | undefined {
  if (service === "") return ServingStatus.SERVING;
  if (service === RATELIMIT_HEALTH_SERVICE)
    return health.healthy ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  return undefined;
}
