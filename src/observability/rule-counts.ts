/**
 * Cumulative counts of one rule key since start (`total_hits`, `over_limit`, …), as the console's Rules page
 * shows them. Types only, importing nothing: the browser app reads it too (src/console/console-contract.ts).
 */
export interface RuleCounts {
  readonly hits: number;
  readonly over: number;
  readonly near: number;
  readonly overWithLocalCache: number;
  readonly within: number;
  readonly shadow: number;
}
