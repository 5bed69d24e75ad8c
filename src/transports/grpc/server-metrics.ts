import type { StatCounter, StatTimer } from "../../observability/stat-metrics.js";
import type { StatsRegistry } from "../../observability/stats-registry.js";

/**
 * `ratelimit_server.<Method>.total_requests` and `.response_time` (ms) for every unary call on the gRPC
 * port, whichever protocol carried it (the reference's metrics interceptor).
 */
export class ServerMetrics {
  readonly #byMethod = new Map<string, { total: StatCounter; time: StatTimer }>();

  constructor(private readonly registry: StatsRegistry) {}

  /** Records one finished call that started at `startedMs` (a `performance.now()` reading). */
  record(method: string, startedMs: number): void {
    let metrics = this.#byMethod.get(method);
    if (metrics === undefined) {
      metrics = {
        total: this.registry.counter(`ratelimit_server.${method}.total_requests`),
        time: this.registry.timer(`ratelimit_server.${method}.response_time`),
      };
      this.#byMethod.set(method, metrics);
    }
    metrics.total.add(1);
    metrics.time.record(performance.now() - startedMs);
  }
}
