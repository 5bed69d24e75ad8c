// Request bodies for the load generator, built with ratelimitd's own generated schemas (from dist/).
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { RateLimitRequestSchema } from "../../dist/src/gen/envoy/service/ratelimit/v3/rls_pb.js";

/** A RateLimitRequest with `count` descriptors: `bench` domain, entries `k<i>=v` (and `over` for cached runs). */
export function rateLimitRequest(count, key = "k") {
  return create(RateLimitRequestSchema, {
    domain: "bench",
    descriptors: Array.from({ length: count }, (_, i) => ({ entries: [{ key: `${key}${i}`, value: "v" }] })),
  });
}

/** One length-prefixed gRPC message (the body of a unary call). */
export function grpcFrame(message) {
  const bytes = toBinary(RateLimitRequestSchema, message);
  const frame = Buffer.alloc(5 + bytes.length);
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  return frame;
}

/** The message without framing (Connect unary, binary). */
export function protoBody(message) {
  return Buffer.from(toBinary(RateLimitRequestSchema, message));
}

/** proto3 JSON (the /json endpoint). */
export function jsonBody(message) {
  return Buffer.from(toJsonString(RateLimitRequestSchema, message));
}
