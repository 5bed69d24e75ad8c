import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { StreamResponse, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { type GrpcCallEvent, grpcCallEnd, grpcCallScope } from "../../observability/request-channels.js";
import { grpcStatusOf } from "../grpc-status.js";
import { type CallDone, serveUnary, type UnaryMethod } from "./grpc-unary.js";

/**
 * The fast path with the call published on the request channels (only used while someone listens): the
 * method runs inside {@link grpcCallScope} and the status is published on {@link grpcCallEnd} once the
 * answer is written.
 */
export function serveTracedUnary(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  method: UnaryMethod,
  onDone: CallDone,
): void {
  const socket = stream.session?.socket;
  const event: GrpcCallEvent = {
    path: method.path,
    headers,
    peerAddress: socket?.remoteAddress,
    peerPort: socket?.remotePort,
    startedMs: performance.now(),
  };
  const traced: UnaryMethod = {
    ...method,
    call: (request) => grpcCallScope.runStores(event, method.call, undefined, request),
  };
  serveUnary(stream, headers, traced, (_traced, startedMs, code, message, error) => {
    onDone(method, startedMs, code, message, error);
    event.code = code;
    event.message = message;
    grpcCallEnd.publish(event);
  });
}

/** A unary connect-node call (gRPC with compression, gRPC-Web, Connect) published like the fast path. */
export async function traceConnectCall(
  request: UnaryRequest,
  next: (request: UnaryRequest) => Promise<UnaryResponse | StreamResponse>,
): Promise<UnaryResponse | StreamResponse> {
  const event: GrpcCallEvent = {
    path: `/${request.service.typeName}/${request.method.name}`,
    headers: request.header,
    peerAddress: undefined,
    peerPort: undefined,
    startedMs: performance.now(),
  };
  try {
    const response = await grpcCallScope.runStores(event, next, undefined, request);
    event.code = 0;
    return response;
  } catch (error) {
    const status = grpcStatusOf(error);
    event.code = status.code;
    event.message = status.message;
    throw error;
  } finally {
    grpcCallEnd.publish(event);
  }
}
