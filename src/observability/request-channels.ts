/**
 * Per-request events, published on `node:diagnostics_channel` so that tracing costs one `hasSubscribers`
 * check per request when nobody listens: publishers build an event object only when a channel is active.
 */
import { type Channel, channel } from "node:diagnostics_channel";
import type { IncomingHttpHeaders } from "node:http2";
import type { CounterIncrement, StoreSpanDescription } from "../engine/counter-store.js";
import type { DecisionRequest } from "../engine/decision-request.js";

/** A unary call on the gRPC port, from its arrival to its status. */
export interface GrpcCallEvent {
  /** `/package.Service/Method`. */
  readonly path: string;
  /** Request headers: the raw HTTP/2 ones on the fast path, fetch `Headers` through connect-node. */
  readonly headers: IncomingHttpHeaders | Headers;
  readonly peerAddress: string | undefined;
  readonly peerPort: number | undefined;
  /** `performance.now()` when the call arrived. */
  readonly startedMs: number;
  /** gRPC status code, set before {@link grpcCallEnd} is published. */
  code?: number;
  /** Status message of a failed call. */
  message?: string;
  /** Owned by the subscriber that starts a span for the call. */
  span?: unknown;
}

/**
 * The handler of a call runs inside `grpcCallScope.runStores(event, …)`, so a subscriber can bind its
 * async context (the call's span) for everything the handler does, including the decision and the backend.
 */
export const grpcCallScope = channel("ratelimitd:grpc:call");
/** Published once per call that went through {@link grpcCallScope}, or that failed before its handler ran. */
export const grpcCallEnd = channel("ratelimitd:grpc:call-end");

/** One ShouldRateLimit decision, whichever transport asked. */
export interface DecisionEvent {
  readonly request: DecisionRequest;
  /** Set when the decision failed, before {@link decisionEnd}. */
  error?: unknown;
  /** Owned by the subscriber that starts a span for the decision. */
  span?: unknown;
}

export const decisionStart = channel("ratelimitd:decision:start");
export const decisionEnd = channel("ratelimitd:decision:end");

/** One `increment` call to the counter store (the reference's `Redis Pipeline Execution` span). */
export interface BackendCallEvent {
  /** The store's name: `redis`, `memcache`, `memory`. */
  readonly store: string;
  readonly increments: readonly CounterIncrement[];
  /** The store's span for these increments (`Redis Pipeline Execution`…), asked only when tracing. */
  readonly describeSpan: (increments: readonly CounterIncrement[]) => StoreSpanDescription;
  /** Set when the call failed, before {@link backendEnd}. */
  error?: unknown;
  /** Owned by the subscriber that starts a span for the call. */
  span?: unknown;
}

export const backendStart = channel("ratelimitd:backend:start");
export const backendEnd = channel("ratelimitd:backend:end");

/** A `/json` response about to be written (the reference's `NewJsonHandler Remaining Execution` span). */
export interface JsonResponseEvent {
  /** The RateLimitResponse message. */
  readonly response: unknown;
}

export const jsonResponse = channel("ratelimitd:http:json-response");

/**
 * Runs `decide` between {@link decisionStart} and {@link decisionEnd}, whether it answers directly or
 * with a promise. Call only when `decisionStart.hasSubscribers`.
 */
export function traceDecision<T>(request: DecisionRequest, decide: () => T | Promise<T>): T | Promise<T> {
  const event: DecisionEvent = { request };
  return publishAround(decisionStart, decisionEnd, event, decide);
}

/**
 * Publishes `event` on `start`, runs `run`, and publishes it on `end` once `run` has answered (directly
 * or through its promise), with `event.error` set when it failed.
 */
export function publishAround<T>(
  start: Channel,
  end: Channel,
  event: { error?: unknown },
  run: () => T | Promise<T>,
): T | Promise<T> {
  start.publish(event);
  let result: T | Promise<T>;
  try {
    result = run();
  } catch (error) {
    event.error = error;
    end.publish(event);
    throw error;
  }
  if (!(result instanceof Promise)) {
    end.publish(event);
    return result;
  }
  return result.then(
    (value) => {
      end.publish(event);
      return value;
    },
    (error: unknown) => {
      event.error = error;
      end.publish(event);
      throw error;
    },
  );
}
