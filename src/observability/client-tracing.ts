import {
  type Attributes,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { createOtlpExporter, routeDiagnostics, shutdownTracerProvider } from "./otlp-export.js";

/** The client span of one gRPC call. */
export interface ClientCallSpan {
  /** Trace context to send as request metadata (W3C `traceparent`, `tracestate`, `baggage`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Records the call's gRPC status code (0 for OK) and ends the span. */
  end(code: number, message: string): void;
}

/** A tracer for one command-line run: spans batched to the OTLP exporter until {@link stop}. */
export interface ClientTracing {
  /** Starts the span of a call to `fullMethod` (`/package.Service/Method`) on `target` (`host:port`). */
  startCall(fullMethod: string, target: string): ClientCallSpan;
  /** Exports the spans still batched and shuts the exporter down (at most 5 s). Never rejects. */
  stop(): Promise<void>;
}

/**
 * The reference client's `-oltp-protocol` tracing: resource `service.name=RateLimitClient`, every trace
 * sampled, a batching OTLP exporter, W3C trace context + baggage propagation, and call spans as otelgrpc's
 * unary client interceptor makes them. Loaded only when the flag is set (the SDK is slow to import).
 */
export function startClientTracing(
  protocol: "http" | "grpc",
  warn: (message: string) => void,
): ClientTracing {
  routeDiagnostics(warn);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": "RateLimitClient" }),
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor(createOtlpExporter(protocol))],
  });
  const tracer = provider.getTracer("ratelimitd/grpc-client");
  const propagator = new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  });
  return {
    startCall(fullMethod, target) {
      const name = fullMethod.slice(1);
      const slash = name.lastIndexOf("/");
      const span = tracer.startSpan(
        name,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "rpc.system": "grpc",
            "rpc.service": name.slice(0, slash),
            "rpc.method": name.slice(slash + 1),
            ...serverAddressAttributes(target),
          },
        },
        ROOT_CONTEXT,
      );
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
      return {
        headers,
        end(code, message) {
          span.setAttribute("rpc.grpc.status_code", code);
          // otelgrpc's client side reports every code but OK as an error (its server side only some).
          if (code !== 0) span.setStatus({ code: SpanStatusCode.ERROR, message });
          span.end();
        },
      };
    },
    stop: () => shutdownTracerProvider(provider),
  };
}

/**
 * otelgrpc's `server.address` and `server.port` of the dial target, split as Go's `net.SplitHostPort`:
 * a target it cannot split is the address as a whole, a port that is not a number is left out.
 */
function serverAddressAttributes(target: string): Attributes {
  const parts = /^\[([^\]]*)\]:([^:]*)$/.exec(target) ?? /^([^:[\]]*):([^:]*)$/.exec(target);
  if (parts === null) return { "server.address": target };
  const port = /^[+-]?\d{1,10}$/.test(parts[2]!) ? Number(parts[2]) : Number.NaN;
  return Number.isNaN(port)
    ? { "server.address": parts[1]! }
    : { "server.address": parts[1]!, "server.port": port };
}
