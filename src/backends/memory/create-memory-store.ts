import { getHeapStatistics } from "node:v8";
import type { StoreContext } from "../store-context.js";
import { MemoryStore } from "./memory-store.js";
import { SharedMemoryStore } from "./shared-memory-store.js";

/** `BACKEND_TYPE=memory` as configured (MEMORY_*). */
export interface MemoryBackendOptions {
  /** MEMORY_MAX_BYTES. */
  readonly maxBytes: number;
}

/**
 * The memory store with its byte budget, `ratelimit.memory.evictions` and gauges of what it holds. A budget
 * V8's heap could not hold beside everything else is warned about at start-up.
 */
export function createMemoryStore(
  options: MemoryBackendOptions,
  { stats, logger }: StoreContext,
): MemoryStore {
  const heapLimit = getHeapStatistics().heap_size_limit;
  if (options.maxBytes > heapLimit / 2) {
    logger.warn(
      `MEMORY_MAX_BYTES=${options.maxBytes} is more than half of the V8 heap limit (${heapLimit} bytes): the process may run out of memory first; lower it or raise node's --max-old-space-size`,
    );
  }
  const scope = "ratelimit.memory";
  const store = new MemoryStore({
    maxBytes: options.maxBytes,
    reports: { evictions: stats.counter(`${scope}.evictions`), log: logger },
  });
  stats.gauge(`${scope}.bytes`, undefined, () => store.bytes);
  stats.gauge(`${scope}.keys`, undefined, () => store.size);
  stats.gauge(`${scope}.max_bytes`, undefined, () => store.maxBytes);
  return store;
}

/**
 * The memory store of WORKERS > 1 (docs/workers.md) over the shared `table`, with the same stats as
 * {@link createMemoryStore}: `gauges` registers `ratelimit.memory.bytes`, `keys` and `max_bytes` (the main
 * thread does, once for the whole table), and every thread counts its evictions.
 */
export function createSharedMemoryStore(
  table: SharedArrayBuffer,
  { stats, logger }: StoreContext,
  gauges: boolean,
): SharedMemoryStore {
  const scope = "ratelimit.memory";
  const store = new SharedMemoryStore({
    table,
    reports: { evictions: stats.counter(`${scope}.evictions`), log: logger },
  });
  if (gauges) {
    stats.gauge(`${scope}.bytes`, undefined, () => store.bytes);
    stats.gauge(`${scope}.keys`, undefined, () => store.size);
    stats.gauge(`${scope}.max_bytes`, undefined, () => store.maxBytes);
  }
  return store;
}
