import { randomUUID } from "node:crypto";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { B3InjectEncoding, B3Propagator } from "@opentelemetry/propagator-b3";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-node";
import type { Logger } from "./logger.js";
import {
  createOtlpExporter,
  type OtlpProtocol,
  routeDiagnostics,
  shutdownTracerProvider,
} from "./otlp-export.js";
import { StoreContextManager } from "./store-context-manager.js";
import { subscribeSpans } from "./trace-subscribers.js";

/** TRACING_* settings (the OTLP endpoint, headers and certificates come from `OTEL_EXPORTER_OTLP_*`). */
export interface TracingOptions {
  readonly serviceName: string;
  readonly serviceNamespace: string;
  /** Empty: a random UUID v4, as the reference. */
  readonly serviceInstanceId: string;
  readonly protocol: OtlpProtocol;
  /** Root sampling ratio in [0, 1]; a sampled or unsampled parent decides for its children. */
  readonly samplingRate: number;
  readonly logger: Logger;
}

/** A running tracer: spans batched to the OTLP exporter until {@link stop}. */
export interface Tracing {
  /** Stops producing spans and flushes the ones still batched (at most 5 s). */
  stop(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing as the reference does: a resource with service.name, service.namespace
 * and service.instance.id, `ParentBased(TraceIdRatioBased(rate))`, a batching OTLP exporter, and W3C
 * trace context + B3 + baggage propagation; then subscribes the span builders to the request channels.
 * Loaded only when TRACING_ENABLED (the SDK takes a quarter of a second to import).
 */
export function startTracing(options: TracingOptions): Tracing {
  routeDiagnostics((message) => options.logger.warn(message));
  const instanceId = options.serviceInstanceId === "" ? randomUUID() : options.serviceInstanceId;
  const exporter = createOtlpExporter(options.protocol);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      "service.name": options.serviceName,
      "service.namespace": options.serviceNamespace,
      "service.instance.id": instanceId,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.samplingRate) }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const contextManager = new StoreContextManager();
  provider.register({
    contextManager,
    propagator: new CompositePropagator({
      propagators: [
        new W3CTraceContextPropagator(),
        new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER }),
        new W3CBaggagePropagator(),
      ],
    }),
  });
  const unsubscribe = subscribeSpans({ contextManager });
  options.logger.info(
    `TracerProvider initialized with following parameters: protocol: ${options.protocol || "http"}, ` +
      `serviceName: ${options.serviceName}, serviceNamespace: ${options.serviceNamespace}, ` +
      `serviceInstanceId: ${instanceId}, samplingRate: ${options.samplingRate.toFixed(6)}`,
  );
  return {
    async stop() {
      unsubscribe();
      await shutdownTracerProvider(provider);
    },
  };
}
