import { LRUCache } from "lru-cache";
import type { Counter, EngineStats, RuleStats } from "../engine/rule-set.js";
import { sanitizeStatName } from "../engine/stat-names.js";
import type { RuleCounts } from "./rule-counts.js";
import {
  StatCounter,
  StatGauge,
  type StatTags,
  StatTimer,
  statId,
  type TimerHistogram,
} from "./stat-metrics.js";

/** What sinks receive at each flush. */
export interface StatsBatch {
  /** Counters that changed since the previous flush, with the change. */
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
    readonly samples: readonly number[];
    /** Fraction of the interval's samples included (statsd `@rate`). */
    readonly sampleRate: number;
  }[];
}

const RULE_PREFIX = "ratelimit.service.rate_limit.";

/** Callbacks of {@link StatsRegistry.forEachStat}, one per kind of stat. */
export interface StatVisitor {
  counter(counter: StatCounter): void;
  gauge(gauge: StatGauge): void;
  timer(timer: StatTimer): void;
}

/** Chooses the histogram layout of a timer (undefined: no buckets). */
export type TimerHistogramLayout = (name: string, tags: StatTags | undefined) => TimerHistogram | undefined;

/** Builds the six counters of a rule key with `make`. */
function ruleStatsOf(key: string, make: (name: string) => StatCounter): RuleStats {
  const base = RULE_PREFIX + sanitizeStatName(key);
  return {
    key,
    totalHits: make(`${base}.total_hits`),
    overLimit: make(`${base}.over_limit`),
    nearLimit: make(`${base}.near_limit`),
    overLimitWithLocalCache: make(`${base}.over_limit_with_local_cache`),
    withinLimit: make(`${base}.within_limit`),
    shadowMode: make(`${base}.shadow_mode`),
  };
}

function countersOf(stats: RuleStats): StatCounter[] {
  return [
    stats.totalHits,
    stats.overLimit,
    stats.nearLimit,
    stats.overLimitWithLocalCache,
    stats.withinLimit,
    stats.shadowMode,
  ] as StatCounter[];
}

/**
 * Every stat of the process, with the reference's names. Stats of configured rules and of the service are
 * kept for the life of the process; stats whose keys come from requests (overrides, detailed_metric,
 * value_to_metric, unknown domains) live in a bounded LRU (`STATS_MAX_DYNAMIC_KEYS`,
 * docs/compatibility.md). An evicted key's unflushed counts still reach the sinks at the next flush.
 */
export class StatsRegistry implements EngineStats {
  readonly #pinned = new Map<string, StatCounter>();
  readonly #gauges = new Map<string, StatGauge>();
  readonly #timers = new Map<string, StatTimer>();
  readonly #pinnedRules = new Map<string, RuleStats>();
  #pinnedRulesVersion = 0;
  readonly #dynamic: LRUCache<string, StatCounter[]>;
  readonly #dynamicRules = new Map<string, RuleStats>();
  readonly #evictedDeltas: { name: string; tags: StatTags | undefined; delta: number }[] = [];
  #evictions = 0;
  #histogramLayout: TimerHistogramLayout | undefined;
  readonly globalShadowMode: Counter;

  constructor(options: { maxDynamicKeys: number }) {
    this.#dynamic = new LRUCache<string, StatCounter[]>({
      max: options.maxDynamicKeys,
      dispose: (counters, key, reason) => {
        if (reason !== "evict") return;
        this.#evictions++;
        this.#dynamicRules.delete(key);
        for (const c of counters) {
          if (c.value !== c.flushed)
            this.#evictedDeltas.push({ name: c.name, tags: c.tags, delta: c.value - c.flushed });
        }
      },
    });
    this.globalShadowMode = this.counter("ratelimit.service.global_shadow_mode");
    this.gauge("ratelimit.stats.dynamic_keys", undefined, () => this.#dynamic.size);
    this.gauge("ratelimit.stats.dynamic_keys_max", undefined, () => options.maxDynamicKeys);
    this.gauge("ratelimit.stats.dynamic_keys_evicted", undefined, () => this.#evictions);
  }

  /** A process-lifetime counter. */
  counter(name: string, tags?: StatTags): StatCounter {
    const id = statId(name, tags);
    let counter = this.#pinned.get(id);
    if (counter === undefined) {
      counter = new StatCounter(name, tags);
      this.#pinned.set(id, counter);
    }
    return counter;
  }

  /**
   * Adds `delta` to the counter another thread counted as `name` (docs/workers.md): the process-lifetime
   * counter of that name when there is one (configured rules, the service's), else a request-derived one
   * in the bounded LRU, as the thread itself keeps it.
   */
  absorbCounter(name: string, tags: StatTags | undefined, delta: number): void {
    const id = statId(name, tags);
    const pinned = this.#pinned.get(id);
    if (pinned !== undefined) {
      pinned.add(delta);
      return;
    }
    const key = `absorbed:${id}`;
    let counters = this.#dynamic.get(key);
    if (counters === undefined) {
      counters = [new StatCounter(name, tags)];
      this.#dynamic.set(key, counters);
    }
    counters[0]!.add(delta);
  }

  /** A gauge, optionally computed by `read` at flush and snapshot time. */
  gauge(name: string, tags?: StatTags, read?: () => number): StatGauge {
    const id = statId(name, tags);
    let gauge = this.#gauges.get(id);
    if (gauge === undefined) {
      gauge = new StatGauge(name, tags, read);
      this.#gauges.set(id, gauge);
    }
    return gauge;
  }

  /** A timer in milliseconds. */
  timer(name: string, tags?: StatTags): StatTimer {
    const id = statId(name, tags);
    let timer = this.#timers.get(id);
    if (timer === undefined) {
      timer = new StatTimer(name, tags);
      timer.useHistogram(this.#histogramLayout?.(name, tags));
      this.#timers.set(id, timer);
    }
    return timer;
  }

  /**
   * Makes timers count into histogram buckets chosen by `layout` (the Prometheus mapping), from now on:
   * existing timers start with empty buckets, new ones get their layout when created.
   */
  setTimerHistograms(layout: TimerHistogramLayout): void {
    this.#histogramLayout = layout;
    for (const timer of this.#timers.values()) timer.useHistogram(layout(timer.name, timer.tags));
  }

  /** Visits every live stat (pinned and request-derived counters, gauges, timers), for exporters. */
  forEachStat(visitor: StatVisitor): void {
    for (const c of this.#pinned.values()) visitor.counter(c);
    this.#dynamic.forEach((list) => {
      for (const c of list) visitor.counter(c);
    });
    for (const g of this.#gauges.values()) visitor.gauge(g);
    for (const t of this.#timers.values()) visitor.timer(t);
  }

  /** Stats of a configured rule: kept for the life of the process. */
  pinnedRuleStats(key: string): RuleStats {
    let stats = this.#pinnedRules.get(key);
    if (stats === undefined) {
      stats = this.#dynamicRules.get(key) ?? ruleStatsOf(key, (name) => this.counter(name));
      if (this.#dynamicRules.has(key)) {
        this.#dynamic.delete(key);
        this.#dynamicRules.delete(key);
        for (const c of countersOf(stats)) this.#pinned.set(statId(c.name, c.tags), c);
      }
      this.#pinnedRules.set(key, stats);
      this.#pinnedRulesVersion++;
    }
    return stats;
  }

  ruleStats(key: string): RuleStats {
    const pinned = this.#pinnedRules.get(key);
    if (pinned !== undefined) return pinned;
    let stats = this.#dynamicRules.get(key);
    if (stats === undefined) {
      stats = ruleStatsOf(key, (name) => new StatCounter(name, undefined));
      this.#dynamicRules.set(key, stats);
      this.#dynamic.set(key, countersOf(stats));
    } else {
      this.#dynamic.get(key); // refresh recency
    }
    return stats;
  }

  domainNotFound(domain: string): Counter {
    const name = `${RULE_PREFIX}${sanitizeStatName(domain)}.domain_not_found`;
    const pinned = this.#pinned.get(name);
    if (pinned !== undefined) return pinned;
    const id = `domain_not_found:${domain}`;
    let counters = this.#dynamic.get(id);
    if (counters === undefined) {
      counters = [new StatCounter(name, undefined)];
      this.#dynamic.set(id, counters);
    }
    return counters[0]!;
  }

  /** The current values of a rule's six counters (stats this registry made), for the console. */
  ruleCounts(stats: RuleStats): RuleCounts {
    const value = (counter: Counter) => (counter as StatCounter).value;
    return {
      hits: value(stats.totalHits),
      over: value(stats.overLimit),
      near: value(stats.nearLimit),
      overWithLocalCache: value(stats.overLimitWithLocalCache),
      within: value(stats.withinLimit),
      shadow: value(stats.shadowMode),
    };
  }

  /** Grows whenever a configured rule key gets its stats (a load with new keys): {@link pinnedRuleStats}. */
  get pinnedRulesVersion(): number {
    return this.#pinnedRulesVersion;
  }

  /** The stats of every configured rule key, of this and earlier rule sets. */
  pinnedRuleStatsList(): RuleStats[] {
    return [...this.#pinnedRules.values()];
  }

  /** Visits the stats of the rule keys requests revealed that the LRU still holds. */
  forEachDynamicRuleStats(visit: (stats: RuleStats) => void): void {
    for (const stats of this.#dynamicRules.values()) visit(stats);
  }

  /** Writes `total_hits`, `over_limit`, `near_limit` and `shadow_mode` of a rule key to `into[at…at+3]`. */
  readRuleCounts(stats: RuleStats, into: Float64Array, at: number): void {
    into[at] = (stats.totalHits as StatCounter).value;
    into[at + 1] = (stats.overLimit as StatCounter).value;
    into[at + 2] = (stats.nearLimit as StatCounter).value;
    into[at + 3] = (stats.shadowMode as StatCounter).value;
  }

  /** `name: value` lines, sorted, cumulative since start (the debug `/stats` page). */
  snapshotLines(): string[] {
    const lines: string[] = [];
    const counters = [...this.#pinned.values()];
    this.#dynamic.forEach((list) => {
      counters.push(...list);
    });
    for (const c of counters) lines.push(`${statId(c.name, c.tags)}: ${c.value}`);
    for (const g of this.#gauges.values()) lines.push(`${statId(g.name, g.tags)}: ${g.current()}`);
    for (const t of this.#timers.values()) {
      const id = statId(t.name, t.tags);
      lines.push(`${id}.count: ${t.count}`, `${id}.sum_ms: ${Math.round(t.sumMs * 1000) / 1000}`);
    }
    return lines.sort();
  }

  /** Everything that changed since the previous drain; marks it as flushed. */
  drain(): StatsBatch {
    const counters = this.#evictedDeltas.splice(0);
    const take = (c: StatCounter) => {
      if (c.value === c.flushed) return;
      counters.push({ name: c.name, tags: c.tags, delta: c.value - c.flushed });
      c.flushed = c.value;
    };
    this.#pinned.forEach(take);
    this.#dynamic.forEach((list) => {
      list.forEach(take);
    });
    const gauges = [...this.#gauges.values()].map((g) => ({
      name: g.name,
      tags: g.tags,
      value: g.current(),
    }));
    const timers = [];
    for (const t of this.#timers.values()) {
      if (t.offered === 0) continue;
      timers.push({
        name: t.name,
        tags: t.tags,
        samples: t.samples,
        sampleRate: t.samples.length / t.offered,
      });
      t.samples = [];
      t.offered = 0;
    }
    return { counters, gauges, timers };
  }
}
