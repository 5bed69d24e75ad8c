import { readFileSync } from "node:fs";
import { type ConnectionOptions, rootCertificates } from "node:tls";
import { Cluster, type RedisOptions } from "ioredis";
import { parseRedisAuth, parseRedisTopology } from "./redis-address.js";

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

/** A connection to a Redis Cluster (ioredis keeps the slot map and follows redirections). */
export type RedisConnection = Cluster;

/** Reconnect delay after a lost connection: quick at first, never more than 2 s. */
const reconnectDelayMs = (attempt: number) => Math.min(100 * attempt, 2000);

/**
 * Node options for a cluster. Commands never wait in an offline queue and are never retried after a
 * disconnect: while Redis is away a decision fails at once instead of piling up (decision 6).
 */
function nodeOptions(options: RedisEndpointOptions, retry: RedisOptions["retryStrategy"]): RedisOptions {
  const auth = parseRedisAuth(options.auth);
  return {
    ...auth,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: options.timeoutMs,
    commandTimeout: options.timeoutMs,
    retryStrategy: retry,
    ...(options.tls ? { tls: tlsConnectionOptions(options.tls) } : {}),
  };
}

/** Node TLS options from REDIS_TLS_*: the CA added to the system roots, optional client certificate. */
export function tlsConnectionOptions(tls: RedisTlsOptions): ConnectionOptions {
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
 * Opens (lazily) a cluster client for `options` (REDIS_TYPE=cluster). With `reconnect: false` it never
 * retries by itself (start-up probes, which have their own backoff).
 */
export function createClusterConnection(
  options: RedisEndpointOptions,
  { reconnect = true } = {},
): RedisConnection {
  const topology = parseRedisTopology("cluster", options.socketType, options.url);
  if (topology.type !== "cluster") throw new Error("not a cluster");
  const retry = reconnect ? reconnectDelayMs : () => null;
  return new Cluster(
    topology.nodes.map(({ host, port }) => ({ host, port })),
    {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRedirections: 4,
      clusterRetryStrategy: retry,
      slotsRefreshTimeout: options.timeoutMs,
      redisOptions: nodeOptions(options, retry),
    },
  );
}
