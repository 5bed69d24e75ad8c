import { readFileSync } from "node:fs";
import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type RateLimitRequest,
  RateLimitRequestSchema,
  type RateLimitResponse,
  RateLimitResponseSchema,
} from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { responseText } from "./response-text.js";

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
}

const METHOD = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

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

/** Sends one ShouldRateLimit call over gRPC and prints the answer. Returns the exit code. */
export async function runClient(options: ClientOptions, print: (text: string) => void): Promise<number> {
  const client = new grpc.Client(options.dialString, credentialsOf(options));
  try {
    const deadline = Date.now() + options.timeoutMs;
    try {
      await new Promise<void>((resolve, reject) =>
        client.waitForReady(deadline, (error) => (error ? reject(error) : resolve())),
      );
    } catch (error) {
      print(`error connecting: ${(error as Error).message}`);
      return 1;
    }
    const request = create(RateLimitRequestSchema, {
      domain: options.domain,
      hitsAddend: options.hitsAddend,
      descriptors: options.descriptors.map((entries) => ({
        entries: entries.map(([key, value]) => ({ key, value })),
      })),
    });
    let response: RateLimitResponse;
    try {
      response = await call(client, request, deadline);
    } catch (error) {
      const status = error as grpc.ServiceError;
      print(
        `request error: rpc error: code = ${goCodeName(status.code)} desc = ${status.details ?? status.message}`,
      );
      return 1;
    }
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

/** grpc-go's `codes.Code` names, which its status errors print (`code = Unknown`). */
const GO_CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
];

function goCodeName(code: number): string {
  return GO_CODE_NAMES[code] ?? `Code(${code})`;
}

function call(client: grpc.Client, request: RateLimitRequest, deadline: number): Promise<RateLimitResponse> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      METHOD,
      (message: RateLimitRequest) => Buffer.from(toBinary(RateLimitRequestSchema, message)),
      (bytes: Buffer) => fromBinary(RateLimitResponseSchema, bytes),
      request,
      new grpc.Metadata(),
      { deadline },
      (error, response) => (error ? reject(error) : resolve(response!)),
    );
  });
}

function credentialsOf(options: ClientOptions): grpc.ChannelCredentials {
  if (!options.useTls) return grpc.credentials.createInsecure();
  const read = (file: string) => (file === "" ? null : readFileSync(file));
  return grpc.credentials.createSsl(
    read(options.serverCaFile),
    read(options.keyFile),
    read(options.certFile),
  );
}
