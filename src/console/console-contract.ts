// The console's contract (README "Operator console"): every JSON shape the browser app in src/console-ui
// reads, declared once. The server modules that write a shape and the app that reads it both take it from
// here with `import type`, so a change to one side fails the type check of the other, and the bundle gains
// nothing (type imports are erased). Types only: this file and what it imports compile for the browser too
// (src/console-ui/tsconfig.json), so nothing here may import code that needs Node.

export type { DecisionEntry } from "../engine/decision-request.js";
export type { ExplainedLimit } from "../engine/explain/describe-descriptor.js";
export type { SearchLevel } from "../engine/explain/trace-match.js";
export type {
  ExecutionJson,
  LogJson,
  MigrationJson,
} from "../migrations/migrations-json-types.js";
export type { RuleCounts } from "../observability/rule-counts.js";
export type {
  ExplainedDescriptorJson,
  ExplainStatusJson,
  ExplanationJson,
} from "../service/explanation.js";
export type { User } from "../users/user.js";

import type { RuleCounts } from "../observability/rule-counts.js";

/** The circuit breaker in front of the counter store; `off` without one (BACKEND_BREAKER_FAILURES=0, memory). */
export type BreakerState = "closed" | "open" | "probing" | "off";

/** The counter store: its BACKEND_TYPE, BACKEND_FAILURE_MODE, breaker, and calls in flight (null: memory). */
export interface StoreStatus {
  readonly type: string;
  readonly failureMode: string;
  readonly breaker: BreakerState;
  readonly pending: number | null;
}

/** The sinks stats and traces may go to, each on or off. */
export type SinkName = "statsd" | "dogstatsd" | "prometheus" | "tracing";

/** `GET /console/api/overview`: the daemon at a glance. Times are milliseconds since the epoch. */
export interface Overview {
  /** The daemon's version (package.json's `version`). */
  readonly version: string;
  readonly nowMs: number;
  readonly startedAtMs: number;
  readonly health: { readonly healthy: boolean; readonly components: Readonly<Record<string, boolean>> };
  readonly store: StoreStatus;
  readonly rules: OverviewRules;
  /** The users/migrations database (`sqlite`, `postgres`) and whether it is ready. */
  readonly management: { readonly database: string; readonly ready: boolean };
  readonly sinks: Readonly<Record<SinkName, boolean>>;
  readonly process: {
    readonly rssBytes: number;
    readonly heapUsedBytes: number;
    readonly uptimeSeconds: number;
  };
}

/** The Overview's rules: where they come from, the set in use, and the load attempts. */
export interface OverviewRules {
  readonly source: "file" | "xds";
  /** The rule directory (CONFIG_TYPE=FILE) or the xDS server (GRPC_XDS_SOTW). */
  readonly location: string;
  /** xDS: the snapshot's version; files: 12 hex digits of a hash over the files; null before a load. */
  readonly version: string | null;
  readonly files: readonly { readonly name: string; readonly path: string; readonly sha256: string }[];
  readonly loadedAtMs: number | null;
  readonly domains: number;
  /** Descriptors that carry a limit, over every domain. */
  readonly rules: number;
  readonly lastLoad: { readonly atMs: number; readonly ok: boolean; readonly error: string | null } | null;
  readonly loadSuccesses: number;
  readonly loadErrors: number;
}

/** A limit as the Rules page shows it. */
export interface LimitJson {
  readonly name: string | null;
  readonly requestsPerUnit: number;
  /** The unit's name as the rules spell it (`SECOND` … `WEEK`); null when the rule has none (`unlimited`). */
  readonly unit: string | null;
  readonly unitMultiplier: number;
  readonly algorithm: string;
  /** The token bucket's burst; null for the other algorithms. */
  readonly burst: number | null;
  /** The limit's `reservation` (docs/token-budgets.md); null without one. */
  readonly reservation: {
    readonly estimate: number;
    readonly ttlSeconds: number;
    readonly requestIdKey: string | null;
  } | null;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  readonly replaces: readonly string[];
  readonly stacked: readonly LimitJson[];
}

/** One configured descriptor, with its counts since start when it has a limit. */
export interface RuleNodeJson {
  readonly key: string;
  readonly value: string;
  readonly fullKey: string;
  /** The rule file or xDS resource that configured it. */
  readonly source: string | null;
  readonly wildcard: boolean;
  readonly shareThreshold: boolean;
  readonly valueToMetric: boolean;
  readonly limit: LimitJson | null;
  readonly totals: RuleCounts | null;
  readonly children: readonly RuleNodeJson[];
}

/** `GET /console/api/rules`: every domain's rule tree in configuration order, filtered by `?q=`. */
export interface RulesAnswer {
  readonly loadedAtMs: number | null;
  readonly domains: readonly { readonly domain: string; readonly rules: readonly RuleNodeJson[] }[];
  /** Descriptors in the rule set, and how many of them the answer holds. */
  readonly total: number;
  readonly shown: number;
  /** True when the answer was cut short (at about 2000 descriptors): search with `q` to see the rest. */
  readonly truncated: boolean;
}

/** `POST /console/api/session`: who the credentials are, when they may manage (`manage_options`). */
export interface ConsoleSession {
  readonly userId: number;
  readonly email: string;
  /** Sorted. */
  readonly capabilities: readonly string[];
}

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
 * One sample of the live stream. Rates are per second over the interval, summed over every rule key; `hits`
 * counts descriptor hits as `total_hits` does (hits_addend). `over` is what was refused (`over_limit` less
 * `shadow_mode`), `ok` the rest, `shadow` what was over its limit and let through by shadow mode. A rule's
 * own rates follow its stats (`over` = `over_limit`).
 */
export interface TrafficTick {
  readonly atMs: number;
  readonly hits: number;
  readonly ok: number;
  readonly over: number;
  readonly near: number;
  readonly shadow: number;
  readonly healthy: boolean;
  readonly breaker: BreakerState;
  /** Configured rules (by full key) whose counts moved in the interval; empty in the history. */
  readonly rules: Readonly<Record<string, RuleRates>>;
}

/**
 * `GET /console/api/events` (Server-Sent Events), by event name: `hello` on connecting, with the ticks
 * kept (oldest first); a `tick` every interval; `rules` at the tick after a load attempt, failed or not.
 */
export interface LiveEvents {
  readonly hello: { readonly intervalMs: number; readonly history: readonly TrafficTick[] };
  readonly tick: TrafficTick;
  readonly rules: { readonly loadedAtMs: number; readonly ok: boolean };
}
