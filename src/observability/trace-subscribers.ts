import {
  type Context,
  defaultTextMapGetter,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import type { RateLimitResponse } from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  type BackendCallEvent,
  backendEnd,
  backendStart,
  type DecisionEvent,
  decisionEnd,
  decisionStart,
  type GrpcCallEvent,
  grpcCallEnd,
  grpcCallScope,
  type JsonResponseEvent,
  jsonResponse,
} from "./request-channels.js";
import { requestText } from "./request-text.js";
import { responseText } from "./response-text.js";
import type { StoreContextManager } from "./store-context-manager.js";

/** Where the span subscribers keep the current span. */
export interface SpanSubscriberOptions {
  readonly contextManager: StoreContextManager;
}

/** gRPC codes otelgrpc reports as server errors (span status Error); the others leave the status unset. */
const SERVER_ERROR_CODES = new Set([2, 4, 12, 13, 14, 15]);

const headersGetter: TextMapGetter<Headers> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: (carrier) => [...carrier.keys()],
};

/**
 * Turns the request channels into the reference's spans: the otelgrpc-style server span of every unary
 * gRPC call (parent taken from W3C/B3 headers), `ShouldRateLimit Execution`, the backend span as the
 * store describes it (`Redis Pipeline Execution`, `Memcached Fetch Execution`…) and
 * `NewJsonHandler Remaining Execution`.
 * Returns a function that unsubscribes everything.
 */
export function subscribeSpans(options: SpanSubscriberOptions): () => void {
  const grpcTracer = trace.getTracer("ratelimitd/grpc");
  const serviceTracer = trace.getTracer("ratelimitd/service");
  const backendTracer = trace.getTracer("ratelimitd/backend");
  const httpTracer = trace.getTracer("ratelimitd/http");

  const startCall = (event: GrpcCallEvent): Context => {
    const parent = propagation.extract(
      ROOT_CONTEXT,
      event.headers,
      event.headers instanceof Headers ? headersGetter : defaultTextMapGetter,
    );
    const slash = event.path.lastIndexOf("/");
    const span = grpcTracer.startSpan(
      event.path.slice(1),
      { kind: SpanKind.SERVER, startTime: performance.timeOrigin + event.startedMs },
      parent,
    );
    if (span.isRecording()) {
      span.setAttributes({
        "rpc.system": "grpc",
        "rpc.service": event.path.slice(1, slash),
        "rpc.method": event.path.slice(slash + 1),
      });
      if (event.peerAddress !== undefined) span.setAttribute("network.peer.address", event.peerAddress);
      if (event.peerPort !== undefined) span.setAttribute("network.peer.port", event.peerPort);
    }
    event.span = span;
    // The handler runs in this context: baggage from the headers, and the call's span as parent.
    return trace.setSpan(parent, span);
  };
  const callContext = (message: unknown): Context => startCall(message as GrpcCallEvent);
  const endCall = (message: unknown) => {
    const event = message as GrpcCallEvent;
    // A call refused before its handler ran (framing, size) never entered the scope.
    if (event.span === undefined) startCall(event);
    const span = event.span as Span;
    const code = event.code ?? 0;
    span.setAttribute("rpc.grpc.status_code", code);
    if (SERVER_ERROR_CODES.has(code)) span.setStatus({ code: SpanStatusCode.ERROR, message: event.message });
    span.end();
  };

  const startDecision = (message: unknown) => {
    const event = message as DecisionEvent;
    const span = serviceTracer.startSpan("ShouldRateLimit Execution");
    if (span.isRecording()) {
      span.setAttributes({ domain: event.request.domain, "request string": requestText(event.request) });
    }
    event.span = span;
  };
  const startBackend = (message: unknown) => {
    const event = message as BackendCallEvent;
    const { name, attributes } = event.describeSpan(event.increments);
    event.span = backendTracer.startSpan(name, { attributes });
  };
  const endSpan = (message: unknown) => {
    const event = message as DecisionEvent | BackendCallEvent;
    const span = event.span as Span;
    if (event.error !== undefined)
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(event.error) });
    span.end();
  };
  const onJsonResponse = (message: unknown) => {
    const span = httpTracer.startSpan("NewJsonHandler Remaining Execution");
    if (span.isRecording()) {
      span.setAttribute(
        "response",
        responseText((message as JsonResponseEvent).response as RateLimitResponse),
      );
    }
    span.end();
  };

  const { storage } = options.contextManager;
  grpcCallScope.bindStore(storage, callContext);
  const subscriptions: [typeof grpcCallEnd, (message: unknown) => void][] = [
    [grpcCallEnd, endCall],
    [decisionStart, startDecision],
    [decisionEnd, endSpan],
    [backendStart, startBackend],
    [backendEnd, endSpan],
    [jsonResponse, onJsonResponse],
  ];
  for (const [channel, listener] of subscriptions) channel.subscribe(listener);
  return () => {
    grpcCallScope.unbindStore(storage);
    for (const [channel, listener] of subscriptions) channel.unsubscribe(listener);
  };
}
