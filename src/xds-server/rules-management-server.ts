import { readFileSync } from "node:fs";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { RATE_LIMIT_CONFIG_TYPE_URL } from "../config/xds/rate-limit-config-conversion.js";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.js";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
} from "../gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";

/** TLS for the management server; `caFile` with `requireClientCert` makes it mTLS. */
export interface ManagementServerTls {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile?: string;
  readonly requireClientCert?: boolean;
}

/** A request a client sent on its stream (its subscription, then an ACK or NACK per response). */
export interface ReceivedRequest {
  readonly nodeId: string;
  readonly nodeMetadata: Readonly<Record<string, unknown>>;
  readonly versionInfo: string;
  readonly responseNonce: string;
  readonly typeUrl: string;
  /** Set on a NACK: why the client refused the response. */
  readonly errorMessage: string | undefined;
  /** The stream's gRPC metadata (extra headers). */
  readonly headers: Readonly<Record<string, string>>;
}

type Stream = grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>;

/**
 * An ADS management server for rate-limit rules (state of the world): every connected client gets the
 * current snapshot once it subscribes, and every new snapshot as it is set. For tests and demos of
 * `CONFIG_TYPE=GRPC_XDS_SOTW`; `ratelimit-xds-server` serves a directory of YAML files with it.
 */
export class RulesManagementServer {
  readonly #server = new grpc.Server();
  readonly #subscribed = new Set<Stream>();
  #snapshot: { version: string; resources: readonly Any[] } | undefined;
  #nonce = 0;
  /** Everything clients sent, oldest first. */
  readonly received: ReceivedRequest[] = [];

  constructor(private readonly onRequest: (request: ReceivedRequest) => void = () => {}) {
    this.#server.addService(
      {
        StreamAggregatedResources: {
          path: "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
          requestStream: true,
          responseStream: true,
          requestDeserialize: (bytes: Buffer) => fromBinary(DiscoveryRequestSchema, bytes),
          requestSerialize: (message: DiscoveryRequest) =>
            Buffer.from(toBinary(DiscoveryRequestSchema, message)),
          responseSerialize: (message: DiscoveryResponse) =>
            Buffer.from(toBinary(DiscoveryResponseSchema, message)),
          responseDeserialize: (bytes: Buffer) => fromBinary(DiscoveryResponseSchema, bytes),
        },
      },
      { StreamAggregatedResources: (stream: Stream) => this.#serve(stream) },
    );
  }

  /** Replaces the snapshot and pushes it to every subscribed client. */
  setSnapshot(version: string, resources: readonly RateLimitConfig[]): void {
    this.setRawSnapshot(
      version,
      resources.map((config) => anyPack(RateLimitConfigSchema, config)),
    );
  }

  /** The same with resources already packed (any bytes: tests push resources that do not unmarshal). */
  setRawSnapshot(version: string, resources: readonly Any[]): void {
    this.#snapshot = { version, resources };
    for (const stream of this.#subscribed) this.#push(stream);
  }

  /** Listens on `host:port` (0 = any free port); resolves with the bound port. */
  listen(host: string, port: number, tls?: ManagementServerTls): Promise<number> {
    const credentials = tls
      ? grpc.ServerCredentials.createSsl(
          tls.caFile ? readFileSync(tls.caFile) : null,
          [{ cert_chain: readFileSync(tls.certFile), private_key: readFileSync(tls.keyFile) }],
          tls.requireClientCert ?? false,
        )
      : grpc.ServerCredentials.createInsecure();
    return new Promise((resolve, reject) =>
      this.#server.bindAsync(`${host}:${port}`, credentials, (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
  }

  /** Closes every stream at once (a "server restart" for clients). */
  close(): void {
    this.#subscribed.clear();
    this.#server.forceShutdown();
  }

  #serve(stream: Stream): void {
    const headers = Object.fromEntries(
      Object.entries(stream.metadata.getMap()).map(([key, value]) => [key, String(value)]),
    );
    stream.on("data", (request: DiscoveryRequest) => {
      const received: ReceivedRequest = {
        nodeId: request.node?.id ?? "",
        nodeMetadata: request.node?.metadata ?? {},
        versionInfo: request.versionInfo,
        responseNonce: request.responseNonce,
        typeUrl: request.typeUrl,
        errorMessage: request.errorDetail?.message,
        headers,
      };
      this.received.push(received);
      this.onRequest(received);
      if (!this.#subscribed.has(stream) && request.typeUrl === RATE_LIMIT_CONFIG_TYPE_URL) {
        this.#subscribed.add(stream);
        this.#push(stream);
      }
    });
    const drop = () => this.#subscribed.delete(stream);
    stream.on("end", () => {
      drop();
      stream.end();
    });
    stream.on("error", drop);
    stream.on("cancelled", drop);
  }

  #push(stream: Stream): void {
    const snapshot = this.#snapshot;
    if (snapshot === undefined) return;
    stream.write(
      create(DiscoveryResponseSchema, {
        versionInfo: snapshot.version,
        typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
        nonce: String(++this.#nonce),
        resources: [...snapshot.resources],
      }),
    );
  }
}
