import { readFileSync } from "node:fs";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type RateLimitRequestSchema,
  type RateLimitResponse,
  RateLimitResponseSchema,
  RateLimitRequestSchema as RequestSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";

/** PEM files of a TLS client: the CA it trusts, and its own certificate and key for mTLS. */
export interface ClientTlsFiles {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
}

/** grpc-js credentials as Envoy's gRPC client would present them: ALPN h2, optional client certificate. */
export function tlsCredentials(files: ClientTlsFiles): grpc.ChannelCredentials {
  const read = (file: string | undefined) => (file === undefined ? null : readFileSync(file));
  return grpc.credentials.createSsl(readFileSync(files.ca), read(files.key), read(files.cert));
}

/** One ShouldRateLimit call over @grpc/grpc-js with `credentials`; rejects with the grpc-js ServiceError. */
export function shouldRateLimitWith(
  address: string,
  credentials: grpc.ChannelCredentials,
  request: MessageInitShape<typeof RateLimitRequestSchema>,
): Promise<RateLimitResponse> {
  // The server certificate names `localhost` (and 127.0.0.1): SNI carries the name, as Envoy would send it.
  const client = new grpc.Client(address, credentials, { "grpc.ssl_target_name_override": "localhost" });
  return new Promise<RateLimitResponse>((resolve, reject) => {
    client.makeUnaryRequest(
      "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      (message: typeof request) => Buffer.from(toBinary(RequestSchema, create(RequestSchema, message))),
      (bytes: Buffer) => fromBinary(RateLimitResponseSchema, bytes),
      request,
      { deadline: Date.now() + 5000 },
      (error, response) => (error ? reject(error) : resolve(response!)),
    );
  }).finally(() => client.close());
}
