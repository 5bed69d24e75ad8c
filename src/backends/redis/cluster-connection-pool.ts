import type { SlidingOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";
import { BackendError, messageOf } from "../../errors.js";
import { OutageLog } from "../outage-log.js";
import { incrementCounters, readCounters } from "./cluster-commands.js";
import { type ClusterConnection, clusterReasonOf, createClusterConnection } from "./cluster-connection.js";
import { applyClusterOperations, releaseClusterHits } from "./cluster-operations.js";
import { onlyFixed } from "./operation-shapes.js";
import { PipelineBatcher } from "./pipeline-batcher.js";
import { maskRedisUrl } from "./redis-address.js";
import { MAX_IN_FLIGHT, type RedisDeployment, type RedisPoolOptions } from "./redis-deployment.js";
import { openPool, type StartupRetryOptions } from "./redis-startup.js";

/**
 * `size` ioredis cluster clients to one Redis Cluster (REDIS_TYPE=cluster), used round-robin (skipping any
 * that are down). A request's commands are grouped by hash slot, one pipeline per group; with a pipeline
 * window, concurrent requests share them.
 */
export class ClusterConnectionPool implements RedisDeployment {
  readonly label: string;
  /** `redis <masked url>`: how the log names this deployment. */
  readonly #where: string;
  readonly #outage: OutageLog;
  readonly #options: RedisPoolOptions;
  readonly #connections: ClusterConnection[];
  readonly #ready = new Set<ClusterConnection>();
  readonly #lastErrors = new Map<ClusterConnection, Error>();
  readonly #batcher: PipelineBatcher | undefined;
  readonly #listeners: ((active: number) => void)[] = [];
  readonly #abort = new AbortController();
  #next = 0;
  #inFlight = 0;

  constructor(options: RedisPoolOptions) {
    this.#options = options;
    this.label = maskRedisUrl(options.endpoint.url);
    this.#where = `${options.name} ${this.label}`;
    this.#outage = new OutageLog({ name: this.#where, log: options.throttledLog });
    this.#connections = Array.from({ length: options.size }, () => this.#connect());
    const windowed = options.pipelineWindowMs > 0 || options.pipelineLimit > 0;
    this.#batcher = windowed
      ? new PipelineBatcher(
          (increments) => this.#run(increments),
          options.pipelineWindowMs,
          options.pipelineLimit,
        )
      : undefined;
  }

  /** Connections up right now. */
  get active(): number {
    return this.#ready.size;
  }

  /** Called whenever the number of connections up changes. */
  onActiveChange(listener: (active: number) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Waits (with the start-up retry policy) until the deployment answers PING, then opens the pool's
   * connections; any that fail keep retrying in the background.
   */
  async start(retry: StartupRetryOptions): Promise<void> {
    const { endpoint, size, log } = this.#options;
    await openPool(
      {
        label: this.label,
        size,
        log,
        probe: () => pingOnce(endpoint),
        openAll: () => this.#connections.map((connection) => connection.connect()),
        active: () => this.#ready.size,
      },
      retry,
      this.#abort.signal,
    );
  }

  increment(increments: readonly CounterIncrement[]): Promise<number[]> {
    return this.#bounded(() => (this.#batcher ? this.#batcher.submit(increments) : this.#run(increments)));
  }

  read(increments: readonly CounterIncrement[]): Promise<number[]> {
    if (!onlyFixed(increments)) {
      return this.#bounded(() => applyClusterOperations(this.#pick(), increments, true, this.#runOptions()));
    }
    return this.#bounded(() => readCounters(this.#pick(), increments, this.#runOptions()));
  }

  release(operations: readonly SlidingOperation[]): void {
    if (operations.length === 0) return;
    this.#bounded(async () => {
      await releaseClusterHits(this.#pick(), operations, this.#runOptions());
      return [];
    }).catch((error: Error) =>
      // Nobody waits for a release: a failure costs the client only hits it was refused anyway.
      this.#options.throttledLog.error(
        "redis release",
        () => `failed to give back refused hits: ${error.message}`,
      ),
    );
  }

  /**
   * Refuses work beyond MAX_IN_FLIGHT requests: a Redis that is connected but not answering would otherwise
   * let waiting commands pile up until REDIS_TIMEOUT frees them (in-flight work is bounded).
   */
  async #bounded(work: () => Promise<number[]>): Promise<number[]> {
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      const text = `${MAX_IN_FLIGHT} requests already waiting for an answer`;
      throw new BackendError(`${this.#where}: ${text}`, { clientMessage: `redis: ${text}` });
    }
    this.#inFlight++;
    try {
      return await work();
    } finally {
      this.#inFlight--;
    }
  }

  /**
   * Closes every connection (QUIT, or a hard close after a second) and resolves once all have ended. A
   * connection waiting to reconnect has no socket left to close, and ioredis never reports its end: it
   * is only told to stop reconnecting.
   */
  async close(): Promise<void> {
    this.#abort.abort();
    await Promise.all(this.#connections.map((connection) => this.#closeOne(connection)));
  }

  #closeOne(connection: ClusterConnection): Promise<void> {
    if (this.#ready.has(connection)) this.#options.stats.cxLocalClose.add(1);
    if (connection.status === "end") return Promise.resolve();
    if (connection.status === "reconnecting") {
      connection.disconnect();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const hard = setTimeout(() => {
        connection.disconnect();
        resolve();
      }, 1000);
      connection.once("end", () => {
        clearTimeout(hard);
        resolve();
      });
      connection.quit().catch(() => connection.disconnect());
    });
  }

  #run(increments: readonly CounterIncrement[]): Promise<number[]> {
    if (!onlyFixed(increments))
      return applyClusterOperations(this.#pick(), increments, false, this.#runOptions());
    return incrementCounters(this.#pick(), increments, this.#runOptions());
  }

  #runOptions() {
    const { endpoint, clusterParallelism, size } = this.#options;
    return {
      where: this.#where,
      timeoutMs: endpoint.timeoutMs,
      clusterParallelism: clusterParallelism === 0 ? size : Math.min(clusterParallelism, size),
    };
  }

  /** The next ready connection, round-robin; a connection that is down is skipped. */
  #pick(): ClusterConnection {
    const count = this.#connections.length;
    for (let tries = 0; tries < count; tries++) {
      const connection = this.#connections[this.#next++ % count]!;
      if (connection.status === "ready") return connection;
    }
    const reason = [...this.#lastErrors.values()].at(-1);
    throw new BackendError(`${this.#where}: no connection is up${reason ? `: ${reason.message}` : ""}`, {
      cause: reason,
      clientMessage: `redis: ${reason ? clusterReasonOf(reason) : "not connected"}`,
    });
  }

  #connect(): ClusterConnection {
    const connection = createClusterConnection(this.#options.endpoint);
    const { stats } = this.#options;
    connection.on("ready", () => {
      this.#lastErrors.delete(connection);
      stats.cxTotal.add(1);
      this.#ready.add(connection);
      if (this.#ready.size === 1) this.#outage.connected();
      this.#activeChanged();
    });
    const down = () => {
      if (!this.#ready.delete(connection)) return;
      if (this.#ready.size === 0 && !this.#abort.signal.aborted) {
        this.#outage.lost(this.#lastErrors.get(connection) ?? "connection closed by Redis");
      }
      this.#activeChanged();
    };
    connection.on("close", down);
    connection.on("end", down);
    // Kept to explain failures (ioredis's own rejections often only say "Connection is closed."); a node's
    // socket errors come as "node error".
    connection.on("error", (error: Error) => this.#lastErrors.set(connection, error));
    connection.on("node error", (error: Error) => this.#lastErrors.set(connection, error));
    return connection;
  }

  #activeChanged(): void {
    this.#options.stats.cxActive.set(this.#ready.size);
    for (const listener of this.#listeners) listener(this.#ready.size);
  }
}

/** One throw-away cluster client that must answer PING with PONG. */
async function pingOnce(endpoint: RedisPoolOptions["endpoint"]): Promise<void> {
  const probe = createClusterConnection(endpoint, { reconnect: false });
  let socketError: Error | undefined;
  probe.on("error", (error: Error) => (socketError = error));
  try {
    await probe.connect();
    const reply = await probe.ping();
    if (reply !== "PONG") throw new Error(`unexpected PING reply ${JSON.stringify(reply)}`);
    await probe.quit().catch(() => probe.disconnect());
  } catch (caught) {
    // ioredis rejects with "Connection is closed."; the socket's own error says why, possibly a tick later.
    await new Promise((resolve) => setImmediate(resolve));
    probe.disconnect();
    throw new Error(messageOf(socketError ?? caught), { cause: caught });
  }
}
