import type { RuleNodeJson, TrafficTick } from "../console/console-contract";

/** A rule's live cells: rates over the last second and totals since the daemon started. */
export interface RuleLive {
  hits: number;
  over: number;
  near: number;
  totalHits: number;
  totalOver: number;
  totalNear: number;
}

export type LiveByKey = ReadonlyMap<string, RuleLive>;

/** Live cells of every rule with a limit, from the totals `/console/api/rules` answered. */
export function liveFromRules(domains: readonly { rules: readonly RuleNodeJson[] }[]): Map<string, RuleLive> {
  const live = new Map<string, RuleLive>();
  const visit = (node: RuleNodeJson) => {
    if (node.totals !== null) {
      const totals = node.totals;
      live.set(node.fullKey, {
        hits: 0,
        over: 0,
        near: 0,
        totalHits: totals.hits,
        totalOver: totals.over,
        totalNear: totals.near,
      });
    }
    node.children.forEach(visit);
  };
  for (const domain of domains) domain.rules.forEach(visit);
  return live;
}

/**
 * The live cells after a tick: a rule in `tick.rules` takes its rates and totals, any other rule did not
 * move in that second, so its rates become 0 and its totals stay.
 */
export function liveAfterTick(live: LiveByKey, tick: TrafficTick): Map<string, RuleLive> {
  const next = new Map<string, RuleLive>();
  for (const [key, cells] of live) {
    const moved = tick.rules[key];
    next.set(
      key,
      moved === undefined
        ? { ...cells, hits: 0, over: 0, near: 0 }
        : {
            hits: moved.hits,
            over: moved.over,
            near: moved.near,
            totalHits: moved.totalHits,
            totalOver: moved.totalOver,
            totalNear: moved.totalNear,
          },
    );
  }
  return next;
}
