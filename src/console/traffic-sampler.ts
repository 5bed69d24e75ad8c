import type { RuleNode, RuleSet, RuleStats } from "../engine/rule-set.js";
import type { BreakerState, RuleRates, TrafficTick } from "./console-contract.js";

/** Options of {@link TrafficSampler}. */
export interface TrafficSamplerOptions {
  /** Reads the counters the engine already keeps; the sampler adds nothing to a decision. */
  readonly stats: {
    readonly pinnedRulesVersion: number;
    pinnedRuleStatsList(): RuleStats[];
    forEachDynamicRuleStats(visit: (stats: RuleStats) => void): void;
    readRuleCounts(stats: RuleStats, into: Float64Array, at: number): void;
  };
  readonly rules: () => RuleSet | undefined;
  readonly status: () => { readonly healthy: boolean; readonly breaker: BreakerState };
  readonly nowMs: () => number;
  /** Ticks kept for a newly connected page (600 = ten minutes at one a second). */
  readonly historyLength: number;
  /** Rules whose rates one tick carries at most, the busiest first (the Rules page shows 2000 at most). */
  readonly maxRulesPerTick: number;
}

/** Per rule key: total_hits, over_limit, near_limit, shadow_mode. */
const WIDTH = 4;

/**
 * Turns the cumulative per-rule counters into rates, once per interval, off the decision path. A sample
 * reads four numbers per rule key into flat arrays and allocates only for keys that moved (README
 * "Operator console" has what it costs).
 */
export class TrafficSampler {
  readonly #options: TrafficSamplerOptions;
  /** The configured rule keys' stats (of every set loaded so far) and their values at the last sample. */
  #pinned: RuleStats[] = [];
  #pinnedVersion = -1;
  #pinnedPrevious = new Float64Array(0);
  /** Request-derived keys (at most STATS_MAX_DYNAMIC_KEYS): their values, forgotten with the key. */
  readonly #dynamicPrevious = new WeakMap<RuleStats, Float64Array>();
  readonly #now = new Float64Array(WIDTH);
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
    this.#followPinned(true);
    options.stats.forEachDynamicRuleStats((stats) => {
      const values = new Float64Array(WIDTH);
      options.stats.readRuleCounts(stats, values, 0);
      this.#dynamicPrevious.set(stats, values);
    });
  }

  /** The first interval starts now (sampling starts later than the sampler is made). */
  restartClock(): void {
    this.#previousAtMs = this.#options.nowMs();
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
    const moved = new Float64Array(WIDTH);
    const movedRules: [string, RuleRates][] = [];
    const now = this.#now;
    const visit = (ruleStats: RuleStats, previous: Float64Array, at: number) => {
      stats.readRuleCounts(ruleStats, now, 0);
      if (
        now[0] === previous[at] &&
        now[1] === previous[at + 1] &&
        now[2] === previous[at + 2] &&
        now[3] === previous[at + 3]
      )
        return;
      const hits = now[0]! - previous[at]!;
      const over = now[1]! - previous[at + 1]!;
      const near = now[2]! - previous[at + 2]!;
      moved[0]! += hits;
      moved[1]! += over;
      moved[2]! += near;
      moved[3]! += now[3]! - previous[at + 3]!;
      previous.set(now, at);
      const fullKey = keys.get(ruleStats);
      if (fullKey !== undefined)
        movedRules.push([
          fullKey,
          {
            hits: rate(hits, seconds),
            over: rate(over, seconds),
            near: rate(near, seconds),
            totalHits: now[0]!,
            totalOver: now[1]!,
            totalNear: now[2]!,
          },
        ]);
    };
    this.#followPinned();
    const pinned = this.#pinned;
    for (let i = 0; i < pinned.length; i++) visit(pinned[i]!, this.#pinnedPrevious, i * WIDTH);
    stats.forEachDynamicRuleStats((ruleStats) => {
      let previous = this.#dynamicPrevious.get(ruleStats);
      if (previous === undefined) {
        // A key first seen in this interval: everything it counted is new.
        previous = new Float64Array(WIDTH);
        this.#dynamicPrevious.set(ruleStats, previous);
      }
      visit(ruleStats, previous, 0);
    });
    const { healthy, breaker } = status();
    const [hits, over, near, shadow] = moved as unknown as [number, number, number, number];
    // A shadow-mode hit over its limit counts in over_limit and is answered OK: refused = over − shadow.
    const refused = over - shadow;
    const tick = {
      atMs,
      hits: rate(hits, seconds),
      ok: rate(hits - refused, seconds),
      over: rate(refused, seconds),
      near: rate(near, seconds),
      shadow: rate(shadow, seconds),
      healthy,
      breaker,
    };
    this.#history.push({ ...tick, rules: {} });
    if (this.#history.length > this.#options.historyLength) this.#history.shift();
    // A page shows at most so many rules: the busiest ones are the ones worth sending every second.
    if (movedRules.length > this.#options.maxRulesPerTick) {
      movedRules.sort(([, a], [, b]) => b.hits - a.hits);
      movedRules.length = this.#options.maxRulesPerTick;
    }
    return { ...tick, rules: Object.fromEntries(movedRules) };
  }

  /**
   * After a load that added configured keys: the new list, each key keeping its last values; `atStart`, the
   * console's first look, takes every key's values as they are.
   */
  #followPinned(atStart = false): void {
    const { stats } = this.#options;
    if (stats.pinnedRulesVersion === this.#pinnedVersion) return;
    const before = new Map(this.#pinned.map((ruleStats, i) => [ruleStats, i]));
    // Keys whose stat names sanitise to the same name share their counters: read those once.
    const seen = new Set<unknown>();
    const list = stats.pinnedRuleStatsList().filter((ruleStats) => {
      if (seen.has(ruleStats.totalHits)) return false;
      seen.add(ruleStats.totalHits);
      return true;
    });
    const previous = new Float64Array(list.length * WIDTH);
    list.forEach((ruleStats, i) => {
      const at = before.get(ruleStats);
      // A key requests revealed before a load configured it keeps its values; a new one starts now.
      const known = at === undefined ? this.#dynamicPrevious.get(ruleStats) : undefined;
      if (at !== undefined)
        previous.set(this.#pinnedPrevious.subarray(at * WIDTH, at * WIDTH + WIDTH), i * WIDTH);
      else if (known !== undefined) previous.set(known, i * WIDTH);
      // At the console's first look every count is history; a key a load made later counted from zero.
      else if (atStart) stats.readRuleCounts(ruleStats, previous, i * WIDTH);
    });
    this.#pinned = list;
    this.#pinnedPrevious = previous;
    this.#pinnedVersion = stats.pinnedRulesVersion;
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
