import { promises as dns } from "node:dns";
import type { ConnectionOptions } from "node:tls";
import type { FixedOperation } from "../../engine/algorithms/counter-operation.js";
import type {
  CounterIncrement,
  CounterStore,
  HealthListener,
  StoreSpanDescription,
} from "../../engine/counter-store.js";
import { BackendError, InvalidArgumentError, messageOf } from "../../errors.js";
import { clientReasonOf } from "../client-reason.js";
import { OutageLog } from "../outage-log.js";
import type { StoreLog, StoreThrottledLog } from "../store-context.js";
import { endpointsFromSrv, type MemcachedEndpoint, type SrvRecord } from "./memcached-address.js";
import { MemcachedConnection } from "./memcached-connection.js";
import { BackgroundIncrements, type MemcacheStats } from "./memcached-increments.js";
import { memcachedKeyProblem } from "./memcached-key.js";
import { MemcachedNodes } from "./memcached-nodes.js";
import { readCounters } from "./memcached-read.js";
import { type MemcachedStartupOptions, retryUntilConnected } from "./memcached-startup.js";

export type { MemcacheStats } from "./memcached-increments.js";

const NOT_COUNTED = { add() {} };
/** A read's multi-get stats when nothing may be counted (`read`). */
const UNCOUNTED_READ_STATS: MemcacheStats = {
  multigetSuccess: NOT_COUNTED,
  multigetError: NOT_COUNTED,
  incrementSuccess: NOT_COUNTED,
  incrementMiss: NOT_COUNTED,
  incrementError: NOT_COUNTED,
  addSuccess: NOT_COUNTED,
  addError: NOT_COUNTED,
  addNotStored: NOT_COUNTED,
  keysRequested: NOT_COUNTED,
  keysFound: NOT_COUNTED,
};

/** Where the nodes come from: MEMCACHE_HOST_PORT, or MEMCACHE_SRV re-resolved every `refreshMs` (0: never). */
export type MemcachedServers =
  | { readonly endpoints: readonly MemcachedEndpoint[] }
  | { readonly srv: string; readonly refreshMs: number };

/** Everything the memcached backend needs, from MEMCACHE_* settings. */
export interface MemcachedStoreOptions {
  readonly servers: MemcachedServers;
  /** MEMCACHE_MAX_IDLE_CONNS: connections per node (below 1: 2). */
  readonly connectionsPerNode: number;
  /** Node TLS options (MEMCACHE_TLS*), or undefined for plain TCP. */
  readonly tls: ConnectionOptions | undefined;
  /** Bound on each memcached operation, connecting included, in ms (the reference: gomemcache's 100 ms). */
  readonly timeoutMs: number;
  readonly startup: MemcachedStartupOptions;
  readonly stats: MemcacheStats;
  readonly log: StoreLog;
  /**
   * The daemon's rate-limited log: the reference's per-request error lines, and each node's
   * `connection lost` / `reconnected` lines.
   */
  readonly throttledLog: StoreThrottledLog;
  /**
   * The reference's behaviour when a node cannot be read: its counters read as 0 and the decision fails
   * open (true, the default). False fails the call with a `BackendError` instead, so that
   * BACKEND_FAILURE_MODE and the circuit breaker answer it (docs/outages.md).
   */
  readonly failOpen?: boolean;
  /** Milliseconds since the epoch, for absolute expiry times; injectable for tests. */
  readonly nowMs?: () => number;
  /** SRV lookup (default: the system resolver's); injectable for tests. */
  readonly resolveSrv?: (name: string) => Promise<SrvRecord[]>;
}

/**
 * `BACKEND_TYPE=memcache`, as the reference: one multi-get per request (the answers come from the values
 * read plus the request's hits), then the counting in the background. While memcached is away or slow,
 * values it did not give count as 0 — decisions fail open — within `timeoutMs`.
 *
 * Two refinements that keep its commands and keys: several descriptors of one request with the same key
 * see each other's hits (as on Redis), and a read of a key this replica is still creating waits for that
 * creation (at most a few round trips). With a key's operations on one connection, sequential requests to
 * one replica are then answered exactly; only requests in flight at the same time (and other replicas'
 * hits not yet landed) can be answered from a value that is behind — the reference's documented window.
 */
export class MemcachedStore implements CounterStore {
  readonly name = "memcache";
  /** The reference ignores STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT with memcached. */
  readonly capabilities = {
    readsWithoutCounting: false,
    reservations: false,
    algorithms: ["fixed_window"] as const,
    remote: true,
  };
  readonly #options: MemcachedStoreOptions;
  readonly #nodes: MemcachedNodes;
  /** Per node label: connections answering, and the node's loss and recovery lines. */
  readonly #nodeStates = new Map<string, { answering: number; outage: OutageLog }>();
  readonly #background: BackgroundIncrements;
  readonly #listeners: HealthListener[] = [];
  readonly #abort = new AbortController();
  #refreshTimer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  #healthy = false;

  constructor(options: MemcachedStoreOptions) {
    this.#options = options;
    this.#background = new BackgroundIncrements(
      options.stats,
      options.throttledLog,
      options.nowMs ?? Date.now,
    );
    this.#nodes = new MemcachedNodes({
      connectionsPerNode: options.connectionsPerNode,
      connect: (endpoint) =>
        new MemcachedConnection({
          endpoint,
          tls: options.tls,
          timeoutMs: options.timeoutMs,
          onStateChange: (up, reason) => this.#connectionChanged(endpoint.label, up, reason),
        }),
    });
  }

  /** The nodes' labels, in sharding order. */
  get nodeLabels(): string[] {
    return this.#nodes.list.map((node) => node.label);
  }

  /**
   * Resolves the nodes, then waits (retrying with backoff) until one of them answers; healthy from then on
   * (the generic `backend` health component). With MEMCACHE_SRV_REFRESH, the SRV name is looked up again
   * periodically.
   */
  async start(): Promise<void> {
    const { servers, startup, log } = this.#options;
    const what = () =>
      "srv" in servers ? `SRV ${servers.srv} (${this.nodeLabels.join(",")})` : this.nodeLabels.join(",");
    await retryUntilConnected(
      async () => {
        await this.refreshNodes();
        await this.#probe();
      },
      what,
      startup,
      log,
      this.#abort.signal,
    );
    if (this.#abort.signal.aborted) return;
    if ("srv" in servers && servers.refreshMs > 0) {
      this.#refreshTimer = setInterval(() => {
        this.refreshNodes().catch((error: unknown) =>
          log.warn(`failed to refresh memcache hosts from SRV ${servers.srv}: ${messageOf(error)}`),
        );
      }, servers.refreshMs);
      this.#refreshTimer.unref();
    }
    this.#setHealthy(true);
  }

  /**
   * Sets the node list: the configured one, or the SRV answer (sorted as the reference sorts it). One lookup
   * at a time; a lookup that ends after {@link close} changes nothing.
   */
  refreshNodes(): Promise<void> {
    this.#refreshing ??= this.#lookUpNodes().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #lookUpNodes(): Promise<void> {
    const { servers, log } = this.#options;
    if (!("srv" in servers)) {
      this.#nodes.replace(servers.endpoints);
      return;
    }
    const records = await (this.#options.resolveSrv ?? ((name) => dns.resolveSrv(name)))(servers.srv);
    if (this.#abort.signal.aborted) return;
    if (records.length === 0) throw new Error(`SRV ${servers.srv} has no records`);
    if (this.#nodes.replace(endpointsFromSrv(records))) {
      log.info(`memcache nodes from SRV ${servers.srv}: ${this.nodeLabels.join(",")}`);
      // A node dropped from the list has its connections closed (they report nothing more).
      const listed = new Set(this.nodeLabels);
      for (const label of this.#nodeStates.keys()) if (!listed.has(label)) this.#nodeStates.delete(label);
    }
  }

  /** Reads, answers with each counter after the request's hits, and counts in the background. */
  increment(increments: readonly CounterIncrement[]): Promise<number[]> {
    return this.#decide(increments, true);
  }

  /** The reference's span around its multi-get. */
  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription {
    return { name: "Memcached Fetch Execution", attributes: { "keysToGet length": increments.length } };
  }

  /**
   * Current values (0 when absent or unreadable), without counting anything: the reference ignores
   * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT here, so only `POST /explain` reads, and it moves no stat.
   */
  read(increments: readonly CounterIncrement[]): Promise<number[]> {
    return this.#decide(increments, false);
  }

  /** Never called: memcached counts fixed windows only, and only sliding windows release hits. */
  release(): void {}

  /** Resolves once the background increments started so far have been answered (the reference's Flush). */
  settle(): Promise<void> {
    return this.#background.settle();
  }

  onHealthChange(listener: HealthListener): void {
    this.#listeners.push(listener);
    listener(this.#healthy);
  }

  /** Stops start-up and SRV refreshes, lets the background increments finish, closes the connections. */
  async close(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#refreshTimer);
    // Its failure was already reported to whoever asked for it.
    await this.#refreshing?.catch(() => {});
    await this.#background.settle();
    this.#nodes.close();
  }

  async #decide(operations: readonly CounterIncrement[], count: boolean): Promise<number[]> {
    const increments = fixedOnly(operations);
    for (const { key } of increments) {
      const problem = memcachedKeyProblem(key);
      // Refused before anything is sent. (The reference's multi-get fails with ErrMalformedKey and it
      // answers as if every counter were 0; malformed input gets a clear INVALID_ARGUMENT instead.)
      if (problem !== undefined) throw new InvalidArgumentError(problem);
    }
    const keys = increments.map((i) => i.key);
    const creation = this.#background.creationOf(keys);
    if (creation !== undefined) await creation;
    const { values, ok, failure } = await readCounters(
      this.#nodes,
      keys,
      count ? this.#options.stats : UNCOUNTED_READ_STATS,
      this.#options.throttledLog,
    );
    if (!ok && this.#options.failOpen === false) {
      // The failure names the node (`memcache 10.0.0.8:11211: no answer within 100 ms`).
      throw new BackendError(messageOf(failure), {
        cause: failure,
        clientMessage: `memcache: ${clientReasonOf(failure)}`,
      });
    }
    const running = new Map<string, number>();
    const results = increments.map(({ key, hits }) => {
      const after = (running.get(key) ?? values.get(key) ?? 0) + (count ? hits : 0);
      running.set(key, after);
      return after;
    });
    if (count) {
      for (const increment of increments) {
        const absent = ok && !values.has(increment.key);
        this.#background.start(increment, this.#nodes.connectionFor(increment.key), absent);
      }
    }
    return results;
  }

  async #probe(): Promise<void> {
    const nodes = this.#nodes.list;
    const answers = await Promise.allSettled(nodes.map((node) => node.connections[0]!.version()));
    const failures = answers.flatMap((answer, i) =>
      answer.status === "rejected" ? [{ node: nodes[i]!.label, reason: answer.reason as unknown }] : [],
    );
    if (failures.length === nodes.length)
      throw new Error(failures.map((f) => messageOf(f.reason)).join("; "));
    for (const { node, reason } of failures) {
      this.#options.log.warn(`memcache node not answering yet: ${messageOf(reason)}`);
      // Down from now on: the first answer is logged with how long it took.
      this.#nodeState(node).outage.lost(reason);
    }
  }

  #nodeState(label: string): { answering: number; outage: OutageLog } {
    let state = this.#nodeStates.get(label);
    if (state === undefined) {
      const outage = new OutageLog({ name: `memcache ${label}`, log: this.#options.throttledLog });
      state = { answering: 0, outage };
      this.#nodeStates.set(label, state);
    }
    return state;
  }

  /** A node is up while one of its connections answers; its last one failing is a loss. */
  #connectionChanged(label: string, up: boolean, reason: Error | undefined): void {
    const state = this.#nodeState(label);
    state.answering += up ? 1 : -1;
    if (up && state.answering === 1) state.outage.connected();
    if (!up && state.answering === 0) state.outage.lost(reason);
  }

  #setHealthy(healthy: boolean): void {
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    for (const listener of this.#listeners) listener(healthy);
  }
}

/**
 * The operations as fixed-window increments. Rule sets asking memcached for another algorithm are refused
 * when they load, so anything else here is a defect, reported as one rather than miscounted.
 */
function fixedOnly(operations: readonly CounterIncrement[]): readonly FixedOperation[] {
  for (const operation of operations) {
    if (operation.kind !== undefined && operation.kind !== "fixed") {
      throw new Error(`memcache counts fixed windows only, not a ${operation.kind} operation`);
    }
  }
  return operations as readonly FixedOperation[];
}
