import { createRequire } from "node:module";

/** One family as parse-prometheus-text-format returns it (values are strings, as in the text). */
export interface ParsedFamily {
  readonly name: string;
  readonly help: string;
  readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
  readonly metrics: readonly {
    readonly value?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly buckets?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }[];
}

// The parser ships CommonJS without type declarations.
const parse = createRequire(import.meta.url)("parse-prometheus-text-format") as (
  text: string,
) => ParsedFamily[];

const METRIC = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const SAMPLE = new RegExp(`^${METRIC}(?:\\{(?:${LABEL})(?:,${LABEL})*\\})? (?:[-+]?[0-9.e+-]+|[-+]Inf|NaN)$`);
const COMMENT = new RegExp(
  `^# (?:HELP ${METRIC} .*|TYPE ${METRIC} (?:counter|gauge|histogram|summary|untyped))$`,
);

/**
 * Parses Prometheus text with parse-prometheus-text-format, after checking every line against the format's
 * grammar (empty lines are allowed; the parser itself is lenient and would read a malformed line as something else). Throws with
 * the offending line; the families are keyed by name.
 */
export function parsePrometheusText(text: string): Map<string, ParsedFamily> {
  if (!text.endsWith("\n")) throw new Error("the exposition does not end with a newline");
  for (const line of text.slice(0, -1).split("\n")) {
    if (line !== "" && !SAMPLE.test(line) && !COMMENT.test(line))
      throw new Error(`not Prometheus text format: ${line}`);
  }
  const families = new Map<string, ParsedFamily>();
  for (const family of parse(text)) {
    if (families.has(family.name)) throw new Error(`family ${family.name} appears twice`);
    families.set(family.name, family);
  }
  return families;
}

/** The value of the series of `family` whose labels are exactly `labels`, as a number. */
export function seriesValue(
  families: Map<string, ParsedFamily>,
  family: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const series = families
    .get(family)
    ?.metrics.find((m) => JSON.stringify(Object.entries(m.labels ?? {}).sort()) === wanted);
  return series?.value === undefined ? undefined : Number(series.value);
}

/** One sample line: metric name (with any `_bucket`/`_sum`/`_count` suffix), labels, value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_PARTS = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Every sample line of the text (parse-prometheus-text-format drops the labels, sums and counts of
 * labelled histograms, so histograms are checked from the lines). Label values are unescaped.
 */
export function samplesOf(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = SAMPLE_PARTS.exec(line);
    if (line.startsWith("#") || match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? "").matchAll(LABEL_PAIR)) {
      labels[key!] = raw!.replace(/\\(.)/g, (_all, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}
