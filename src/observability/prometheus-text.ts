/**
 * Prometheus text exposition format 0.0.4: `# HELP`/`# TYPE` per family, one line per sample, label values
 * escaped, histograms as cumulative `_bucket{le}` lines plus `_sum` and `_count`.
 */

/** Content type of {@link renderFamilies}' output. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Labels = Readonly<Record<string, string>>;

/** A histogram's state: bounds with non-cumulative counts (one more slot than bounds: +Inf). */
export interface HistogramValue {
  readonly bounds: readonly number[];
  readonly counts: ArrayLike<number>;
  readonly sum: number;
  readonly count: number;
}

/** One labelled series: a number (counter, gauge), a histogram, or a summary's sum and count. */
export type SeriesValue =
  | { readonly kind: "counter" | "gauge"; readonly value: number }
  | { readonly kind: "histogram"; readonly value: HistogramValue }
  | { readonly kind: "summary"; readonly value: { readonly sum: number; readonly count: number } };

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: SeriesValue["kind"];
  readonly series: { readonly labels: Labels; readonly value: SeriesValue }[];
}

/** Renders families sorted by name, each family's series sorted by their label text. */
export function renderFamilies(families: Iterable<MetricFamily>): string {
  const lines: string[] = [];
  for (const family of [...families].sort((a, b) => compare(a.name, b.name))) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    const series = family.series.map((s) => ({ text: labelText(s.labels), value: s.value }));
    for (const { text, value } of series.sort((a, b) => compare(a.text, b.text))) {
      renderSeries(lines, family.name, text, value);
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

function renderSeries(lines: string[], name: string, labels: string, series: SeriesValue): void {
  switch (series.kind) {
    case "counter":
    case "gauge":
      lines.push(`${name}${wrap(labels)} ${formatValue(series.value)}`);
      return;
    case "histogram": {
      const { bounds, counts, sum, count } = series.value;
      let cumulative = 0;
      bounds.forEach((bound, i) => {
        cumulative += counts[i] ?? 0;
        lines.push(`${name}_bucket${wrap(join(labels, `le="${formatValue(bound)}"`))} ${cumulative}`);
      });
      lines.push(`${name}_bucket${wrap(join(labels, 'le="+Inf"'))} ${count}`);
      lines.push(`${name}_sum${wrap(labels)} ${formatValue(sum)}`, `${name}_count${wrap(labels)} ${count}`);
      return;
    }
    case "summary":
      lines.push(`${name}_sum${wrap(labels)} ${formatValue(series.value.sum)}`);
      lines.push(`${name}_count${wrap(labels)} ${series.value.count}`);
  }
}

/** `k1="v1",k2="v2"` with keys sorted (as client_golang prints them). */
export function labelText(labels: Labels): string {
  return Object.keys(labels)
    .sort(compare)
    .map((key) => `${key}="${escapeLabelValue(labels[key]!)}"`)
    .join(",");
}

/** A sample value: integers and decimals as JavaScript prints them, `+Inf`/`-Inf`/`NaN` spelled as Go. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

const wrap = (labels: string) => (labels === "" ? "" : `{${labels}}`);
const join = (labels: string, extra: string) => (labels === "" ? extra : `${labels},${extra}`);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
