import type { StoreContext } from "../store-context.js";
import { type TlsFiles, tlsOptionsFromFiles } from "../tls-files.js";
import { type MemcachedServers, MemcachedStore } from "./memcached-store.js";

/** `BACKEND_TYPE=memcache` as configured (MEMCACHE_*). */
export interface MemcachedBackendOptions {
  readonly servers: MemcachedServers;
  /** MEMCACHE_MAX_IDLE_CONNS: connections per node (below 1: 2). */
  readonly connectionsPerNode: number;
  /** MEMCACHE_TLS_* files, or undefined for plain TCP. */
  readonly tls: TlsFiles | undefined;
  /** Read failures count as 0 (the reference); false when BACKEND_FAILURE_MODE answers them instead. */
  readonly failOpen: boolean;
}

/** gomemcache's `DefaultTimeout`, which the reference keeps: the bound on each memcached operation. */
const MEMCACHE_TIMEOUT_MS = 100;

/** The memcached store with its `ratelimit.memcache.*` stats and the daemon's logs. */
export function createMemcachedStore(
  options: MemcachedBackendOptions,
  { stats, logger, throttledLog }: StoreContext,
): MemcachedStore {
  const scope = "ratelimit.memcache";
  const tagged = (name: string, code: string) => stats.counter(`${scope}.${name}`, { code });
  return new MemcachedStore({
    servers: options.servers,
    connectionsPerNode: options.connectionsPerNode,
    tls: options.tls ? tlsOptionsFromFiles(options.tls) : undefined,
    timeoutMs: MEMCACHE_TIMEOUT_MS,
    startup: { initialIntervalMs: 1000, maxIntervalMs: 30_000 },
    stats: {
      multigetSuccess: tagged("multiget", "success"),
      multigetError: tagged("multiget", "error"),
      incrementSuccess: tagged("increment", "success"),
      incrementMiss: tagged("increment", "miss"),
      incrementError: tagged("increment", "error"),
      addSuccess: tagged("add", "success"),
      addError: tagged("add", "error"),
      addNotStored: tagged("add", "not_stored"),
      keysRequested: stats.counter(`${scope}.keys_requested`),
      keysFound: stats.counter(`${scope}.keys_found`),
    },
    log: logger,
    throttledLog,
    failOpen: options.failOpen,
  });
}
