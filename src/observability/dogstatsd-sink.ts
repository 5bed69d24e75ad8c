import StatsDClient, { type StatsD } from "hot-shots";
import type { Logger } from "./logger.js";
import type { StatTags } from "./stat-metrics.js";
import type { StatsBatch } from "./stats-registry.js";
import type { StatsSink } from "./stats-sink.js";
import { closeStatsdClient } from "./statsd-sink.js";

/** A USE_DOG_STATSD_MOGRIFIERS entry: stats whose name matches `pattern` are renamed and tagged. */
export interface DogStatsdMogrifier {
  readonly pattern: RegExp;
  /** New name; `$0`, `$1`… are the match and its groups. */
  readonly rename: string;
  /** Tag values may use `$n` too. */
  readonly tags: Readonly<Record<string, string>>;
}

/** Where and how to send DogStatsD datagrams. */
export interface DogStatsdSinkOptions {
  /** STATSD_HOST and STATSD_PORT, as the reference's DogStatsD client uses them. */
  readonly host: string;
  readonly port: number;
  /** EXTRA_TAGS, sent as DogStatsD tags. */
  readonly extraTags: StatTags;
  /** Tried in order; the first whose pattern matches renames the stat. */
  readonly mogrifiers: readonly DogStatsdMogrifier[];
  readonly logger: Logger;
}

/** datadog-go's default UDP payload size. */
const MAX_DATAGRAM_BYTES = 1432;
const BUFFER_FLUSH_MS = 100;
const ERROR_LOG_INTERVAL_MS = 60_000;

type RawSender = { send(message: string): void };

/**
 * DogStatsD over UDP (USE_DOG_STATSD; the reference's datadog-go client without client-side aggregation):
 * `name:value|c|#k:v,…` counters (deltas), `|g` gauges and `|ms` timers, with stat tags and EXTRA_TAGS as
 * DogStatsD tags, after the mogrifiers have renamed and tagged the stat.
 */
export class DogStatsdSink implements StatsSink {
  readonly name = "dogstatsd";
  readonly #options: DogStatsdSinkOptions;
  readonly #client: StatsD;
  #lastErrorLogMs = -Infinity;

  constructor(options: DogStatsdSinkOptions) {
    this.#options = options;
    this.#client = new StatsDClient({
      host: options.host,
      port: options.port,
      protocol: "udp",
      maxBufferSize: MAX_DATAGRAM_BYTES,
      bufferFlushInterval: BUFFER_FLUSH_MS,
      includeDataDogTags: false,
      originDetection: false,
      datadog: false,
      errorHandler: (error) => this.#onError(error),
    });
  }

  send(batch: StatsBatch): void {
    for (const c of batch.counters) this.#line(c.name, c.tags, `${c.delta}|c`);
    for (const g of batch.gauges) this.#line(g.name, g.tags, `${g.value}|g`);
    for (const t of batch.timers) {
      const rate = t.sampleRate < 1 ? `|@${t.sampleRate}` : "";
      for (const ms of t.samples) this.#line(t.name, t.tags, `${ms}|ms${rate}`);
    }
  }

  close(): Promise<void> {
    return closeStatsdClient(this.#client);
  }

  #line(name: string, tags: StatTags | undefined, valueAndType: string): void {
    const mogrified = mogrify(name, this.#options.mogrifiers);
    const all = [...tagList(this.#options.extraTags), ...tagList(tags ?? {}), ...mogrified.tags];
    const suffix = all.length === 0 ? "" : `|#${all.join(",")}`;
    (this.#client as unknown as RawSender).send(`${mogrified.name}:${valueAndType}${suffix}`);
  }

  #onError(error: Error): void {
    const now = Date.now();
    if (now - this.#lastErrorLogMs < ERROR_LOG_INTERVAL_MS) return;
    this.#lastErrorLogMs = now;
    this.#options.logger.warn(`dogstatsd sink: ${error.message} (repeats suppressed for 60s)`);
  }
}

/** The reference's mogrification: the first matching mogrifier gives the name and extra `k:v` tags. */
export function mogrify(
  name: string,
  mogrifiers: readonly DogStatsdMogrifier[],
): { name: string; tags: string[] } {
  for (const mogrifier of mogrifiers) {
    const match = mogrifier.pattern.exec(name);
    if (match === null) continue;
    const fill = (template: string) =>
      template.replace(/\$(\d+)/g, (_all, n: string) => match[Number(n)] ?? "");
    const tags = Object.entries(mogrifier.tags).map(([key, value]) => tag(key, fill(value)));
    return { name: fill(mogrifier.rename), tags };
  }
  return { name, tags: [] };
}

function tagList(tags: StatTags): string[] {
  return Object.entries(tags).map(([key, value]) => tag(key, value));
}

/** `k:v`, without the characters that would end a tag or the datagram line. */
function tag(key: string, value: string): string {
  return `${key}:${value}`.replace(/[|,\n]/g, "_");
}
