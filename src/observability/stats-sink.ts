import type { StatsBatch } from "./stats-registry.js";

/** A destination for stats (statsd, DogStatsD, …), fed by the flusher every STATS_FLUSH_INTERVAL. */
export interface StatsSink {
  readonly name: string;
  send(batch: StatsBatch): void;
  close(): Promise<void>;
}
