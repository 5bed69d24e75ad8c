import { messageOf } from "../../errors.js";
import type { StoreThrottledLog } from "../store-context.js";
import type { MemcachedConnection } from "./memcached-connection.js";
import type { MemcacheStats } from "./memcached-increments.js";
import type { MemcachedNodes } from "./memcached-nodes.js";

/** What one multi-get gave: the counters found, and whether every node answered. */
export interface CountersRead {
  readonly values: ReadonlyMap<string, number>;
  readonly ok: boolean;
  /** Why a node's keys could not be read (the first failure), when `ok` is false. */
  readonly failure?: Error | undefined;
}

/** Largest value the reference accepts (it parses counters as base-10 int32). */
const MAX_INT32 = 2 ** 31 - 1;

/**
 * The reference's `GetMulti` of a request's keys: one batch per connection, all at once. A node that fails
 * or times out is logged (`Error multi-getting memcache keys ([k1 k2]): …`, at most once a second, as
 * every line of the memcached store) and its keys read as absent,
 * so the decision fails open as the reference's does; the other nodes' values are still used. A value that
 * is not a base-10 int32 reads as 0 (logged), as in the reference.
 */
export async function readCounters(
  nodes: MemcachedNodes,
  keys: readonly string[],
  stats: MemcacheStats,
  errors: StoreThrottledLog,
): Promise<CountersRead> {
  stats.keysRequested.add(keys.length);
  const batches = new Map<MemcachedConnection, string[]>();
  let failure: Error | undefined;
  for (const key of new Set(keys)) {
    const connection = nodes.connectionFor(key);
    if (connection === undefined) failure = new Error("memcache: no servers configured or available");
    else {
      const batch = batches.get(connection);
      if (batch === undefined) batches.set(connection, [key]);
      else batch.push(key);
    }
  }
  const answers = await Promise.allSettled(
    [...batches].map(([connection, batch]) => connection.getMulti(batch)),
  );
  const values = new Map<string, number>();
  for (const answer of answers) {
    if (answer.status === "rejected") failure ??= answer.reason as Error;
    else for (const [key, raw] of answer.value) values.set(key, counterValue(raw, errors));
  }
  if (failure === undefined) {
    stats.multigetSuccess.add(1);
    stats.keysFound.add(values.size);
  } else {
    stats.multigetError.add(1);
    const reason = failure;
    errors.error(
      "memcache multiget",
      () => `Error multi-getting memcache keys ([${keys.join(" ")}]): ${messageOf(reason)}`,
    );
  }
  return { values, ok: failure === undefined, failure };
}

function counterValue(raw: string, errors: StoreThrottledLog): number {
  if (/^\+?\d{1,10}$/.test(raw)) {
    const value = Number(raw);
    if (value <= MAX_INT32) return value;
  }
  errors.error("memcache value", () => `Unexpected non-numeric value in memcached: ${JSON.stringify(raw)}`);
  return 0;
}
