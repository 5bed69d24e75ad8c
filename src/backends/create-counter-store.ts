import type { CounterStore } from "../engine/counter-store.js";
import type { BackendType } from "./backend-registry.js";
import { createMemcachedStore } from "./memcached/create-memcached-store.js";
import { createMemoryStore } from "./memory/create-memory-store.js";
import { createRedisStore } from "./redis/create-redis-store.js";
import type { StoreContext } from "./store-context.js";

/** Each backend's store factory by name: one per entry of BACKENDS, the compiler checks both ways. */
const FACTORIES = {
  redis: createRedisStore,
  memcache: createMemcachedStore,
  memory: createMemoryStore,
} satisfies Record<BackendType, (options: never, context: StoreContext) => CounterStore>;

/** What one backend's factory takes (`RedisBackendOptions`, …). */
export type BackendOptions = { readonly [B in BackendType]: Parameters<(typeof FACTORIES)[B]>[0] };

/** Which backend counts (BACKEND_TYPE), and its options. */
export type CounterStoreOptions<B extends BackendType = BackendType> = {
  readonly [K in B]: { readonly backend: K; readonly options: BackendOptions[K] };
}[B];

/**
 * The one place a backend is chosen. A new backend is its folder (with its `createXStore` factory), one
 * entry in BACKENDS (backend-registry.ts: its name, alias and help; BACKEND_TYPE accepts it from there),
 * its factory in FACTORIES above, and its options from the settings in src/daemon/counter-store-options.ts
 * (with its own settings, if any, in src/settings/settings-table.ts). Once the registry entry is in, the
 * compiler points at the factory and the options until both are written.
 */
export function createCounterStore<B extends BackendType>(
  options: CounterStoreOptions<B>,
  context: StoreContext,
): CounterStore {
  const factories: {
    readonly [K in BackendType]: (options: BackendOptions[K], context: StoreContext) => CounterStore;
  } = FACTORIES;
  return factories[options.backend](options.options, context);
}
