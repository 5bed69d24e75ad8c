import StatsDClient, { type StatsD } from "hot-shots";
import type { Logger } from "./logger.js";
import { type StatTags, statId } from "./stat-metrics.js";
import type { StatsBatch } from "./stats-registry.js";
import type { StatsSink } from "./stats-sink.js";

/** Where and how to send plain statsd lines. */
export interface StatsdSinkOptions {
  readonly host: string;
  readonly port: number;
  /** gostats' STATSD_PROTOCOL: tcp (its default) or udp. */
  readonly protocol: "tcp" | "udp";
  /** EXTRA_TAGS, appended to every name as gostats does (`name.__k=v`). */
  readonly extraTags: StatTags;
  readonly logger: Logger;
}

/** Errors are logged at most this often, so an absent statsd never floods the log. */
const ERROR_LOG_INTERVAL_MS = 60_000;
/** A failed client is replaced at most this often (hot-shots' TCP transport may give up for good). */
const RECONNECT_INTERVAL_MS = 1000;
/** close() never waits longer than this for a socket that will not drain. */
const CLOSE_TIMEOUT_MS = 1000;

/** hot-shots' raw-line sender, present on the client but not in its type declarations. */
type RawSender = {
  send(message: string, tags?: undefined, cardinality?: undefined, callback?: () => void): void;
};

/**
 * Plain statsd (the reference's default sink): counters as `|c` deltas, gauges `|g`, timers `|ms` with a
 * `@rate` when the interval had more samples than were kept. Tags are folded into names the way gostats
 * does, since plain statsd has none. A statsd that is down or not yet up costs one log line a minute; the
 * client is rebuilt until it connects.
 */
export class StatsdSink implements StatsSink {
  readonly name = "statsd";
  readonly #options: StatsdSinkOptions;
  #client: StatsD;
  #createdMs = 0;
  #failed = false;
  #lastErrorLogMs = -Infinity;

  constructor(options: StatsdSinkOptions) {
    this.#options = options;
    this.#client = this.#connect();
  }

  send(batch: StatsBatch): void {
    if (this.#failed && Date.now() - this.#createdMs >= RECONNECT_INTERVAL_MS) {
      const broken = this.#client;
      this.#client = this.#connect();
      broken.close(() => {});
    }
    const client = this.#client;
    for (const c of batch.counters) client.increment(this.#nameOf(c.name, c.tags), c.delta);
    for (const g of batch.gauges) client.gauge(this.#nameOf(g.name, g.tags), g.value);
    for (const t of batch.timers) {
      const name = this.#nameOf(t.name, t.tags);
      // Samples were already drawn by the registry: send each with its rate, without hot-shots sampling again.
      const rate = t.sampleRate < 1 ? `|@${t.sampleRate}` : "";
      for (const ms of t.samples) (client as unknown as RawSender).send(`${name}:${ms}|ms${rate}`);
    }
  }

  close(): Promise<void> {
    return closeStatsdClient(this.#client);
  }

  #connect(): StatsD {
    this.#createdMs = Date.now();
    this.#failed = false;
    const { host, port, protocol } = this.#options;
    return new StatsDClient({
      host,
      port,
      protocol,
      maxBufferSize: 1400,
      bufferFlushInterval: 1000,
      includeDataDogTags: false,
      datadog: false,
      errorHandler: (error) => this.#onError(error),
    });
  }

  #nameOf(name: string, tags: StatTags | undefined): string {
    return statId(
      name,
      tags === undefined ? this.#options.extraTags : { ...this.#options.extraTags, ...tags },
    );
  }

  #onError(error: Error): void {
    this.#failed = true;
    const now = Date.now();
    if (now - this.#lastErrorLogMs < ERROR_LOG_INTERVAL_MS) return;
    this.#lastErrorLogMs = now;
    this.#options.logger.warn(`statsd sink: ${error.message} (repeats suppressed for 60s)`);
  }
}

/** Closes a hot-shots client, flushing what it buffered; waits at most a second (never blocks shutdown). */
export function closeStatsdClient(client: StatsD): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
    timer.unref();
    client.close(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
