import calculateSlot from "cluster-key-slot";
import type { SlidingOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";
import { BackendError, BackendUnavailableError, messageOf } from "../../errors.js";
import type { Admission } from "../circuit-breaker.js";
import type { NodeBreakers } from "../node-breakers.js";
import { OutageLog } from "../outage-log.js";
import {
  type ClusterOutcome,
  clusterFailure,
  incrementCounters,
  type NodeFailure,
  primaryOf,
  readCounters,
  requireReady,
  valuesOf,
} from "./cluster-commands.js";
import { type ClusterConnection, clusterReasonOf, createClusterConnection } from "./cluster-connection.js";
import { ClusterNodeHealth } from "./cluster-node-health.js";
import { applyClusterOperations, releaseClusterHits } from "./cluster-operations.js";
import { onlyFixed } from "./operation-shapes.js";
import { AnswerBatcher } from "./pipeline-batcher.js";
import { maskRedisUrl } from "./redis-address.js";
import { MAX_IN_FLIGHT, type RedisDeployment, type RedisPoolOptions } from "./redis-deployment.js";
import { openPool, type StartupRetryOptions } from "./redis-startup.js";

/** How long a probe's decision waits for its node before the failure mode answers it (as guarded-counter-store.ts). */
const PROBE_WAIT_MS = 100;

/**
 * `size` ioredis cluster clients to one Redis Cluster (REDIS_TYPE=cluster), used round-robin (skipping any
 * that are down). A request's commands are grouped by hash slot, one pipeline per group; with a pipeline
 * window, concurrent requests share them. Failures stay with their node (docs/outages.md "Redis
 * Cluster"): a failed group fails only the requests with a command in it, each primary has its own
 * circuit breaker (`nodeBreakers`, when given), and a lost node is logged and makes the pool read the
 * slot map again until its slots are served.
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
  readonly #batcher: AnswerBatcher<ClusterOutcome> | undefined;
  readonly #breakers: NodeBreakers | undefined;
  readonly #health: ClusterNodeHealth;
  readonly #listeners: ((active: number) => void)[] = [];
  readonly #abort = new AbortController();
  #next = 0;
  #inFlight = 0;

  constructor(options: RedisPoolOptions) {
    this.#options = options;
    this.label = maskRedisUrl(options.endpoint.url);
    this.#where = `${options.name} ${this.label}`;
    this.#outage = new OutageLog({ name: this.#where, log: options.throttledLog });
    this.#breakers = options.nodeBreakers;
    this.#health = new ClusterNodeHealth({
      where: this.#where,
      log: options.throttledLog,
      refreshSlots: () => {
        for (const connection of this.#connections) {
          if (connection.status === "ready") connection.refreshSlotsCache();
        }
      },
    });
    this.#connections = Array.from({ length: options.size }, () => this.#connect());
    const windowed = options.pipelineWindowMs > 0 || options.pipelineLimit > 0;
    this.#batcher = windowed
      ? new AnswerBatcher(
          // Async, so that no connection being up rejects the flush instead of throwing out of its timer.
          async (increments) => this.#run(this.#pick(), increments, false),
          options.pipelineWindowMs,
          options.pipelineLimit,
          sliceOutcome,
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
    return this.#bounded(() => this.#request(increments, false));
  }

  read(increments: readonly CounterIncrement[]): Promise<number[]> {
    return this.#bounded(() => this.#request(increments, true));
  }

  /** Refused hits whose node's breaker is open stay there: that node is away. */
  release(operations: readonly SlidingOperation[]): void {
    const breakers = this.#breakers;
    let sent = operations;
    if (breakers !== undefined && operations.length > 0) {
      const connection = this.#connections.find((c) => c.status === "ready");
      if (connection !== undefined)
        sent = operations.filter((o) => !breakers.isOpen(primaryOf(connection, calculateSlot(o.key))));
    }
    if (sent.length === 0) return;
    this.#bounded(async () => {
      await releaseClusterHits(this.#pick(), sent, this.#runOptions());
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
    this.#health.close();
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

  /**
   * One request: admitted by the breaker of every primary its keys live on (a refusal fails it at once,
   * nothing sent), run (in the pipeline window's flush, when there is one; reads never wait for one), then
   * each node's outcome goes to its breaker and to the node health. Any failed command fails the request
   * with that failure; the request's commands to healthy nodes have still run.
   */
  async #request(increments: readonly CounterIncrement[], reading: boolean): Promise<number[]> {
    const connection = this.#pick();
    const options = this.#runOptions();
    requireReady(connection, options);
    const breakers = this.#breakers;
    const nodes = breakers ? nodesOf(connection, increments) : [];
    const admissions = breakers ? breakers.admit(nodes) : [];
    const pending =
      this.#batcher && !reading
        ? this.#batcher.submit(increments)
        : this.#run(connection, increments, reading);
    // Settled on the run's own outcome, even when a probe's decision stopped waiting for it.
    const settled = breakers
      ? pending.then(
          (outcome) => {
            settleBreakers(breakers, nodes, admissions, outcome.failures);
            return outcome;
          },
          (error: unknown) => {
            breakers.settle(nodes, admissions, () => error);
            throw error;
          },
        )
      : pending;
    let outcome: ClusterOutcome;
    try {
      outcome = await (admissions.includes("probe") ? boundedProbe(settled) : settled);
    } catch (error) {
      throw clusterFailure(error, options);
    }
    return valuesOf(outcome, options);
  }

  /** Runs `increments` on `connection`; every node's outcome goes to the node health. */
  async #run(
    connection: ClusterConnection,
    increments: readonly CounterIncrement[],
    reading: boolean,
  ): Promise<ClusterOutcome> {
    const options = this.#runOptions();
    const outcome = onlyFixed(increments)
      ? await (reading ? readCounters : incrementCounters)(connection, increments, options)
      : await applyClusterOperations(connection, increments, reading, options);
    const failed = new Set<string>();
    for (const { node, error } of outcome.failures.values()) {
      failed.add(node);
      this.#health.failed(node, error);
    }
    const lost = this.#health.lost;
    if (lost.length > 0) {
      const nodes = nodesOf(connection, increments);
      for (const node of lost) if (!failed.has(node) && nodes.includes(node)) this.#health.answered(node);
    }
    return outcome;
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
    connection.on("refresh", () => this.#slotsRefreshed(connection));
    // Kept to explain failures (ioredis's own rejections often only say "Connection is closed."); a node's
    // socket errors come as "node error".
    connection.on("error", (error: Error) => this.#lastErrors.set(connection, error));
    connection.on("node error", (error: Error) => this.#lastErrors.set(connection, error));
    return connection;
  }

  /**
   * `refreshed` read the slot map again. A node is gone from the map only once no ready client's map names
   * it as a primary: until then some requests would still be sent (and admitted) to it. A client whose map
   * still names a lost node that `refreshed`'s no longer does reads its map again at once.
   */
  #slotsRefreshed(refreshed: ClusterConnection): void {
    const fresh = primariesOf(refreshed);
    const replaced = this.#health.lost.filter((node) => !fresh.has(node));
    const primaries = new Set<string>();
    for (const connection of this.#connections) {
      if (connection.status !== "ready") continue;
      const mine = connection === refreshed ? fresh : primariesOf(connection);
      if (replaced.some((node) => mine.has(node))) connection.refreshSlotsCache();
      for (const node of mine) primaries.add(node);
    }
    this.#health.refreshed(primaries);
    for (const node of this.#breakers?.nodes ?? []) if (!primaries.has(node)) this.#breakers?.forget(node);
  }

  #activeChanged(): void {
    this.#options.stats.cxActive.set(this.#ready.size);
    for (const listener of this.#listeners) listener(this.#ready.size);
  }
}

/** The primaries of `connection`'s slot map. */
function primariesOf(connection: ClusterConnection): Set<string> {
  const primaries = new Set<string>();
  for (const owners of connection.slots) if (owners?.[0] !== undefined) primaries.add(owners[0]);
  return primaries;
}

/** The distinct primaries `increments`' keys live on (a sliding window's previous key too), by `connection`'s slot map. */
function nodesOf(connection: ClusterConnection, increments: readonly CounterIncrement[]): string[] {
  const nodes: string[] = [];
  const add = (key: string) => {
    const node = primaryOf(connection, calculateSlot(key));
    if (!nodes.includes(node)) nodes.push(node);
  };
  for (const increment of increments) {
    add(increment.key);
    if (increment.kind === "sliding") add(increment.previousKey);
  }
  return nodes;
}

/** Each admitted node's outcome to its breaker: failed with the first failure there, else answered. */
function settleBreakers(
  breakers: NodeBreakers,
  nodes: readonly string[],
  admissions: readonly Admission[],
  failures: ReadonlyMap<number, NodeFailure>,
): void {
  if (failures.size === 0) {
    breakers.settle(nodes, admissions, () => undefined);
    return;
  }
  const byNode = new Map<string, unknown>();
  for (const { node, error } of failures.values()) if (!byNode.has(node)) byNode.set(node, error);
  breakers.settle(nodes, admissions, (node) => byNode.get(node));
}

/** One request's part of a flush's outcome, its operations' failures renumbered from 0. */
function sliceOutcome(
  outcome: ClusterOutcome,
  part: { firstOperation: number; operations: number; firstResult: number; results: number },
): ClusterOutcome {
  const values = outcome.values.slice(part.firstResult, part.firstResult + part.results);
  if (outcome.failures.size === 0) return { values, failures: outcome.failures };
  const failures = new Map<number, NodeFailure>();
  for (const [index, failure] of outcome.failures) {
    const local = index - part.firstOperation;
    if (local >= 0 && local < part.operations) failures.set(local, failure);
  }
  return { values, failures };
}

/**
 * A probe's decision waits at most PROBE_WAIT_MS for its node: past that it fails like a refused call (the
 * failure mode answers it) while the probe goes on, its outcome still closing or reopening the breaker.
 */
function boundedProbe(settled: Promise<ClusterOutcome>): Promise<ClusterOutcome> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new BackendUnavailableError(
            "redis",
            "breaker_open",
            `its probe has had no answer for ${PROBE_WAIT_MS} ms`,
          ),
        ),
      PROBE_WAIT_MS,
    );
    settled.then(
      (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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
