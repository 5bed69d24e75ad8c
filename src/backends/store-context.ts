import type { Counter } from "../engine/rule-set.js";
import type { NodeBreakers } from "./node-breakers.js";

/** Tags of a stat, `code: "success"` as gostats writes them. */
export type StoreStatTags = Readonly<Record<string, string>>;

/** Where stores register their stats: the daemon's stats registry, or anything with these two methods. */
export interface StoreStats {
  /** The counter `name` (with `tags`), created on first use. */
  counter(name: string, tags?: StoreStatTags): Counter;
  /** The gauge `name`: set by the store, or read from `read` when given. */
  gauge(name: string, tags?: StoreStatTags, read?: () => number): StoreGauge;
}

/** A value that goes up and down: connections up, bytes held. */
export interface StoreGauge {
  set(value: number): void;
}

/** Plain log lines of a store (start-up, node lists, warnings): a narrow part of the daemon's logger. */
export interface StoreLog {
  warn(message: string): void;
  info(message: string): void;
}

/**
 * Lines of recurring events (per-request errors, connections lost and back), at most one per `kind` per
 * interval with a count of the others; `text` may be a function, called only when the line is written.
 */
export interface StoreThrottledLog {
  warn(kind: string, text: string | (() => string)): void;
  error(kind: string, text: string | (() => string)): void;
}

/** What a store reports into; the wiring passes the daemon's registry and logs. */
export interface StoreContext {
  readonly stats: StoreStats;
  readonly logger: StoreLog;
  readonly throttledLog: StoreThrottledLog;
  /**
   * Circuit breakers per Redis Cluster primary, when the daemon guards the cluster node by node
   * (docs/outages.md "Redis Cluster"); absent otherwise (one breaker for the whole store, or none).
   */
  readonly nodeBreakers?: NodeBreakers | undefined;
}
