import { resultCountOf, type SlidingOperation } from "../../engine/algorithms/counter-operation.js";
import { LIMIT_ALGORITHMS } from "../../engine/algorithms/registry.js";
import type {
  CounterIncrement,
  CounterStore,
  HealthListener,
  StoreSpanDescription,
} from "../../engine/counter-store.js";
import { ClusterConnectionPool } from "./cluster-connection-pool.js";
import { commandsOf } from "./operation-shapes.js";
import type { RedisDeployment, RedisPoolOptions } from "./redis-deployment.js";
import type { StartupRetryOptions } from "./redis-startup.js";
import { RespConnectionPool } from "./resp-connection-pool.js";

/** Everything the Redis backend needs, from REDIS_* settings. */
export interface RedisStoreOptions {
  readonly main: RedisPoolOptions;
  /** REDIS_PERSECOND: a separate deployment for limits whose unit is SECOND. */
  readonly perSecond: RedisPoolOptions | undefined;
  readonly startup: StartupRetryOptions;
  /** REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: unhealthy while a pool has no connection up. */
  readonly healthCheckActiveConnection: boolean;
}

/**
 * `BACKEND_TYPE=redis`: counters in Redis with the reference's keys and commands (INCRBY + EXPIRE), one
 * round trip per request and deployment, failing fast while Redis is away and resuming by itself. Sliding
 * windows add a GET of the previous window; token buckets run the script of token-bucket-script.ts.
 */
export class RedisStore implements CounterStore {
  readonly name = "redis";
  readonly capabilities = {
    readsWithoutCounting: true,
    reservations: true,
    // Every algorithm: it runs every kind of operation (operation-shapes.ts).
    algorithms: LIMIT_ALGORITHMS,
    remote: true,
  };
  readonly #main: RedisDeployment;
  readonly #perSecond: RedisDeployment | undefined;
  readonly #options: RedisStoreOptions;
  readonly #listeners: HealthListener[] = [];
  #started = false;
  #healthy = false;

  constructor(options: RedisStoreOptions) {
    this.#options = options;
    this.#main = deploymentFor(options.main);
    this.#perSecond = options.perSecond ? deploymentFor(options.perSecond) : undefined;
    if (options.healthCheckActiveConnection) {
      for (const pool of this.#pools()) pool.onActiveChange(() => this.#updateHealth());
    }
  }

  async start(): Promise<void> {
    await Promise.all(this.#pools().map((pool) => pool.start(this.#options.startup)));
    this.#started = true;
    this.#updateHealth();
  }

  increment(increments: readonly CounterIncrement[]): Promise<number[]> {
    // One deployment (the usual case): straight to it, with no promise or closure of the store's own.
    if (this.#perSecond === undefined) return this.#main.increment(increments);
    return this.#split(increments, increment);
  }

  /**
   * The reference's span: its pipelines hold INCRBY and EXPIRE per key, per-second keys in their own. The
   * lengths count commands: a sliding window's 3 (with its GET), a token bucket's 1 (EVALSHA).
   */
  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription {
    const perSecond = this.#perSecond ? commandsOf(increments.filter((i) => i.perSecond)) : 0;
    return {
      name: "Redis Pipeline Execution",
      attributes: {
        "pipeline length": commandsOf(increments) - perSecond,
        "perSecondPipeline length": perSecond,
      },
    };
  }

  read(increments: readonly CounterIncrement[]): Promise<number[]> {
    return this.#split(increments, read);
  }

  release(operations: readonly SlidingOperation[]): void {
    const perSecondPool = this.#perSecond;
    if (perSecondPool === undefined) {
      this.#main.release(operations);
      return;
    }
    this.#main.release(operations.filter((o) => !o.perSecond));
    perSecondPool.release(operations.filter((o) => o.perSecond));
  }

  onHealthChange(listener: HealthListener): void {
    this.#listeners.push(listener);
    listener(this.#healthy);
  }

  async close(): Promise<void> {
    await Promise.all(this.#pools().map((pool) => pool.close()));
  }

  #pools(): RedisDeployment[] {
    return this.#perSecond ? [this.#main, this.#perSecond] : [this.#main];
  }

  /** Sends SECOND-unit increments to the per-second pool (when there is one) and the rest to the main one. */
  #split(
    increments: readonly CounterIncrement[],
    run: (pool: RedisDeployment, part: readonly CounterIncrement[]) => Promise<number[]>,
  ): Promise<number[]> {
    const perSecondPool = this.#perSecond;
    if (perSecondPool === undefined || !increments.some((i) => i.perSecond))
      return run(this.#main, increments);
    if (increments.every((i) => i.perSecond)) return run(perSecondPool, increments);
    return this.#both(increments, perSecondPool, run);
  }

  /** Both deployments at once; each operation takes its values from its own deployment's answer. */
  async #both(
    increments: readonly CounterIncrement[],
    perSecondPool: RedisDeployment,
    run: (pool: RedisDeployment, part: readonly CounterIncrement[]) => Promise<number[]>,
  ): Promise<number[]> {
    const main = increments.filter((i) => !i.perSecond);
    const perSecond = increments.filter((i) => i.perSecond);
    const [mainValues, perSecondValues] = await Promise.all([
      run(this.#main, main),
      run(perSecondPool, perSecond),
    ]);
    // Each operation takes its own count of values (a sliding window's or a bucket's two) from its pool's.
    const values: number[] = [];
    let m = 0;
    let p = 0;
    for (const increment of increments) {
      const count = resultCountOf(increment);
      if (increment.perSecond) {
        for (let n = 0; n < count; n++) values.push(perSecondValues[p++]!);
      } else {
        for (let n = 0; n < count; n++) values.push(mainValues[m++]!);
      }
    }
    return values;
  }

  #updateHealth(): void {
    const healthy =
      this.#started &&
      (!this.#options.healthCheckActiveConnection || this.#pools().every((pool) => pool.active > 0));
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    for (const listener of this.#listeners) listener(healthy);
  }
}

const increment = (pool: RedisDeployment, part: readonly CounterIncrement[]) => pool.increment(part);
const read = (pool: RedisDeployment, part: readonly CounterIncrement[]) => pool.read(part);

/** A cluster through ioredis (slot map, redirections); a single Redis or sentinel group through RESP. */
function deploymentFor(options: RedisPoolOptions): RedisDeployment {
  return options.endpoint.type === "cluster"
    ? new ClusterConnectionPool(options)
    : new RespConnectionPool(options);
}
