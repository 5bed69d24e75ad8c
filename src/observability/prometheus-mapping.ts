import * as yaml from "js-yaml";

/** The three kinds of ratelimitd stats, as statsd_exporter's `match_metric_type` sees them. */
export type StatKind = "counter" | "gauge" | "timer";

/** What one stat becomes in Prometheus. */
export interface PrometheusSeries {
  /** Metric name, escaped to Prometheus' alphabet. */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly help: string | undefined;
  /** Timers only: histogram (with `buckets`) or summary (sum and count). */
  readonly observer: "histogram" | "summary";
  /** Histogram upper bounds in the scaled unit, ascending. */
  readonly buckets: readonly number[];
  /** Factor applied to timer observations (milliseconds). */
  readonly scale: number;
}

interface MappingRule {
  readonly pattern: RegExp;
  readonly kind: StatKind | undefined;
  readonly drop: boolean;
  readonly name: string;
  readonly labels: readonly (readonly [string, string])[];
  readonly help: string | undefined;
  readonly observer: "histogram" | "summary";
  readonly buckets: readonly number[];
  readonly scale: number;
}

/** Prometheus' default histogram buckets (client_golang DefBuckets, statsd_exporter's default). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/**
 * A statsd_exporter mapping (the subset the reference's sink relies on): ordered `mappings` with glob or
 * regex `match`, `name` and `labels` using `$n` captures, `match_metric_type`, `timer_type`/`observer_type`,
 * `scale`, `histogram_options.buckets`, `help` and `action: drop`; `defaults` for match type, observer type
 * and buckets. The first matching mapping wins; an unmatched stat keeps its name, escaped.
 */
export class PrometheusMapping {
  private constructor(private readonly rules: readonly MappingRule[]) {}

  /** Parses a mapping file's text; the error names the offending mapping. */
  static parse(text: string): { ok: true; value: PrometheusMapping } | { ok: false; reason: string } {
    try {
      return { ok: true, value: new PrometheusMapping(parseRules(yaml.load(text))) };
    } catch (error) {
      return { ok: false, reason: (error as Error).message };
    }
  }

  /** The series of stat `name`, or undefined when a mapping drops it. */
  map(name: string, kind: StatKind): PrometheusSeries | undefined {
    for (const rule of this.rules) {
      if (rule.kind !== undefined && rule.kind !== kind) continue;
      const match = rule.pattern.exec(name);
      if (match === null) continue;
      if (rule.drop) return undefined;
      const labels: Record<string, string> = {};
      for (const [label, value] of rule.labels) labels[label] = expand(value, match);
      const { help, observer, buckets, scale } = rule;
      return { name: escapeMetricName(expand(rule.name, match)), labels, help, observer, buckets, scale };
    }
    return { name: escapeMetricName(name), labels: {}, help: undefined, ...UNMAPPED_OBSERVER };
  }
}

const UNMAPPED_OBSERVER = { observer: "summary", buckets: DEFAULT_BUCKETS, scale: 1 } as const;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** statsd_exporter's EscapeMetricName: a leading digit gets `_`, anything outside `[a-zA-Z0-9_:]` becomes `_`. */
export function escapeMetricName(name: string): string {
  const escaped = name.replace(/[^a-zA-Z0-9_:]/g, "_");
  return /^[0-9]/.test(escaped) ? `_${escaped}` : escaped;
}

/** Go regexp Expand for `$1`, `${1}` and `$$`. */
function expand(template: string, match: RegExpExecArray): string {
  return template.replace(/\$(\$|\d+|\{(\w+)\})/g, (_all, token: string, braced: string | undefined) =>
    token === "$" ? "$" : (match[Number(braced ?? token)] ?? ""),
  );
}

/** statsd_exporter globs: `*` is one dot-free run of characters; the whole name must match. */
function globPattern(glob: string): RegExp {
  const body = glob
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join("([^.]*)");
  return new RegExp(`^${body}$`);
}

type Raw = Record<string, unknown>;

function parseRules(document: unknown): MappingRule[] {
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw new Error("the mapping file is not a YAML map");
  }
  const { mappings = [], defaults = {} } = document as Raw;
  if (!Array.isArray(mappings)) throw new Error("mappings: not a list");
  const base = defaults as Raw;
  const defaultBuckets = bucketsOf(base.histogram_options, "defaults") ?? DEFAULT_BUCKETS;
  const defaultObserver = observerOf(base.observer_type ?? base.timer_type, "defaults") ?? "summary";
  return mappings.map((entry: unknown, index) => {
    const where = `mappings[${index}]`;
    if (entry === null || typeof entry !== "object") throw new Error(`${where}: not a map`);
    const m = entry as Raw;
    if (typeof m.match !== "string" || m.match === "") throw new Error(`${where}: match is required`);
    const matchType = m.match_type ?? base.match_type ?? "glob";
    if (matchType !== "glob" && matchType !== "regex") throw new Error(`${where}: unknown match_type`);
    const drop = m.action === "drop";
    if (!drop && m.action !== undefined && m.action !== "map") throw new Error(`${where}: unknown action`);
    if (!drop && (typeof m.name !== "string" || m.name === "")) throw new Error(`${where}: name is required`);
    return {
      pattern: matchType === "glob" ? globPattern(m.match) : new RegExp(m.match),
      kind: kindOf(m.match_metric_type, where),
      drop,
      name: typeof m.name === "string" ? m.name : "",
      labels: labelsOf(m.labels, where),
      help: typeof m.help === "string" ? m.help : undefined,
      observer: observerOf(m.observer_type ?? m.timer_type, where) ?? defaultObserver,
      buckets: bucketsOf(m.histogram_options, where) ?? defaultBuckets,
      scale: scaleOf(m.scale, where),
    };
  });
}

function kindOf(value: unknown, where: string): StatKind | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "counter" || value === "gauge") return value;
  if (value === "observer" || value === "timer") return "timer";
  throw new Error(`${where}: unknown match_metric_type ${JSON.stringify(value)}`);
}

function observerOf(value: unknown, where: string): "histogram" | "summary" | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "histogram" || value === "summary") return value;
  throw new Error(`${where}: unknown observer_type ${JSON.stringify(value)}`);
}

function labelsOf(value: unknown, where: string): [string, string][] {
  if (value === undefined || value === null) return [];
  if (typeof value !== "object") throw new Error(`${where}: labels is not a map`);
  return Object.entries(value as Raw).map(([label, template]) => {
    if (!LABEL_NAME.test(label)) throw new Error(`${where}: invalid label name ${JSON.stringify(label)}`);
    return [label, String(template)];
  });
}

function bucketsOf(options: unknown, where: string): number[] | undefined {
  const buckets = (options as Raw | undefined)?.buckets;
  if (buckets === undefined) return undefined;
  if (!Array.isArray(buckets) || buckets.some((b) => typeof b !== "number"))
    throw new Error(`${where}: histogram_options.buckets must be a list of numbers`);
  return [...(buckets as number[])].sort((a, b) => a - b);
}

function scaleOf(value: unknown, where: string): number {
  if (value === undefined) return 1;
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new Error(`${where}: scale is not a number`);
  return value;
}
