import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

// biome-ignore lint/suspicious/noExplicitAny: proto-loader builds these clients at run time, without static types
type Dynamic = any;

const deps = fileURLToPath(new URL("../../node_modules/@grpc/grpc-js-xds/deps/", import.meta.url));

/**
 * A gRPC client generated at run time from Envoy's own `rls.proto` (the copy shipped with
 * @grpc/grpc-js-xds), independent of ratelimitd's protos and code — what Envoy itself speaks.
 * Field names are the proto names (`overall_code`, `limit_remaining`), enums are names, 64-bit ints strings.
 */
export function envoyRlsClient(address: string): {
  shouldRateLimit(request: object, metadata?: grpc.Metadata): Promise<EnvoyResponse>;
  close(): void;
} {
  const definition = protoLoader.loadSync("envoy/service/ratelimit/v3/rls.proto", {
    includeDirs: [`${deps}envoy-api`, `${deps}xds`, `${deps}googleapis`, `${deps}protoc-gen-validate`],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as Dynamic;
  const rls = new loaded.envoy.service.ratelimit.v3.RateLimitService(
    address,
    grpc.credentials.createInsecure(),
  );
  const unary = (client: Dynamic, method: string, request: object, metadata = new grpc.Metadata()) =>
    new Promise<Dynamic>((resolve, reject) =>
      client[method](request, metadata, (error: grpc.ServiceError | null, response: Dynamic) =>
        error ? reject(error) : resolve(response),
      ),
    );
  return {
    shouldRateLimit: (request, metadata) => unary(rls, "ShouldRateLimit", request, metadata),
    close: () => rls.close(),
  };
}

/** A RateLimitResponse as proto-loader decodes it (proto field names, defaults omitted). */
export interface EnvoyResponse {
  overall_code?: string;
  statuses: {
    code?: string;
    current_limit?: { requests_per_unit?: number; unit?: string; name?: string };
    limit_remaining?: number;
    duration_until_reset?: { seconds?: string };
  }[];
  response_headers_to_add: { key: string; value: string }[];
  dynamic_metadata?: object;
}
