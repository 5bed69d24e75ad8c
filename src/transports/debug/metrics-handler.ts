import type { IncomingMessage, ServerResponse } from "node:http";
import { PROMETHEUS_CONTENT_TYPE } from "../../observability/prometheus-text.js";

/**
 * Serves Prometheus' text format from `metrics` (the exporter's current text): on the debug port's
 * `/metrics`, and on PROMETHEUS_ADDR's PROMETHEUS_PATH when USE_PROMETHEUS is on.
 */
export function metricsHandler(metrics: () => Promise<string>) {
  return async (_req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await metrics();
    res.writeHead(200, {
      "content-type": PROMETHEUS_CONTENT_TYPE,
      "content-length": Buffer.byteLength(body),
    });
    res.end(body);
  };
}
