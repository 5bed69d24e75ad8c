import type { Counter } from "../engine/rule-set.js";

/** Tags of a stat (EXTRA_TAGS are added by sinks, not stored here). */
export type StatTags = Readonly<Record<string, string>>;

/** The id gostats gives a tagged stat: `name.__k1=v1.__k2=v2`, tags sorted. */
export function statId(name: string, tags: StatTags | undefined): string {
  if (tags === undefined) return name;
  let id = name;
  for (const key of Object.keys(tags).sort()) id += `.__${key}=${tags[key]}`;
  return id;
}

/** A counter: cumulative `value`, with `flushed` marking what sinks already received. */
export class StatCounter implements Counter {
  value = 0;
  flushed = 0;
  constructor(
    readonly name: string,
    readonly tags: StatTags | undefined,
  ) {}
  add(amount: number): void {
    this.value += amount;
  }
}

/**
 * A gauge: last value set, or read from a callback at flush time, plus what its added sources read (the
 * same gauge of each worker thread, docs/workers.md).
 */
export class StatGauge {
  value = 0;
  #sources: (() => number)[] = [];
  constructor(
    readonly name: string,
    readonly tags: StatTags | undefined,
    readonly read: (() => number) | undefined,
  ) {}
  set(value: number): void {
    this.value = value;
  }
  /** Adds `source`'s reading to the gauge's value; returns a function that removes it. */
  addSource(source: () => number): () => void {
    this.#sources.push(source);
    return () => {
      this.#sources = this.#sources.filter((s) => s !== source);
    };
  }
  current(): number {
    let value = this.read ? this.read() : this.value;
    for (const source of this.#sources) value += source();
    return value;
  }
}

/** Samples kept per timer between flushes; beyond this, samples are kept at random (reservoir). */
const TIMER_RESERVOIR = 1000;

/** How a timer also counts its observations into histogram buckets (for Prometheus). */
export interface TimerHistogram {
  /** Upper bounds, ascending, in the scaled unit (seconds when `scale` is 0.001). */
  readonly bounds: readonly number[];
  /** Factor applied to a millisecond observation before it is compared with the bounds. */
  readonly scale: number;
}

/**
 * A timer in milliseconds: count and sum since start, a bounded sample of the current interval, and,
 * once a histogram layout is set, cumulative bucket counts since then.
 */
export class StatTimer {
  count = 0;
  sumMs = 0;
  samples: number[] = [];
  /** Samples offered in the current interval (≥ samples.length). */
  offered = 0;
  #histogram: TimerHistogram | undefined;
  /** Observations per bucket (not cumulative), the last slot past every bound (+Inf). */
  #bucketCounts: Float64Array | undefined;
  constructor(
    readonly name: string,
    readonly tags: StatTags | undefined,
  ) {}

  /** Starts counting observations into `histogram`'s buckets (undefined stops it). */
  useHistogram(histogram: TimerHistogram | undefined): void {
    this.#histogram = histogram;
    this.#bucketCounts = histogram ? new Float64Array(histogram.bounds.length + 1) : undefined;
  }

  /** The histogram layout and per-bucket counts, if a layout is set. */
  get histogram(): { readonly layout: TimerHistogram; readonly counts: Float64Array } | undefined {
    const layout = this.#histogram;
    return layout && this.#bucketCounts ? { layout, counts: this.#bucketCounts } : undefined;
  }

  /**
   * Adds another thread's observations of the same timer: `count` and `sumMs` more, its interval's
   * samples, and its bucket counts (when both use the same layout).
   */
  absorb(
    count: number,
    sumMs: number,
    samples: readonly number[],
    buckets: readonly number[] | undefined,
  ): void {
    this.count += count;
    this.sumMs += sumMs;
    for (const ms of samples) {
      this.offered++;
      if (this.samples.length < TIMER_RESERVOIR) this.samples.push(ms);
      else {
        const slot = Math.floor(Math.random() * this.offered);
        if (slot < TIMER_RESERVOIR) this.samples[slot] = ms;
      }
    }
    const own = this.#bucketCounts;
    if (own !== undefined && buckets !== undefined && buckets.length === own.length) {
      for (let i = 0; i < own.length; i++) own[i]! += buckets[i]!;
    }
  }

  record(ms: number): void {
    this.count++;
    this.sumMs += ms;
    this.offered++;
    if (this.samples.length < TIMER_RESERVOIR) this.samples.push(ms);
    else {
      const slot = Math.floor(Math.random() * this.offered);
      if (slot < TIMER_RESERVOIR) this.samples[slot] = ms;
    }
    const histogram = this.#histogram;
    if (histogram !== undefined) {
      // Scaled before comparing, as statsd_exporter scales the observation (bounds are `le`, inclusive).
      const value = ms * histogram.scale;
      const bounds = histogram.bounds;
      let slot = 0;
      while (slot < bounds.length && value > bounds[slot]!) slot++;
      this.#bucketCounts![slot]!++;
    }
  }
}
