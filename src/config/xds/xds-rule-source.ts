import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { messageOf } from "../../errors.js";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../gen/envoy/service/discovery/v3/discovery_pb.js";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
} from "../../gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { clientTlsCredentials } from "../../grpc-client-credentials.js";
import type { RuleCompiler, RuleSource, RuleUpdate } from "../rule-source.js";
import { RATE_LIMIT_CONFIG_TYPE_URL, ruleDocumentFromConfig } from "./rate-limit-config-conversion.js";
import { type ReconnectPolicy, reconnectDelayMs } from "./reconnect-delay.js";

const ADS_METHOD = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";

/** TLS to the management server (CONFIG_GRPC_XDS_*TLS*). */
export interface XdsTlsOptions {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** Name to verify in the server certificate instead of the dialled host. */
  readonly serverName: string;
}

/** Everything the xDS client needs, from CONFIG_GRPC_XDS_* and XDS_CLIENT_* settings. */
export interface XdsRuleSourceOptions {
  readonly serverUrl: string;
  readonly nodeId: string;
  readonly nodeMetadata: Readonly<Record<string, string>>;
  readonly tls: XdsTlsOptions | undefined;
  /** Sent as gRPC metadata on the stream. */
  readonly headers: Readonly<Record<string, string>>;
  /** 0 = gRPC's default. */
  readonly maxReceiveBytes: number;
  /** Between attempts while the server has never answered (±50 % jitter). */
  readonly connectRetryIntervalMs: number;
  /** After an established stream broke: see {@link reconnectDelayMs}. */
  readonly backoff: ReconnectPolicy["backoff"];
  readonly compile: RuleCompiler;
  readonly log: { warn(message: string): void; info(message: string): void; debug(message: string): void };
}

/**
 * Rules pushed by an xDS management server (`CONFIG_TYPE=GRPC_XDS_SOTW`) over one ADS stream, state of the
 * world, as the reference's go-control-plane client: every response replaces the whole set and is ACKed
 * when it compiles, NACKed with the reason (old rules kept) when it does not. The stream is re-opened after
 * any failure.
 */
export class XdsRuleSource implements RuleSource {
  readonly #options: XdsRuleSourceOptions;
  #client: grpc.Client | undefined;
  #call: grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse> | undefined;
  #onUpdate: ((update: RuleUpdate) => void) | undefined;
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Version of the last ACKed response (NACKs repeat it); a reconnect ACKs the last one received. */
  #ackedVersion = "";
  /** Version and nonce of the last response received, ACKed or not (sent again after a reconnect). */
  #receivedVersion = "";
  #receivedNonce = "";
  #failures = 0;
  #everAnswered = false;
  /** Responses are compiled (asynchronously, in slices) one after another, and answered in order. */
  #compiling: Promise<void> = Promise.resolve();
  /** Aborted by {@link stop}: ends a compilation in progress. */
  readonly #stopping = new AbortController();

  constructor(options: XdsRuleSourceOptions) {
    this.#options = options;
  }

  start(onUpdate: (update: RuleUpdate) => void): void {
    this.#onUpdate = onUpdate;
    this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stopping.abort(new Error("the rule source is stopped"));
    clearTimeout(this.#retry);
    this.#call?.cancel();
    this.#client?.close();
    await this.#compiling;
  }

  #connect(): void {
    if (this.#stopped) return;
    const { serverUrl, headers, maxReceiveBytes } = this.#options;
    this.#client?.close();
    const channelOptions: grpc.ChannelOptions = {
      ...(maxReceiveBytes > 0 ? { "grpc.max_receive_message_length": maxReceiveBytes } : {}),
      ...(this.#options.tls?.serverName
        ? { "grpc.ssl_target_name_override": this.#options.tls.serverName }
        : {}),
    };
    const client = new grpc.Client(serverUrl, this.#credentials(), channelOptions);
    this.#client = client;
    const metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    const call = client.makeBidiStreamRequest(
      ADS_METHOD,
      (request: DiscoveryRequest) => Buffer.from(toBinary(DiscoveryRequestSchema, request)),
      (bytes: Buffer) => fromBinary(DiscoveryResponseSchema, bytes),
      metadata,
    );
    this.#call = call;
    call.on("data", (response: DiscoveryResponse) => {
      this.#compiling = this.#compiling
        .then(() => this.#receive(call, response))
        .catch((error: unknown) =>
          this.#options.log.warn(`xDS: response not processed: ${messageOf(error)}`),
        );
    });
    call.on("error", (error: grpc.ServiceError) => this.#broken(call, error.details || error.message));
    call.on("end", () => this.#broken(call, "the server ended the stream"));
    // The go-control-plane client reconnects with an "ACK" of the last response it received, which makes
    // that response the acknowledged one (later NACKs carry its version), even if it had been NACKed.
    this.#ackedVersion = this.#receivedVersion;
    call.write(this.#request(this.#ackedVersion, this.#receivedNonce));
  }

  async #receive(
    call: grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>,
    response: DiscoveryResponse,
  ): Promise<void> {
    if (call !== this.#call || this.#stopped) return;
    this.#everAnswered = true;
    this.#failures = 0;
    this.#receivedVersion = response.versionInfo;
    this.#receivedNonce = response.nonce;
    const { log } = this.#options;
    log.debug(`xDS response version ${response.versionInfo} with ${response.resources.length} resources`);
    let configs: RateLimitConfig[];
    try {
      configs = response.resources.map((any) => {
        if (any.typeUrl !== RATE_LIMIT_CONFIG_TYPE_URL)
          throw new Error(`unexpected resource type ${any.typeUrl}`);
        return fromBinary(RateLimitConfigSchema, any.value);
      });
    } catch (error) {
      // A resource that does not even unmarshal: NACK, and no config event (as the reference).
      call.write(this.#request(this.#ackedVersion, response.nonce, messageOf(error)));
      log.warn(`xDS: rejected version ${response.versionInfo}: ${messageOf(error)}`);
      return;
    }
    let update: RuleUpdate;
    try {
      const documents = configs.map(ruleDocumentFromConfig);
      const rules = await this.#options.compile(documents, this.#stopping.signal);
      const origin = { kind: "xds", version: response.versionInfo, loadedAtMs: Date.now() } as const;
      update = { ok: true, rules: { ...rules, origin } };
    } catch (error) {
      update = { ok: false, error: error instanceof Error ? error : new Error(messageOf(error)) };
    }
    if (this.#stopped) return;
    // Applied even when the stream broke while it compiled: the reconnect acknowledges this version.
    this.#onUpdate?.(update);
    if (update.ok) this.#ackedVersion = response.versionInfo;
    if (call !== this.#call) return;
    if (update.ok) call.write(this.#request(response.versionInfo, response.nonce));
    else call.write(this.#request(this.#ackedVersion, response.nonce, update.error.message));
  }

  #request(versionInfo: string, responseNonce: string, errorMessage?: string): DiscoveryRequest {
    return create(DiscoveryRequestSchema, {
      versionInfo,
      node: { id: this.#options.nodeId, metadata: { ...this.#options.nodeMetadata } },
      resourceNames: [],
      typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
      responseNonce,
      errorDetail: errorMessage === undefined ? undefined : { message: errorMessage },
    });
  }

  #broken(call: grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>, reason: string): void {
    if (call !== this.#call || this.#stopped) return;
    this.#call = undefined;
    call.cancel();
    const delay = this.#retryDelayMs();
    this.#options.log.warn(
      `Failed to receive configuration from xDS Management Server: ${reason}; retrying in ${delay}ms`,
    );
    this.#retry = setTimeout(() => this.#connect(), delay);
  }

  /** The reference's two policies: the connect retry interval until the server first answers, then backoff. */
  #retryDelayMs(): number {
    const attempt = this.#everAnswered ? this.#failures++ : 0;
    return reconnectDelayMs(this.#options, this.#everAnswered, attempt, Math.random);
  }

  #credentials(): grpc.ChannelCredentials {
    const tls = this.#options.tls;
    if (tls === undefined) return grpc.credentials.createInsecure();
    return clientTlsCredentials(tls);
  }
}
