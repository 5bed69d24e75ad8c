// The JSON the console reads: /console/api/* and POST /explain (README "Explain a decision").

export interface Overview {
  version: string;
  nowMs: number;
  startedAtMs: number;
  health: { healthy: boolean; components: Record<string, boolean> };
  store: { type: string; failureMode: string; breaker: string; pending: number | null };
  rules: {
    source: string;
    location: string;
    version: string | null;
    files: { name: string; path: string; sha256: string }[];
    loadedAtMs: number | null;
    domains: number;
    rules: number;
    lastLoad: { atMs: number; ok: boolean; error: string | null } | null;
    loadSuccesses: number;
    loadErrors: number;
  };
  management: { database: string; ready: boolean };
  sinks: Record<string, boolean>;
  process: { rssBytes: number; heapUsedBytes: number; uptimeSeconds: number };
}

export interface Limit {
  name: string | null;
  requestsPerUnit: number;
  unit: string | null;
  unitMultiplier: number;
  algorithm: string;
  burst: number | null;
  unlimited: boolean;
  shadowMode: boolean;
  quotaMode: boolean;
  detailedMetric: boolean;
  replaces: string[];
  stacked: Limit[];
}

export interface RuleTotals {
  hits: number;
  over: number;
  near: number;
  overWithLocalCache: number;
  within: number;
  shadow: number;
}

export interface RuleNode {
  key: string;
  value: string;
  fullKey: string;
  source: string | null;
  wildcard: boolean;
  shareThreshold: boolean;
  valueToMetric: boolean;
  limit: Limit | null;
  totals: RuleTotals | null;
  children: RuleNode[];
}

export interface RulesAnswer {
  loadedAtMs: number | null;
  domains: { domain: string; rules: RuleNode[] }[];
  /** Descriptors in the rule set, and how many this answer holds (at most 2000: search for the rest). */
  total: number;
  shown: number;
  truncated: boolean;
}

export interface RuleTick {
  hits: number;
  over: number;
  near: number;
  totalHits: number;
  totalOver: number;
  totalNear: number;
}

export interface Tick {
  atMs: number;
  hits: number;
  ok: number;
  over: number;
  near: number;
  shadow: number;
  healthy: boolean;
  breaker: string;
  rules: Record<string, RuleTick>;
}

export interface Entry {
  key: string;
  value: string;
}

export interface SearchLevel {
  entry: Entry;
  tried: { candidate: string; how: string; matched: boolean }[];
  matched: string | null;
  how: string | null;
}

export interface ExplainedLimit {
  name: string;
  algorithm: string;
  requestsPerUnit: number;
  unit: string;
  unitMultiplier: number;
  windowSeconds: number;
  burst?: number;
  counters: { key: string; value: number }[];
  localCacheHit: boolean;
}

/** A descriptor's status as `/json` renders it: proto JSON, so zero values may be absent. */
export interface ExplainStatus {
  code?: string;
  currentLimit?: { name?: string; requestsPerUnit?: number; unit?: string; unitMultiplier?: number };
  limitRemaining?: number;
  durationUntilReset?: string;
}

export interface ExplainedDescriptor {
  entries: Entry[];
  hits: number;
  search: SearchLevel[];
  rule: string | null;
  origin: { file: string; line: number | null } | { xdsResource: string; version: string } | null;
  override: { requestsPerUnit: number; unit: string } | null;
  replaced: boolean;
  unlimited: boolean;
  shadowMode: boolean;
  quotaMode: boolean;
  why: string;
  limits: ExplainedLimit[];
  status?: ExplainStatus;
}

export interface Explanation {
  domain: string;
  overallCode?: string;
  rules: { source: string; loadedAt?: string; version?: string };
  store: string;
  descriptors: ExplainedDescriptor[];
}

export interface User {
  id: number;
  name: string;
  email: string;
}

export interface Migration {
  id: string;
  label: string;
  description: string;
  tags: string[];
  total_batches: number;
  can_run: boolean;
  is_applicable: boolean;
  status: string;
}

export interface Execution {
  id: number;
  migration_id: string;
  operation: string;
  parent_execution_id: number | null;
  start_date_gmt: string | null;
  end_date_gmt: string | null;
  status: string;
  items_total: number;
  items_processed: number;
  created_at: string;
}

export interface LogEntry {
  id: number;
  execution_id: number;
  type: string;
  message: string;
  data: unknown;
  created_at: string;
}
