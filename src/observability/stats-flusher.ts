import type { Logger } from "./logger.js";
import type { StatsRegistry } from "./stats-registry.js";
import type { StatsSink } from "./stats-sink.js";

/**
 * Drains the registry into every sink each STATS_FLUSH_INTERVAL (several sinks at once are allowed:
 * docs/production.md "Metrics: Prometheus and DogStatsD"). With no sink, counters still accumulate for `/stats`.
 */
export class StatsFlusher {
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: StatsRegistry,
    private readonly sinks: readonly StatsSink[],
    private readonly intervalMs: number,
    private readonly logger: Logger,
    /** Called before each flush to refresh computed stats (local cache gauges, …). */
    private readonly beforeFlush: () => void = () => {},
  ) {}

  start(): void {
    if (this.sinks.length === 0 || this.intervalMs <= 0) return;
    this.#timer = setInterval(() => this.flush(), this.intervalMs);
    this.#timer.unref();
  }

  flush(): void {
    this.beforeFlush();
    if (this.sinks.length === 0) return;
    const batch = this.registry.drain();
    for (const sink of this.sinks) {
      try {
        sink.send(batch);
      } catch (error) {
        this.logger.warn(`stats sink ${sink.name} failed: ${(error as Error).message}`);
      }
    }
  }

  /** Sends what is left and closes the sinks. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.flush();
    await Promise.all(this.sinks.map((sink) => sink.close()));
  }
}
