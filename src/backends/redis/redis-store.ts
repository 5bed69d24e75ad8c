import type {
  CounterIncrement,
  CounterStore,
  HealthListener,
  StoreSpanDescription,
} from "../../engine/counter-store.js";
import { ClusterConnectionPool } from "./cluster-connection-pool.js";
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
 * round trip per request and deployment, failing fast while Redis is away and resuming by itself.
 */
export class RedisStore implements CounterStore {
  readonly name = "redis";
  readonly capabilities = { readsWithoutCounting: true, algorithms: ["fixed_window"] as const };
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
    return this.#split(increments, (pool, part) => pool.increment(part));
  }

  /** The reference's span: its pipelines hold INCRBY and EXPIRE per key, per-second keys in their own. */
  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription {
    const perSecond = this.#perSecond ? increments.filter((i) => i.perSecond).length : 0;
    return {
      name: "Redis Pipeline Execution",
      attributes: {
        "pipeline length": 2 * (increments.length - perSecond),
        "perSecondPipeline length": 2 * perSecond,
      },
    };
  }

  read(increments: readonly CounterIncrement[]): Promise<number[]> {
    return this.#split(increments, (pool, part) => pool.read(part));
  }

  release(): void {
    // Sliding windows on Redis: the Redis work of issue 15 fills this in.
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
  async #split(
    increments: readonly CounterIncrement[],
    run: (pool: RedisDeployment, part: readonly CounterIncrement[]) => Promise<number[]>,
  ): Promise<number[]> {
    const perSecondPool = this.#perSecond;
    if (perSecondPool === undefined || !increments.some((i) => i.perSecond))
      return run(this.#main, increments);
    if (increments.every((i) => i.perSecond)) return run(perSecondPool, increments);
    const main = increments.filter((i) => !i.perSecond);
    const perSecond = increments.filter((i) => i.perSecond);
    const [mainValues, perSecondValues] = await Promise.all([
      run(this.#main, main),
      run(perSecondPool, perSecond),
    ]);
    let m = 0;
    let p = 0;
    return increments.map((i) => (i.perSecond ? perSecondValues[p++]! : mainValues[m++]!));
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

/** A cluster through ioredis (slot map, redirections); a single Redis or sentinel group through RESP. */
function deploymentFor(options: RedisPoolOptions): RedisDeployment {
  return options.endpoint.type === "cluster"
    ? new ClusterConnectionPool(options)
    : new RespConnectionPool(options);
}
