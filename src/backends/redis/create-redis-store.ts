import type { StoreContext } from "../store-context.js";
import type { RedisPoolOptions } from "./redis-deployment.js";
import type { StartupRetryOptions } from "./redis-startup.js";
import { RedisStore } from "./redis-store.js";

/** One Redis deployment as configured (REDIS_* or REDIS_PERSECOND_*): its pool without stats and logs. */
export type RedisDeploymentOptions = Omit<
  RedisPoolOptions,
  "name" | "stats" | "log" | "throttledLog" | "nodeBreakers"
>;

/** `BACKEND_TYPE=redis` as configured (REDIS_*). */
export interface RedisBackendOptions {
  readonly main: RedisDeploymentOptions;
  /** REDIS_PERSECOND: a separate deployment for limits whose unit is SECOND. */
  readonly perSecond: RedisDeploymentOptions | undefined;
  readonly startup: StartupRetryOptions;
  /** REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: unhealthy while a pool has no connection up. */
  readonly healthCheckActiveConnection: boolean;
}

/** The Redis store, each pool with its `ratelimit.redis_pool.*` (or `redis_per_second_pool`) stats. */
export function createRedisStore(options: RedisBackendOptions, context: StoreContext): RedisStore {
  return new RedisStore({
    main: pool("redis", "ratelimit.redis_pool", options.main, context),
    perSecond: options.perSecond
      ? pool("redis per-second", "ratelimit.redis_per_second_pool", options.perSecond, context)
      : undefined,
    startup: options.startup,
    healthCheckActiveConnection: options.healthCheckActiveConnection,
  });
}

function pool(
  name: string,
  scope: string,
  deployment: RedisDeploymentOptions,
  { stats, logger, throttledLog, nodeBreakers }: StoreContext,
): RedisPoolOptions {
  return {
    name,
    ...deployment,
    stats: {
      cxTotal: stats.counter(`${scope}.cx_total`),
      cxLocalClose: stats.counter(`${scope}.cx_local_close`),
      cxActive: stats.gauge(`${scope}.cx_active`),
    },
    log: logger,
    throttledLog,
    nodeBreakers: deployment.endpoint.type === "cluster" ? nodeBreakers : undefined,
  };
}
