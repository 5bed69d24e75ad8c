import { isIP } from "node:net";
import type { FixedOperation, SlidingOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";
import { BackendError } from "../../errors.js";
import { clientReasonOf } from "../client-reason.js";
import { OutageLog } from "../outage-log.js";
import { tlsOptionsFromFiles } from "../tls-files.js";
import { onlyFixed } from "./operation-shapes.js";
import { PipelineBatcher } from "./pipeline-batcher.js";
import { maskRedisUrl, parseRedisAuth, parseRedisTopology } from "./redis-address.js";
import { MAX_IN_FLIGHT, type RedisDeployment, type RedisPoolOptions } from "./redis-deployment.js";
import { openPool, type StartupRetryOptions } from "./redis-startup.js";
import {
  type CounterCallback,
  describeTarget,
  RespConnection,
  type RespConnectionOptions,
} from "./resp-connection.js";
import {
  encodeOperations,
  encodeReleases,
  encodeScriptRetries,
  fillScriptRetries,
  valuesOfReplies,
} from "./resp-operations.js";
import type { RespReply } from "./resp-reply-reader.js";
import { locatePrimary, verifyPrimary } from "./sentinel-primary.js";

/**
 * `size` connections to a single Redis or to a sentinel group's primary. All requests of one event-loop
 * turn go to the same connection and leave in one write; turns take the ready connections in turn.
 */
export class RespConnectionPool implements RedisDeployment {
  readonly label: string;
  /** `redis <masked url>`: how the log names this deployment. */
  readonly #where: string;
  readonly #outage: OutageLog;
  readonly #options: RedisPoolOptions;
  readonly #connectionOptions: Omit<RespConnectionOptions, "reconnect" | "onStateChange">;
  readonly #connections: RespConnection[];
  readonly #ready = new Set<RespConnection>();
  readonly #batcher: PipelineBatcher | undefined;
  readonly #listeners: ((active: number) => void)[] = [];
  readonly #abort = new AbortController();
  #next = 0;
  #turn: RespConnection | undefined;
  #inFlight = 0;

  constructor(options: RedisPoolOptions) {
    this.#options = options;
    this.label = maskRedisUrl(options.endpoint.url);
    this.#where = `${options.name} ${this.label}`;
    this.#outage = new OutageLog({ name: this.#where, log: options.throttledLog });
    this.#connectionOptions = connectionOptionsFor(options);
    this.#connections = Array.from({ length: options.size }, () => {
      const connection: RespConnection = new RespConnection({
        ...this.#connectionOptions,
        reconnect: true,
        onStateChange: (ready, reason) => this.#stateChanged(connection, ready, reason),
      });
      return connection;
    });
    const windowed = options.pipelineWindowMs > 0 || options.pipelineLimit > 0;
    this.#batcher = windowed
      ? new PipelineBatcher(
          (increments) => this.#run(increments, false),
          options.pipelineWindowMs,
          options.pipelineLimit,
        )
      : undefined;
  }

  get active(): number {
    return this.#ready.size;
  }

  onActiveChange(listener: (active: number) => void): void {
    this.#listeners.push(listener);
  }

  async start(retry: StartupRetryOptions): Promise<void> {
    const { size, log } = this.#options;
    await openPool(
      {
        label: this.label,
        size,
        log,
        probe: () => this.#probe(),
        openAll: () => this.#connections.map((connection) => connection.open()),
        active: () => this.#ready.size,
      },
      retry,
      this.#abort.signal,
    );
  }

  increment(increments: readonly CounterIncrement[]): Promise<number[]> {
    if (this.#batcher !== undefined) return this.#guarded(() => this.#batcher!.submit(increments));
    return this.#run(increments, true);
  }

  read(increments: readonly CounterIncrement[]): Promise<number[]> {
    if (!onlyFixed(increments)) return this.#guarded(() => this.#operations(increments, true));
    return this.#send(increments, true, sendReads);
  }

  release(operations: readonly SlidingOperation[]): void {
    if (operations.length === 0) return;
    const commands = encodeReleases(operations);
    this.#send(operations, true, (connection, _, done) =>
      connection.send(commands, operations.length * 2, 2, done),
    ).catch((error: Error) =>
      // Nobody waits for a release: a failure costs the client only hits it was refused anyway.
      this.#options.throttledLog.error(
        "redis release",
        () => `failed to give back refused hits: ${error.message}`,
      ),
    );
  }

  async close(): Promise<void> {
    this.#abort.abort();
    this.#options.stats.cxLocalClose.add(this.#ready.size);
    await Promise.all(this.#connections.map((connection) => connection.close()));
  }

  /** `counted`: whether this call is one request of the in-flight bound (a window's batch is not). */
  #run(increments: readonly CounterIncrement[], counted: boolean): Promise<number[]> {
    if (onlyFixed(increments)) {
      return this.#send(increments as readonly FixedOperation[], counted, sendIncrements);
    }
    return counted
      ? this.#guarded(() => this.#operations(increments, false))
      : this.#operations(increments, false);
  }

  /**
   * A request with sliding windows or token buckets: one round trip, its replies read raw. Bucket
   * operations answered NOSCRIPT (script cache flushed, new server) are sent again with the whole script,
   * and only they: the counters were already counted once.
   */
  async #operations(operations: readonly CounterIncrement[], reading: boolean): Promise<number[]> {
    const { commands, replies } = encodeOperations(operations, reading);
    try {
      const result = valuesOfReplies(operations, await this.#sendRaw(commands, replies), reading);
      const unknown = result.unknownScript;
      if (unknown.length > 0) {
        const retries = encodeScriptRetries(operations, unknown, reading);
        fillScriptRetries(result, await this.#sendRaw(retries.commands, retries.replies), reading);
      }
      return result.values;
    } catch (error) {
      if (error instanceof BackendError) throw error;
      throw this.#failure((error as Error).message, error as Error);
    }
  }

  /** Queues commands on this turn's connection; resolves with every reply, error replies included. */
  #sendRaw(commands: string, replies: number): Promise<RespReply[]> {
    const connection = this.#turnConnection();
    if (connection === undefined) return Promise.reject(this.#noConnection());
    return new Promise((resolve, reject) =>
      connection.sendRaw(commands, replies, (error, raw) =>
        error === undefined ? resolve(raw) : reject(error),
      ),
    );
  }

  /**
   * Queues `operations`' commands on this turn's connection (`queue` writes them); the promise settles with
   * the kept counters. One promise and one callback per request, whatever its number of commands.
   */
  #send<T extends CounterIncrement>(
    operations: readonly T[],
    counted: boolean,
    queue: (connection: RespConnection, operations: readonly T[], done: CounterCallback) => void,
  ): Promise<number[]> {
    if (counted && this.#inFlight >= MAX_IN_FLIGHT) return Promise.reject(this.#tooMany());
    const connection = this.#turnConnection();
    if (connection === undefined) return Promise.reject(this.#noConnection());
    if (counted) this.#inFlight++;
    return new Promise((resolve, reject) => {
      queue(connection, operations, (error, values) => {
        if (counted) this.#inFlight--;
        if (error === undefined) resolve(values);
        else reject(this.#failure(error.message, error));
      });
    });
  }

  /** Counts a request waiting in a pipeline window, then for Redis, against the in-flight bound. */
  async #guarded(work: () => Promise<number[]>): Promise<number[]> {
    if (this.#inFlight >= MAX_IN_FLIGHT) throw this.#tooMany();
    this.#inFlight++;
    try {
      return await work();
    } finally {
      this.#inFlight--;
    }
  }

  /** The connection this event-loop turn writes to: the next ready one, round-robin, kept until the turn ends. */
  #turnConnection(): RespConnection | undefined {
    const current = this.#turn;
    if (current?.ready) return current;
    const count = this.#connections.length;
    for (let tries = 0; tries < count; tries++) {
      const connection = this.#connections[this.#next++ % count]!;
      if (!connection.ready) continue;
      if (current === undefined) setImmediate(() => (this.#turn = undefined));
      this.#turn = connection;
      return connection;
    }
    return undefined;
  }

  #tooMany(): BackendError {
    const text = `${MAX_IN_FLIGHT} requests already waiting for an answer`;
    return new BackendError(`${this.#where}: ${text}`, { clientMessage: `redis: ${text}` });
  }

  #noConnection(): BackendError {
    const reason = this.#connections.map((c) => c.lastError).findLast((e) => e !== undefined);
    if (reason === undefined) return this.#failure("no connection is up", undefined, "not connected");
    return this.#failure(`no connection is up: ${reason.message}`, reason);
  }

  /** A failure: its details (with the deployment's masked address) for the log, its reason for clients. */
  #failure(detail: string, cause: Error | undefined, reason = clientReasonOf(cause)): BackendError {
    return new BackendError(`${this.#where}: ${detail}`, { cause, clientMessage: `redis: ${reason}` });
  }

  /** A throw-away connection that must answer PING with PONG. */
  async #probe(): Promise<void> {
    const probe = new RespConnection({ ...this.#connectionOptions, reconnect: false });
    try {
      await probe.open();
      const reply = await probe.command(["PING"]);
      if (reply !== "PONG") throw new Error(`unexpected PING reply ${JSON.stringify(reply)}`);
    } finally {
      await probe.close();
    }
  }

  #stateChanged(changed: RespConnection, ready: boolean, reason: Error | undefined): void {
    const before = this.#ready.size;
    // Recounted from the connections themselves, which are the truth.
    this.#ready.clear();
    for (const connection of this.#connections) if (connection.ready) this.#ready.add(connection);
    if (ready && this.#ready.size > before) this.#options.stats.cxTotal.add(this.#ready.size - before);
    if (this.#ready.size === before) return;
    this.#options.stats.cxActive.set(this.#ready.size);
    if (this.#ready.size === 0 && !this.#abort.signal.aborted) this.#outage.lost(reason);
    if (before === 0 && this.#ready.size > 0) {
      // After a failover, which server the sentinels named is the news.
      const target = this.#options.endpoint.type === "sentinel" ? changed.target : undefined;
      this.#outage.connected(target ? ` (primary ${describeTarget(target)})` : "");
    }
    for (const listener of this.#listeners) listener(this.#ready.size);
  }
}

/** Connection options for a single Redis (TCP, unix socket, URL credentials) or a sentinel group's primary. */
function connectionOptionsFor(
  options: RedisPoolOptions,
): Omit<RespConnectionOptions, "reconnect" | "onStateChange"> {
  const { endpoint } = options;
  const auth = parseRedisAuth(endpoint.auth);
  const topology = parseRedisTopology(endpoint.type, endpoint.socketType, endpoint.url);
  const tls = endpoint.tls ? tlsOptionsFromFiles(endpoint.tls) : undefined;
  const base = { tls, timeoutMs: endpoint.timeoutMs, username: auth.username, password: auth.password };
  switch (topology.type) {
    case "single": {
      const target = topology.target;
      if ("path" in target) return { ...base, locate: async () => target };
      const withSni = tls && isIP(target.host) === 0 ? { ...tls, servername: target.host } : tls;
      return {
        ...base,
        tls: withSni,
        // Credentials in the URL (`redis://user:pass@host:port`) win over REDIS_AUTH.
        ...(target.password !== undefined ? { username: target.username, password: target.password } : {}),
        locate: async () => ({ host: target.host, port: target.port }),
      };
    }
    case "sentinel": {
      const sentinelAuth = parseRedisAuth(endpoint.sentinelAuth);
      const group = {
        masterName: topology.masterName,
        sentinels: topology.sentinels,
        username: sentinelAuth.username,
        password: sentinelAuth.password,
        tls,
        timeoutMs: endpoint.timeoutMs,
      };
      return { ...base, locate: () => locatePrimary(group), verify: verifyPrimary };
    }
    case "cluster":
      throw new Error("a cluster is served by ClusterConnectionPool");
  }
}

/** The hot path's queueing: INCRBY + EXPIRE per fixed window, written straight into the connection's bytes. */
function sendIncrements(
  connection: RespConnection,
  operations: readonly FixedOperation[],
  done: CounterCallback,
): void {
  connection.sendIncrements(operations, done);
}

/** `GET key` per fixed window, written straight into the connection's bytes. */
function sendReads(
  connection: RespConnection,
  increments: readonly CounterIncrement[],
  done: CounterCallback,
): void {
  connection.sendReads(increments, done);
}
