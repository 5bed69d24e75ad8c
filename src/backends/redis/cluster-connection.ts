import { Cluster, type RedisOptions } from "ioredis";
import { clientReasonOf } from "../client-reason.js";
import { tlsOptionsFromFiles } from "../tls-files.js";
import { parseRedisAuth, parseRedisTopology } from "./redis-address.js";
import type { RedisEndpointOptions } from "./redis-deployment.js";

/** A connection to a Redis Cluster (ioredis keeps the slot map and follows redirections). */
export type ClusterConnection = Cluster;

/** Reconnect delay after a lost connection: quick at first, never more than 2 s. */
const reconnectDelayMs = (attempt: number) => Math.min(100 * attempt, 2000);

/**
 * Node options for a cluster. Commands never wait in an offline queue and are never retried after a
 * disconnect: while Redis is away a decision fails at once instead of piling up (docs/backends.md "Redis").
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
    ...(options.tls ? { tls: tlsOptionsFromFiles(options.tls) } : {}),
  };
}

/**
 * Opens (lazily) a cluster client for `options` (REDIS_TYPE=cluster). With `reconnect: false` it never
 * retries by itself (start-up probes, which have their own backoff).
 */
export function createClusterConnection(
  options: RedisEndpointOptions,
  { reconnect = true } = {},
): ClusterConnection {
  const topology = parseRedisTopology("cluster", options.socketType, options.url);
  if (topology.type !== "cluster") throw new Error("not a cluster");
  const retry = reconnect ? reconnectDelayMs : () => null;
  return new Cluster(
    topology.nodes.map(({ host, port }) => ({ host, port })),
    {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRedirections: 4,
      // CLUSTERDOWN fails its commands at once instead of retrying them every 100 ms up to maxRedirections:
      // the pool reads the slot map again itself (cluster-node-health.ts, docs/outages.md "Redis
      // Cluster"). A closed connection keeps ioredis's retries every 100 ms (retryDelayOnFailover): a
      // node's connection may be replaced under a command while the client starts.
      retryDelayOnClusterDown: 0,
      clusterRetryStrategy: retry,
      slotsRefreshTimeout: options.timeoutMs,
      redisOptions: nodeOptions(options, retry),
    },
  );
}

/** ioredis's own failures (they carry no code), as short reasons; those not listed name nodes or keys. */
const IOREDIS_REASONS: Readonly<Record<string, string>> = {
  "Connection is closed.": "connection closed",
  "Failed to refresh slots cache.": "cannot read the cluster's slots",
  "None of startup nodes is available": "no cluster node reachable",
  "Cluster isn't ready and enableOfflineQueue options is false": "not connected",
};

/** What clients are shown of a cluster failure (see `clientReasonOf`), ioredis's own texts included. */
export function clusterReasonOf(error: unknown): string {
  const known = error instanceof Error ? IOREDIS_REASONS[error.message] : undefined;
  if (known !== undefined) return known;
  if (error instanceof Error && error.message.startsWith("Too many Cluster redirections."))
    return "too many cluster redirections";
  return clientReasonOf(error);
}
