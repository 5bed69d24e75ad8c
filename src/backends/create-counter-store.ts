import type { CounterStore } from "../engine/counter-store.js";
import { createMemcachedStore, type MemcachedBackendOptions } from "./memcached/create-memcached-store.js";
import { createMemoryStore, type MemoryBackendOptions } from "./memory/create-memory-store.js";
import { createRedisStore, type RedisBackendOptions } from "./redis/create-redis-store.js";
import type { StoreContext } from "./store-context.js";

/** Which backend counts (BACKEND_TYPE), and its options. */
export type CounterStoreOptions =
  | { readonly backend: "memory"; readonly memory: MemoryBackendOptions }
  | { readonly backend: "redis"; readonly redis: RedisBackendOptions }
  | { readonly backend: "memcache"; readonly memcache: MemcachedBackendOptions };

/** The one place a backend is chosen: a new backend is its folder plus one line here. */
export function createCounterStore(options: CounterStoreOptions, context: StoreContext): CounterStore {
  switch (options.backend) {
    case "memory":
      return createMemoryStore(options.memory, context);
    case "redis":
      return createRedisStore(options.redis, context);
    case "memcache":
      return createMemcachedStore(options.memcache, context);
  }
}
