import type { LimitAlgorithm, Reservation } from "./algorithms/algorithm-limit.js";
import type { JsonObject } from "./json-value.js";
import type { UnitValue } from "./units.js";

/** A monotonically growing count (a statsd counter). */
export interface Counter {
  add(amount: number): void;
}

/** The six per-rule counters of the reference, `ratelimit.service.rate_limit.<key>.<stat>`. */
export interface RuleStats {
  /** The stats key (`domain.key_value…`), before name sanitising. */
  readonly key: string;
  readonly totalHits: Counter;
  readonly overLimit: Counter;
  readonly nearLimit: Counter;
  readonly overLimitWithLocalCache: Counter;
  readonly withinLimit: Counter;
  readonly shadowMode: Counter;
}

/** Where the engine gets counters for keys that only requests reveal (overrides, detailed_metric, …). */
export interface EngineStats {
  /** Stats for a request-derived key; implementations bound how many exist (STATS_MAX_DYNAMIC_KEYS). */
  ruleStats(key: string): RuleStats;
  /** `ratelimit.service.rate_limit.<domain>.domain_not_found`. */
  domainNotFound(domain: string): Counter;
  /** `ratelimit.service.global_shadow_mode`. */
  readonly globalShadowMode: Counter;
}

/** The limit a request is checked against: a configured `rate_limit` or a request-level override. */
export interface RateLimitRule {
  readonly requestsPerUnit: number;
  /** 0 (UNKNOWN) only for unlimited rules without a unit. */
  readonly unit: UnitValue;
  /** `rate_limit.name`; returned in `current_limit.name` and used by `replaces`. */
  readonly name: string;
  readonly replaces: readonly string[];
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  /** Config path `domain.key_value.key2…`, the default stats key and the /rlconfig name. */
  readonly fullKey: string;
  readonly stats: RuleStats;
  readonly metadata: JsonObject | undefined;
  /**
   * The extensions (docs/algorithms.md), each absent for a rule that does not use it: a rule
   * with none of them is the reference's fixed window, decided by the reference's code path.
   * `rate_limit.algorithm` (absent = fixed_window).
   */
  readonly algorithm?: LimitAlgorithm;
  /** `rate_limit.unit_multiplier`: the window is this many units long (absent = 1). */
  readonly unitMultiplier?: number;
  /** `rate_limit.burst`, token bucket only (absent = requests_per_unit). */
  readonly burst?: number;
  /** 0-based place in the descriptor's `rate_limits` list (absent = 0, the first or only limit). */
  readonly limitIndex?: number;
  /** `rate_limit.reservation` (docs/token-budgets.md): checks hold an estimate until charged. */
  readonly reservation?: Reservation;
  /**
   * The further limits of a `rate_limits` list (limitIndex 1, 2, …), checked together with this one, which
   * is the list's first; each has its own name, replaces, algorithm and window, and shares the
   * descriptor's key, stats, shadow/quota flags and metadata. Absent or empty for a single limit.
   */
  readonly stacked?: readonly RateLimitRule[];
}

export type { Reservation };

/** A `*` pattern over `key_value`, split once at load. */
export interface WildcardPattern {
  readonly segments: readonly string[];
  /** Sum of the segments' lengths: a shorter text cannot match. */
  readonly fixedLength: number;
}

/** One configured descriptor. */
export interface RuleNode {
  readonly key: string;
  readonly value: string;
  /** Map key at its level: `key_value`, or `key` when the value is empty. */
  readonly composite: string;
  readonly fullKey: string;
  readonly limit: RateLimitRule | undefined;
  readonly children: RuleLevel | undefined;
  readonly valueToMetric: boolean;
  readonly shareThreshold: boolean;
  /** Set when `composite` contains `*`. */
  readonly wildcard: WildcardPattern | undefined;
  /** The document it was configured in: a rule file's name or an xDS resource's (`POST /explain`). */
  readonly source?: string;
}

/** The descriptors of one nesting level. */
export interface RuleLevel {
  /** Every node by composite key (wildcard nodes too, so a literal value equal to the pattern matches). */
  readonly exact: ReadonlyMap<string, RuleNode>;
  /** Wildcard nodes in configuration order; the first match wins. */
  readonly wildcards: readonly RuleNode[];
}

/** A complete, immutable rule set: swapped atomically on reload. */
export interface RuleSet {
  /** Domains in load order. */
  readonly domains: ReadonlyMap<string, RuleLevel>;
  /** Where the set came from, for `POST /explain`; set by the rule sources. */
  readonly origin?: RuleSetOrigin;
  /**
   * Per domain, the `request_id_key`s of its reservations: descriptor entries with these keys name the
   * request and are taken out before matching (src/engine/request-ids.ts). Absent when no rule has one.
   */
  readonly requestIdKeys?: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * Rule files (each document's name → its path and the SHA-256 of the text compiled, so that a line is only
 * reported from the same text) or an xDS snapshot (its version); with when it was loaded.
 */
export type RuleSetOrigin =
  | {
      readonly kind: "file";
      readonly files: ReadonlyMap<string, { readonly path: string; readonly sha256: string }>;
      readonly loadedAtMs: number;
    }
  | { readonly kind: "xds"; readonly version: string; readonly loadedAtMs: number };
