import type { TrafficTick } from "../console/console-contract";
import { rate } from "./format";

const WIDTH = 1000;
const HEIGHT = 200;
const PAD_LEFT = 44;
const PAD_BOTTOM = 18;
const SERIES = [
  { name: "hits", label: "hits/s" },
  { name: "ok", label: "ok/s" },
  { name: "over", label: "over/s" },
] as const;

/**
 * The last minutes of traffic as inline SVG: hits, ok and over per second, one point per tick. The wide hits
 * line is drawn first so that ok, equal to it while nothing is over, stays visible on top.
 */
export function TrafficChart({ ticks }: { ticks: TrafficTick[] }) {
  const max = niceCeiling(Math.max(1, ...ticks.map((tick) => tick.hits)));
  const plotWidth = WIDTH - PAD_LEFT;
  const plotHeight = HEIGHT - PAD_BOTTOM;
  const step = ticks.length > 1 ? plotWidth / (ticks.length - 1) : 0;
  const y = (value: number) => (plotHeight - (value / max) * (plotHeight - 6)).toFixed(1);
  const points = (name: (typeof SERIES)[number]["name"]) =>
    ticks.map((tick, i) => `${(PAD_LEFT + i * step).toFixed(1)},${y(tick[name])}`).join(" ");
  const seconds = ticks.length;
  return (
    <figure class="chart">
      <svg
        data-testid="traffic-chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label="Requests per second over the last minutes"
      >
        {[0, 0.5, 1].map((share) => (
          <g key={share}>
            <line class="chart-grid" x1={PAD_LEFT} x2={WIDTH} y1={y(max * share)} y2={y(max * share)} />
            <text class="chart-axis" x={PAD_LEFT - 6} y={Number(y(max * share)) + 4} text-anchor="end">
              {rate(max * share)}
            </text>
          </g>
        ))}
        <text class="chart-axis" x={PAD_LEFT} y={HEIGHT - 3}>
          {seconds > 1 ? `−${duration(seconds)}` : "waiting for data…"}
        </text>
        <text class="chart-axis" x={WIDTH} y={HEIGHT - 3} text-anchor="end">
          now
        </text>
        {ticks.length > 1 &&
          SERIES.map((series) => (
            <polyline
              key={series.name}
              class={`chart-line line-${series.name}`}
              points={points(series.name)}
            />
          ))}
      </svg>
      <figcaption class="chart-legend">
        {SERIES.map((series) => (
          <span key={series.name} class={`legend legend-${series.name}`}>
            {series.label}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/** 1, 2, 5 × 10^n at or above `value`: round numbers on the axis. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= value) return factor * power;
  return 10 * power;
}

function duration(seconds: number): string {
  return seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${seconds} s`;
}
