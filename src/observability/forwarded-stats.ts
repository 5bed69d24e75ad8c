import type { StatTags, StatTimer } from "./stat-metrics.js";
import { statId } from "./stat-metrics.js";
import type { StatsRegistry } from "./stats-registry.js";

/** What a worker thread's stats did since its previous report (docs/workers.md, "One set of figures"). */
export interface ForwardedStats {
  readonly counters: readonly {
    readonly name: string;
    readonly tags: StatTags | undefined;
    readonly delta: number;
  }[];
  readonly gauges: readonly {
    readonly name: string;
    readonly tags: StatTags | undefined;
    readonly value: number;
  }[];
  readonly timers: readonly {
    readonly name: string;
    readonly tags: StatTags | undefined;
    readonly count: number;
    readonly sumMs: number;
    readonly samples: readonly number[];
    /** Bucket counts added since the previous report (Prometheus histograms), when the timer has a layout. */
    readonly buckets: number[] | undefined;
  }[];
}

/**
 * Takes a worker's report from its `registry`: counter deltas and timer samples drained as a stats flush
 * drains them, every gauge's value, and each timer's count, sum and buckets since the previous report.
 */
export class StatsReporter {
  readonly #registry: StatsRegistry;
  readonly #lastTimers = new Map<
    StatTimer,
    { count: number; sumMs: number; buckets: Float64Array | undefined }
  >();

  constructor(registry: StatsRegistry) {
    this.#registry = registry;
  }

  take(): ForwardedStats {
    type Totals = {
      name: string;
      tags: StatTags | undefined;
      count: number;
      sumMs: number;
      buckets: number[] | undefined;
    };
    const timerTotals = new Map<string, Totals>();
    this.#registry.forEachStat({
      counter: () => undefined,
      gauge: () => undefined,
      timer: (timer) => {
        const last = this.#lastTimers.get(timer) ?? { count: 0, sumMs: 0, buckets: undefined };
        const counts = timer.histogram?.counts;
        const buckets =
          counts === undefined ? undefined : Array.from(counts, (c, i) => c - (last.buckets?.[i] ?? 0));
        timerTotals.set(statId(timer.name, timer.tags), {
          name: timer.name,
          tags: timer.tags,
          count: timer.count - last.count,
          sumMs: timer.sumMs - last.sumMs,
          buckets,
        });
        this.#lastTimers.set(timer, { count: timer.count, sumMs: timer.sumMs, buckets: counts?.slice() });
      },
    });
    const batch = this.#registry.drain();
    const samplesOf = new Map(batch.timers.map((t) => [statId(t.name, t.tags), t.samples]));
    const timers = [];
    for (const [id, totals] of timerTotals) {
      if (totals.count === 0) continue;
      timers.push({ ...totals, samples: samplesOf.get(id) ?? [] });
    }
    return { counters: batch.counters, gauges: batch.gauges, timers };
  }
}

/**
 * The main thread's side: adds each worker's reports to the process's registry, so `/stats`, `/metrics`,
 * the sinks and the console show one set of figures under the usual names. Gauges are summed over the
 * workers (each worker's last reported value) on top of the main thread's own.
 */
export class StatsAbsorber {
  readonly #registry: StatsRegistry;
  /** Per worker, its gauges' last values by stat id. */
  readonly #gauges = new Map<number, Map<string, number>>();
  readonly #removers = new Map<string, (() => void)[]>();

  constructor(registry: StatsRegistry) {
    this.#registry = registry;
  }

  absorb(worker: number, stats: ForwardedStats): void {
    const registry = this.#registry;
    for (const c of stats.counters) registry.absorbCounter(c.name, c.tags, c.delta);
    for (const t of stats.timers)
      registry.timer(t.name, t.tags).absorb(t.count, t.sumMs, t.samples, t.buckets);
    let gauges = this.#gauges.get(worker);
    if (gauges === undefined) {
      gauges = new Map();
      this.#gauges.set(worker, gauges);
    }
    for (const g of stats.gauges) {
      const id = statId(g.name, g.tags);
      if (!gauges.has(id)) {
        const values = gauges;
        const remove = registry.gauge(g.name, g.tags).addSource(() => values.get(id) ?? 0);
        const list = this.#removers.get(`${worker}:${id}`) ?? [];
        list.push(remove);
        this.#removers.set(`${worker}:${id}`, list);
      }
      gauges.set(id, g.value);
    }
  }

  /** A worker that ended: its gauges no longer count (its counters and timers stay counted). */
  forget(worker: number): void {
    const gauges = this.#gauges.get(worker);
    if (gauges === undefined) return;
    for (const id of gauges.keys()) {
      for (const remove of this.#removers.get(`${worker}:${id}`) ?? []) remove();
      this.#removers.delete(`${worker}:${id}`);
    }
    this.#gauges.delete(worker);
  }
}
