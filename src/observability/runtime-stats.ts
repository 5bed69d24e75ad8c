import { monitorEventLoopDelay } from "node:perf_hooks";
import type { StatsRegistry } from "./stats-registry.js";

/**
 * Process gauges under `ratelimit.node.*`, ratelimitd's counterpart of the reference's `ratelimit.go.*`:
 * memory, and event-loop delay over the last `windowMs` (the stats flush interval).
 * Returns a function that stops the measuring.
 */
export function registerRuntimeStats(registry: StatsRegistry, windowMs: number): () => void {
  const scope = "ratelimit.node";
  const memory = () => process.memoryUsage();
  registry.gauge(`${scope}.rss_bytes`, undefined, () => memory().rss);
  registry.gauge(`${scope}.heap_used_bytes`, undefined, () => memory().heapUsed);
  registry.gauge(`${scope}.heap_total_bytes`, undefined, () => memory().heapTotal);
  registry.gauge(`${scope}.external_bytes`, undefined, () => memory().external);
  registry.gauge(`${scope}.uptime_seconds`, undefined, () => Math.floor(process.uptime()));
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let last = { p99: 0, max: 0 };
  const timer = setInterval(
    () => {
      last = { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 };
      delay.reset();
    },
    Math.max(1000, windowMs),
  );
  timer.unref();
  registry.gauge(`${scope}.event_loop_delay_p99_ms`, undefined, () => last.p99);
  registry.gauge(`${scope}.event_loop_delay_max_ms`, undefined, () => last.max);
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}
