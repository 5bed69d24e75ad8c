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

/**
 * `INCRBY key hits` + `EXPIRE key ttl` for every increment, as the reference sends them, and the counters
 * after: one pipeline per hash slot, run with bounded parallelism (single and sentinel deployments use
 * resp-commands.ts instead).
 */
export function incrementCounters(
  connection: ClusterConnection,
  increments: readonly CounterIncrement[],
  options: CommandRunOptions,
): Promise<number[]> {
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
): Promise<number[]> {
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
): Promise<number[]> {
  requireReady(connection, options);
  const values = new Array<number>(increments.length);
  const groups = bySlot(increments);
  const runGroup = async (indexes: number[]) => {
    const pipeline = connection.pipeline();
    for (const i of indexes) append(pipeline, increments[i]!);
    const results = await withTimeout(pipeline.exec(), options);
    indexes.forEach((i, n) => {
      const [error, value] = results?.[n * commandsPerKey] ?? [new Error("no reply"), null];
      const failure =
        error ?? results?.slice(n * commandsPerKey, (n + 1) * commandsPerKey).find(([e]) => e)?.[0];
      if (failure) throw failure;
      values[i] = value === null ? 0 : Number(value);
    });
  };
  try {
    await forEachBounded(groups, Math.max(1, options.clusterParallelism), runGroup);
  } catch (error) {
    throw clusterFailure(error, options);
  }
  return values;
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
function bySlot(increments: readonly CounterIncrement[]): number[][] {
  const groups = new Map<number, number[]>();
  increments.forEach(({ key }, i) => {
    const slot = calculateSlot(key);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return [...groups.values()];
}

/** Runs `work` over `items` with at most `limit` in flight; the first failure rejects. */
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
