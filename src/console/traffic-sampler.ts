import type { RuleNode, RuleSet, RuleStats } from "../engine/rule-set.js";
import type { RuleCounts } from "../observability/stats-registry.js";

/** One rule's movement in the last interval: rates per second, and its totals since start. */
export interface RuleRates {
  readonly hits: number;
  readonly over: number;
  readonly near: number;
  readonly totalHits: number;
  readonly totalOver: number;
  readonly totalNear: number;
}

/**
 * One sample of the console's live stream (README "Operator console"). Rates are per second over the
 * interval, summed over every rule key; `hits` counts descriptor hits as `total_hits` does (hits_addend).
 */
export interface TrafficTick {
  readonly atMs: number;
  readonly hits: number;
  readonly ok: number;
  readonly over: number;
  readonly near: number;
  readonly shadow: number;
  readonly healthy: boolean;
  readonly breaker: string;
  /** Configured rules (by full key) whose counts moved in the interval; empty in the history. */
  readonly rules: Readonly<Record<string, RuleRates>>;
}

/** Options of {@link TrafficSampler}. */
export interface TrafficSamplerOptions {
  /** Reads the counters the engine already keeps; the sampler adds nothing to a decision. */
  readonly stats: {
    ruleCounts(stats: RuleStats): RuleCounts;
    forEachRuleStats(visit: (stats: RuleStats) => void): void;
  };
  readonly rules: () => RuleSet | undefined;
  readonly status: () => { readonly healthy: boolean; readonly breaker: string };
  readonly nowMs: () => number;
  /** Ticks kept for a newly connected page (600 = ten minutes at one a second). */
  readonly historyLength: number;
}

const ZERO: RuleCounts = { hits: 0, over: 0, near: 0, overWithLocalCache: 0, within: 0, shadow: 0 };

/**
 * Turns the cumulative per-rule counters into rates, once per interval, off the decision path: each
 * sample visits every rule key's counters once and remembers their values for the next.
 */
export class TrafficSampler {
  readonly #options: TrafficSamplerOptions;
  /** Values at the previous sample, per rule key; forgotten with the key (an evicted request-derived one). */
  #previous = new WeakMap<RuleStats, RuleCounts>();
  #previousAtMs: number;
  readonly #history: TrafficTick[] = [];
  /** The current rule set's configured rules by their stats, rebuilt when the set changes. */
  #keysOf: { rules: RuleSet | undefined; byStats: Map<RuleStats, string> } = {
    rules: undefined,
    byStats: new Map(),
  };

  constructor(options: TrafficSamplerOptions) {
    this.#options = options;
    this.#previousAtMs = options.nowMs();
    // Counts from before the console started are history, not traffic of the first interval.
    options.stats.forEachRuleStats((stats) => this.#previous.set(stats, options.stats.ruleCounts(stats)));
  }

  /** The ticks kept, oldest first, without their per-rule detail. */
  history(): readonly TrafficTick[] {
    return this.#history;
  }

  /** Takes one sample: the rates since the previous one. */
  sample(): TrafficTick {
    const { stats, status, nowMs } = this.#options;
    const atMs = nowMs();
    const seconds = Math.max(atMs - this.#previousAtMs, 1) / 1000;
    this.#previousAtMs = atMs;
    const keys = this.#configuredKeys();
    const rules: Record<string, RuleRates> = {};
    let hits = 0;
    let over = 0;
    let near = 0;
    let shadow = 0;
    stats.forEachRuleStats((ruleStats) => {
      const now = stats.ruleCounts(ruleStats);
      const before = this.#previous.get(ruleStats) ?? ZERO;
      this.#previous.set(ruleStats, now);
      const moved = now.hits - before.hits;
      const overMoved = now.over - before.over;
      const nearMoved = now.near - before.near;
      if (moved === 0 && overMoved === 0 && nearMoved === 0 && now.shadow === before.shadow) return;
      hits += moved;
      over += overMoved;
      near += nearMoved;
      shadow += now.shadow - before.shadow;
      const fullKey = keys.get(ruleStats);
      if (fullKey !== undefined)
        rules[fullKey] = {
          hits: rate(moved, seconds),
          over: rate(overMoved, seconds),
          near: rate(nearMoved, seconds),
          totalHits: now.hits,
          totalOver: now.over,
          totalNear: now.near,
        };
    });
    const { healthy, breaker } = status();
    const tick = {
      atMs,
      hits: rate(hits, seconds),
      ok: rate(hits - over, seconds),
      over: rate(over, seconds),
      near: rate(near, seconds),
      shadow: rate(shadow, seconds),
      healthy,
      breaker,
    };
    this.#history.push({ ...tick, rules: {} });
    if (this.#history.length > this.#options.historyLength) this.#history.shift();
    return { ...tick, rules };
  }

  #configuredKeys(): Map<RuleStats, string> {
    const rules = this.#options.rules();
    if (rules !== this.#keysOf.rules) this.#keysOf = { rules, byStats: configuredRuleKeys(rules) };
    return this.#keysOf.byStats;
  }
}

/** Each configured rule's stats → its full key. */
export function configuredRuleKeys(rules: RuleSet | undefined): Map<RuleStats, string> {
  const byStats = new Map<RuleStats, string>();
  const visit = (node: RuleNode) => {
    if (node.limit !== undefined) byStats.set(node.limit.stats, node.fullKey);
    if (node.children !== undefined) for (const child of node.children.exact.values()) visit(child);
  };
  for (const level of rules?.domains.values() ?? []) for (const node of level.exact.values()) visit(node);
  return byStats;
}

/** Per second, to three decimals. */
function rate(count: number, seconds: number): number {
  return Math.round((count / seconds) * 1000) / 1000;
}
