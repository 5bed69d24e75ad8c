import { readFileSync } from "node:fs";
import { type ConnectionOptions, rootCertificates } from "node:tls";
import { Cluster, Redis, type RedisOptions } from "ioredis";
import { parseRedisAuth, parseRedisTopology, type RedisTopology } from "./redis-address.js";

/** TLS to Redis (REDIS_TLS_*): client certificate, extra CA, and optional hostname verification. */
export interface RedisTlsOptions {
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** Added to the system roots, not replacing them (as the reference). */
  readonly caFile: string;
  readonly skipHostnameVerification: boolean;
}

/** One Redis deployment: how to reach it and how patient to be. */
export interface RedisEndpointOptions {
  readonly type: "single" | "sentinel" | "cluster";
  readonly socketType: "tcp" | "unix";
  readonly url: string;
  /** `password` or `user:password`. */
  readonly auth: string;
  readonly sentinelAuth: string;
  readonly tls: RedisTlsOptions | undefined;
  /** Bound on connecting and on every round trip. */
  readonly timeoutMs: number;
}

/** A connection to one deployment: a plain or sentinel-managed Redis, or a cluster. */
export type RedisConnection = Redis | Cluster;

/** Reconnect delay after a lost connection: quick at first, never more than 2 s. */
const reconnectDelayMs = (attempt: number) => Math.min(100 * attempt, 2000);

/**
 * Connection options shared by every topology. Commands never wait in an offline queue and are never
 * retried after a disconnect: while Redis is away a decision fails at once instead of piling up
 * (decision 6).
 */
function baseOptions(options: RedisEndpointOptions): RedisOptions {
  const auth = parseRedisAuth(options.auth);
  return {
    ...auth,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: options.timeoutMs,
    commandTimeout: options.timeoutMs,
    retryStrategy: reconnectDelayMs,
    ...(options.tls ? { tls: tlsOptions(options.tls) } : {}),
  };
}

function tlsOptions(tls: RedisTlsOptions): ConnectionOptions {
  const read = (file: string) => (file === "" ? undefined : readFileSync(file));
  const ca = read(tls.caFile);
  return {
    ...(ca ? { ca: [...rootCertificates, ca.toString("utf8")] } : {}),
    ...(tls.clientCertFile ? { cert: read(tls.clientCertFile) } : {}),
    ...(tls.clientKeyFile ? { key: read(tls.clientKeyFile) } : {}),
    ...(tls.skipHostnameVerification ? { checkServerIdentity: () => undefined } : {}),
  };
}

/**
 * Opens (lazily) one connection to the deployment described by `options`. With `reconnect: false` the
 * connection never retries by itself (start-up probes, which have their own backoff).
 */
export function createRedisConnection(
  options: RedisEndpointOptions,
  { reconnect = true } = {},
): RedisConnection {
  const topology: RedisTopology = parseRedisTopology(options.type, options.socketType, options.url);
  const retry = reconnect ? reconnectDelayMs : () => null;
  const base = { ...baseOptions(options), retryStrategy: retry };
  switch (topology.type) {
    case "single": {
      const target = topology.target;
      if ("path" in target) return new Redis({ ...base, path: target.path });
      return new Redis({ ...base, host: target.host, port: target.port, ...credentialsOf(target) });
    }
    case "sentinel": {
      const sentinelAuth = parseRedisAuth(options.sentinelAuth);
      return new Redis({
        ...base,
        name: topology.masterName,
        sentinels: topology.sentinels.map(({ host, port }) => ({ host, port })),
        ...(sentinelAuth.username ? { sentinelUsername: sentinelAuth.username } : {}),
        ...(sentinelAuth.password ? { sentinelPassword: sentinelAuth.password } : {}),
        ...(options.tls ? { enableTLSForSentinelMode: true, sentinelTLS: base.tls } : {}),
        sentinelRetryStrategy: retry,
      });
    }
    case "cluster":
      return new Cluster(
        topology.nodes.map(({ host, port }) => ({ host, port })),
        {
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRedirections: 4,
          clusterRetryStrategy: retry,
          slotsRefreshTimeout: options.timeoutMs,
          redisOptions: base,
        },
      );
  }
}

function credentialsOf(target: { username?: string; password?: string }) {
  return {
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
  };
}
