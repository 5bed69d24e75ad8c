import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type RateLimitRequest,
  RateLimitRequestSchema,
  type RateLimitResponse,
  RateLimitResponseSchema,
} from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { clientTlsCredentials } from "../grpc-client-credentials.js";
import type { ClientCallSpan, ClientTracing } from "../observability/client-tracing.js";
import { responseText } from "../observability/response-text.js";
import { goStatusText } from "./go-status-text.js";

/** `-oltp-protocol`: OTLP over HTTP or gRPC for the call's span; `""` disables tracing. */
export type OltpProtocol = "" | "http" | "grpc";

/** What the client sends and how. */
export interface ClientOptions {
  readonly dialString: string;
  readonly domain: string;
  /** One list of [key, value] entries per descriptor. */
  readonly descriptors: readonly (readonly [string, string])[][];
  readonly hitsAddend: number;
  readonly useTls: boolean;
  readonly serverCaFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly timeoutMs: number;
  readonly json: boolean;
  readonly oltpProtocol: OltpProtocol;
}

const METHOD = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** Whether a `-oltp-protocol` value is one the reference accepts. */
export function isOltpProtocol(text: string): text is OltpProtocol {
  return text === "" || text === "http" || text === "grpc";
}

/**
 * Parses one `-descriptors` value, `k=v,k2=v2`, into entries; undefined when a pair does not split into
 * exactly two parts on `=` (the reference's `invalid descriptor list`).
 */
export function parseDescriptorFlag(text: string): [string, string][] | undefined {
  const entries: [string, string][] = [];
  for (const pair of text.split(",")) {
    const parts = pair.split("=");
    if (parts.length !== 2) return undefined;
    entries.push([parts[0]!, parts[1]!]);
  }
  return entries;
}

/** The RateLimitRequest the flags describe: `-domain`, each `-descriptors` in order, `-hits_addend`. */
export function rateLimitRequestOf(
  domain: string,
  descriptors: readonly (readonly [string, string])[][],
  hitsAddend: number,
): RateLimitRequest {
  return create(RateLimitRequestSchema, {
    domain,
    hitsAddend,
    descriptors: descriptors.map((entries) => ({ entries: entries.map(([key, value]) => ({ key, value })) })),
  });
}

/**
 * Sends one ShouldRateLimit call over gRPC and prints the answer. Returns the exit code. With
 * `-oltp-protocol`, the call runs in a client span whose trace context goes along as metadata, and the span
 * is exported before this returns.
 */
export async function runClient(options: ClientOptions, print: (text: string) => void): Promise<number> {
  if (options.oltpProtocol === "") return callOnce(options, print, undefined);
  const { startClientTracing } = await import("../observability/client-tracing.js");
  const tracing = startClientTracing(options.oltpProtocol, (message) => process.stderr.write(`${message}\n`));
  try {
    return await callOnce(options, print, tracing);
  } finally {
    await tracing.stop();
  }
}

async function callOnce(
  options: ClientOptions,
  print: (text: string) => void,
  tracing: ClientTracing | undefined,
): Promise<number> {
  let client: grpc.Client;
  try {
    client = new grpc.Client(options.dialString, credentialsOf(options));
  } catch (error) {
    // As the reference's grpc.Dial: only options it cannot use fail here (unreadable TLS files, …).
    print(`error connecting: ${(error as Error).message}`);
    return 1;
  }
  const span: ClientCallSpan | undefined = tracing?.startCall(METHOD, options.dialString);
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(span?.headers ?? {})) metadata.set(key, value);
  try {
    const request = rateLimitRequestOf(options.domain, options.descriptors, options.hitsAddend);
    let response: RateLimitResponse;
    try {
      // Not waiting for a connection (grpc-go's default, which the reference's client keeps): a refused
      // connection fails the call at once with UNAVAILABLE instead of after the whole deadline.
      response = await call(client, request, metadata, Date.now() + options.timeoutMs);
    } catch (error) {
      const status = error as grpc.ServiceError;
      const details = status.details ?? status.message;
      span?.end(status.code, details);
      print(`request error: ${goStatusText(status.code, details)}`);
      return 1;
    }
    span?.end(0, "");
    print(
      options.json
        ? toJsonString(RateLimitResponseSchema, response, { prettySpaces: 2 })
        : `response: ${responseText(response)}`,
    );
    return 0;
  } finally {
    client.close();
  }
}

function call(
  client: grpc.Client,
  request: RateLimitRequest,
  metadata: grpc.Metadata,
  deadline: number,
): Promise<RateLimitResponse> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      METHOD,
      (message: RateLimitRequest) => Buffer.from(toBinary(RateLimitRequestSchema, message)),
      (bytes: Buffer) => fromBinary(RateLimitResponseSchema, bytes),
      request,
      metadata,
      { deadline },
      (error, response) => (error ? reject(error) : resolve(response!)),
    );
  });
}

function credentialsOf(options: ClientOptions): grpc.ChannelCredentials {
  if (!options.useTls) return grpc.credentials.createInsecure();
  return clientTlsCredentials({
    caFile: options.serverCaFile,
    keyFile: options.keyFile,
    certFile: options.certFile,
  });
}
