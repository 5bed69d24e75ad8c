import calculateSlot from "cluster-key-slot";
import type { ChainableCommander } from "ioredis";
import type { FixedOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";
import { BackendError } from "../../errors.js";
import { type ClusterConnection, clusterReasonOf } from "./cluster-connection.js";

/** How to run one batch of counter commands on one cluster client. */
export interface CommandRunOptions {
  /** `redis <masked url>`, for the log's error messages. */
  readonly where: string;
  readonly timeoutMs: number;
  /** Slot groups run at once (1 = one after another). */
  readonly clusterParallelism: number;
}

/** Where a command group went (its slot's primary, `host:port`, as the client's slot map says) and why it failed. */
export interface NodeFailure {
  readonly node: string;
  readonly error: unknown;
}

/**
 * What one run did: the flat values (`resultCountOf` per operation), and for each operation with a failed
 * command, by operation index, where and why (empty: every command answered). A failed slot group fails
 * only its own operations; the other groups still run and answer (docs/outages.md "Redis Cluster").
 */
export interface ClusterOutcome {
  readonly values: number[];
  readonly failures: ReadonlyMap<number, NodeFailure>;
}

/**
 * `INCRBY key hits` + `EXPIRE key ttl` for every increment, as the reference sends them, and the counters
 * after: one pipeline per hash slot, run with bounded parallelism (single and sentinel deployments use
 * resp-commands.ts instead).
 */
export function incrementCounters(
  connection: ClusterConnection,
  increments: readonly CounterIncrement[],
  options: CommandRunOptions,
): Promise<ClusterOutcome> {
  return runGrouped(
    connection,
    increments,
    options,
    (pipeline, increment) => {
      const { key, hits, ttlSeconds } = increment as FixedOperation;
      pipeline.incrby(key, hits).expire(key, ttlSeconds);
    },
    2,
  );
}

/** `GET` for every key (absent = 0), for STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT. */
export function readCounters(
  connection: ClusterConnection,
  increments: readonly CounterIncrement[],
  options: CommandRunOptions,
): Promise<ClusterOutcome> {
  return runGrouped(
    connection,
    increments,
    options,
    (pipeline, { key }) => {
      pipeline.get(key);
    },
    1,
  );
}

type Append = (pipeline: ChainableCommander, increment: CounterIncrement) => void;

async function runGrouped(
  connection: ClusterConnection,
  increments: readonly CounterIncrement[],
  options: CommandRunOptions,
  append: Append,
  commandsPerKey: number,
): Promise<ClusterOutcome> {
  requireReady(connection, options);
  const values = new Array<number>(increments.length);
  const failures = new Map<number, NodeFailure>();
  const runGroup = async ([slot, indexes]: [number, number[]]) => {
    const node = primaryOf(connection, slot);
    let results: [Error | null, unknown][] | null;
    try {
      const pipeline = connection.pipeline();
      for (const i of indexes) append(pipeline, increments[i]!);
      results = await withTimeout(pipeline.exec(), options);
    } catch (error) {
      for (const i of indexes) failures.set(i, { node, error });
      return;
    }
    indexes.forEach((i, n) => {
      const replies = results?.slice(n * commandsPerKey, (n + 1) * commandsPerKey) ?? [];
      const failure = replies.length < commandsPerKey ? new Error("no reply") : replies.find(([e]) => e)?.[0];
      if (failure) failures.set(i, { node, error: failure });
      else {
        const value = replies[0]![1];
        values[i] = value === null ? 0 : Number(value);
      }
    });
  };
  await forEachBounded([...bySlot(increments)], Math.max(1, options.clusterParallelism), runGroup);
  return { values, failures };
}

/** The `host:port` of the primary serving `slot` in `connection`'s slot map (`?` while it knows none). */
export function primaryOf(connection: ClusterConnection, slot: number): string {
  return connection.slots[slot]?.[0] ?? "?";
}

/**
 * The values of `outcome`, or its first failure as a `BackendError` (a call not batched with others fails
 * as a whole when any of its commands failed).
 */
export function valuesOf(outcome: ClusterOutcome, options: CommandRunOptions): number[] {
  for (const { error } of outcome.failures.values()) throw clusterFailure(error, options);
  return outcome.values;
}

/** Fails at once unless the client is connected: commands never wait in an offline queue. */
export function requireReady(connection: ClusterConnection, options: CommandRunOptions): void {
  if (connection.status !== "ready") {
    throw new BackendError(`${options.where}: not connected (${connection.status})`, {
      clientMessage: "redis: not connected",
    });
  }
}

/** Any failure of a cluster call as a `BackendError` (kept as is when it already is one). */
export function clusterFailure(error: unknown, options: CommandRunOptions): BackendError {
  if (error instanceof BackendError) return error;
  const message = (error as Error).message;
  // ioredis's commandTimeout (set to the same bound) may fire before ours: one wording for both.
  const timedOut = message === "Command timed out";
  const reason = timedOut ? `no answer within ${options.timeoutMs} ms` : message;
  return new BackendError(`${options.where}: ${reason}`, {
    cause: error,
    clientMessage: `redis: ${timedOut ? reason : clusterReasonOf(error)}`,
  });
}

/** Indexes of `increments` grouped by hash slot, groups in first-occurrence order. */
function bySlot(increments: readonly CounterIncrement[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  increments.forEach(({ key }, i) => {
    const slot = calculateSlot(key);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return groups;
}

/** Runs `work` over `items` with at most `limit` in flight (`work` handles its own failures). */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  if (items.length === 1) return work(items[0]!);
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export function withTimeout<T>(promise: Promise<T>, options: CommandRunOptions): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const text = `no answer within ${options.timeoutMs} ms`;
    timer = setTimeout(
      () => reject(new BackendError(`${options.where}: ${text}`, { clientMessage: `redis: ${text}` })),
      options.timeoutMs,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
