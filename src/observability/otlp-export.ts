import { context, DiagLogLevel, diag, propagation, trace } from "@opentelemetry/api";
import { OTLPTraceExporter as OtlpGrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as OtlpHttpExporter } from "@opentelemetry/exporter-trace-otlp-http";
import type { NodeTracerProvider, SpanExporter } from "@opentelemetry/sdk-trace-node";

/** OTLP over HTTP (JSON encoding) or gRPC; `""` means HTTP. */
export type OtlpProtocol = "http" | "grpc" | "";

/** Tracer flush allowed at shutdown (the reference's 5 s). */
const SHUTDOWN_TIMEOUT_MS = 5000;
const DIAG_LOG_INTERVAL_MS = 60_000;

/**
 * An OTLP span exporter. Endpoint, headers, certificates and timeout come from the standard
 * `OTEL_EXPORTER_OTLP_*` variables, read by the exporter itself, as the reference's Go exporters do.
 */
export function createOtlpExporter(protocol: OtlpProtocol): SpanExporter {
  return protocol === "grpc" ? new OtlpGrpcExporter() : new OtlpHttpExporter();
}

/**
 * Flushes the spans still batched and shuts the provider down, waiting at most 5 s, then resets
 * OpenTelemetry's globals. Never rejects.
 */
export async function shutdownTracerProvider(provider: NodeTracerProvider): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SHUTDOWN_TIMEOUT_MS);
  });
  // A collector that cannot be reached at shutdown loses those spans; stopping must not fail for it.
  await Promise.race([provider.shutdown().catch(() => {}), timeout]);
  clearTimeout(timer);
  trace.disable();
  propagation.disable();
  context.disable();
  diag.disable();
}

/** OpenTelemetry's own errors (an unreachable collector, …) as warnings, at most one a minute. */
export function routeDiagnostics(warn: (message: string) => void): void {
  let lastMs = -Infinity;
  const report = (message: string, ...args: unknown[]) => {
    const now = Date.now();
    if (now - lastMs < DIAG_LOG_INTERVAL_MS) return;
    lastMs = now;
    const details = args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ");
    warn(`tracing: ${message}${details === "" ? "" : ` ${details}`} (repeats suppressed for 60s)`);
  };
  const ignore = () => {};
  diag.setLogger(
    { error: report, warn: report, info: ignore, debug: ignore, verbose: ignore },
    DiagLogLevel.WARN,
  );
}
