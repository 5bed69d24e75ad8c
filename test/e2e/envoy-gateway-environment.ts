/**
 * Envoy Gateway's deployment of the rate-limit service, on the host (docs/envoy-gateway-istio.md "Use with Envoy Gateway"): a test
 * PKI, the image's `/bin/ratelimit` (a symlink to the compiled `cmd/ratelimit.ts`), a redis-server, an xDS
 * control plane requiring client certificates, and the environment Envoy Gateway's
 * internal/infrastructure/kubernetes/ratelimit/resource.go gives the container — only file paths and ports
 * are moved to the test's own. Rules are written the way Envoy Gateway's xDS translator writes them, and
 * requests the way Envoy's rate-limit filter sends them for those rules. Used by
 * envoy-gateway-deployment.test.ts and envoy-gateway-requests.test.ts.
 */
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";
import type { Test } from "tap";
import type {
  RateLimitRequestSchema,
  RateLimitResponse,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
  type RateLimitDescriptor,
  RateLimitUnit,
} from "../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { RulesManagementServer } from "../../src/xds-server/rules-management-server.js";
import { type DaemonProcess, distEntry, startDaemon } from "../helpers/daemon-process.js";
import { freePort } from "../helpers/free-port.js";
import { tlsCredentials } from "../helpers/grpc-tls-client.js";
import { makeTempDir, removeTempDir } from "../helpers/redis-process.js";
import { type RedisServer, startRedis } from "../helpers/redis-servers.js";
import { generateCertificates, type TlsCertificates } from "../helpers/tls-certificates.js";

const MAPPING = fileURLToPath(
  new URL("../fixtures/envoy-gateway/gateway-dashboard-mapping.yaml", import.meta.url),
);

/** One rule of a route: its limit and the flags Envoy Gateway's translator may set on it. */
export interface GatewayRuleSpec {
  readonly requests: number;
  /** Default HOUR. */
  readonly unit?: RateLimitUnit;
  readonly shadowMode?: boolean;
  readonly quotaMode?: boolean;
  readonly metadata?: RateLimitDescriptor["metadata"];
}

/**
 * A domain as Envoy Gateway's xDS translator writes one: per route a descriptor keyed and valued by the route's
 * name, and under it one descriptor per rule, `rule-<i>-match-0`, carrying that rule's limit.
 */
export function gatewayDomain(
  domain: string,
  routes: Readonly<Record<string, readonly GatewayRuleSpec[]>>,
): RateLimitConfig {
  return create(RateLimitConfigSchema, {
    name: domain,
    domain,
    descriptors: Object.entries(routes).map(([route, rules]) => ({
      key: route,
      value: route,
      descriptors: rules.map((rule, i) => ({
        key: `rule-${i}-match-0`,
        value: `rule-${i}-match-0`,
        rateLimit: { requestsPerUnit: rule.requests, unit: rule.unit ?? RateLimitUnit.HOUR },
        shadowMode: rule.shadowMode ?? false,
        quotaMode: rule.quotaMode ?? false,
        metadata: rule.metadata,
      })),
    })),
  });
}

/** A domain with one route and one rule limited per hour. */
export function gatewayRule(domain: string, route: string, requests: number): RateLimitConfig {
  return gatewayDomain(domain, { [route]: [{ requests }] });
}

type RequestInit = MessageInitShape<typeof RateLimitRequestSchema>;
export type DescriptorInit = NonNullable<RequestInit["descriptors"]>[number];

/** The descriptor Envoy sends for rule `rule` of `route`, with optional hits_addend and limit override. */
export function ruleDescriptor(
  route: string,
  rule = 0,
  extra: Pick<DescriptorInit, "hitsAddend" | "limit"> = {},
): DescriptorInit {
  return {
    entries: [
      { key: route, value: route },
      { key: `rule-${rule}-match-0`, value: `rule-${rule}-match-0` },
    ],
    ...extra,
  };
}

/** The request Envoy sends for the first rule of `route` in `domain`. */
export function request(domain: string, route: string): RequestInit {
  return { domain, descriptors: [ruleDescriptor(route)] };
}

/** Overall code and each status's code and remaining count (1 = OK, 2 = OVER_LIMIT). */
export function decision(response: RateLimitResponse) {
  return [response.overallCode, ...response.statuses.map((s) => [s.code, s.limitRemaining])];
}

/** A daemon started by {@link EnvoyGatewayEnvironment.startRatelimit}. */
export interface GatewayRatelimit {
  readonly daemon: DaemonProcess;
  /** Its gRPC address, for {@link EnvoyGatewayEnvironment.envoy}. */
  readonly address: string;
  /** Where PROMETHEUS_ADDR listens. */
  readonly prometheusPort: number;
}

export interface EnvoyGatewayEnvironment {
  readonly certs: TlsCertificates;
  readonly redis: RedisServer;
  readonly controlPlane: RulesManagementServer;
  /** The credentials Envoy Gateway's Envoys present: a client certificate signed by /certs/ca.crt. */
  readonly envoy: grpc.ChannelCredentials;
  /**
   * Starts `/bin/ratelimit` with Envoy Gateway's environment plus `extraEnv`, and `args` on its command
   * line; stopped at teardown.
   */
  startRatelimit(extraEnv?: Record<string, string>, args?: readonly string[]): Promise<GatewayRatelimit>;
}

/** Certificates, `/bin/ratelimit`, Redis and the control plane; all removed at teardown. */
export async function envoyGatewayEnvironment(t: Test): Promise<EnvoyGatewayEnvironment> {
  const dir = makeTempDir("envoy-gateway");
  t.teardown(() => removeTempDir(dir));
  mkdirSync(join(dir, "certs"));
  const certs = await generateCertificates(join(dir, "certs"));
  // The image's /bin/ratelimit, and its working directory (the default SQLite file goes under it).
  mkdirSync(join(dir, "bin"));
  mkdirSync(join(dir, "app"));
  symlinkSync(distEntry("ratelimit"), join(dir, "bin", "ratelimit"));
  const redis = await startRedis(t);

  const controlPlane = new RulesManagementServer();
  const xdsPort = await controlPlane.listen("127.0.0.1", 0, {
    certFile: certs.serverCert,
    keyFile: certs.serverKey,
    caFile: certs.caCert,
    requireClientCert: true,
  });
  t.teardown(() => controlPlane.close());

  const startRatelimit = async (extraEnv: Record<string, string> = {}, args: readonly string[] = []) => {
    const prometheusPort = await freePort();
    // Envoy Gateway uses one secret for both sides: /certs/tls.crt, tls.key, ca.crt.
    const env = {
      RUNTIME_ROOT: "/data",
      RUNTIME_SUBDIRECTORY: "ratelimit",
      RUNTIME_IGNOREDOTFILES: "true",
      RUNTIME_WATCH_ROOT: "false",
      LOG_LEVEL: "info",
      USE_STATSD: "false",
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${xdsPort}`,
      CONFIG_GRPC_XDS_NODE_ID: "envoy-ratelimit",
      GRPC_SERVER_USE_TLS: "true",
      GRPC_SERVER_TLS_CERT: certs.serverCert,
      GRPC_SERVER_TLS_KEY: certs.serverKey,
      GRPC_SERVER_TLS_CA_CERT: certs.caCert,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.serverCert,
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.serverKey,
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: certs.caCert,
      FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: redis.url,
      USE_PROMETHEUS: "true",
      PROMETHEUS_ADDR: `:${prometheusPort}`,
      PROMETHEUS_MAPPER_YAML: MAPPING,
      // Ports the test chooses (Envoy Gateway's are 8080, 8081 and 6070, the defaults).
      PORT: "0",
      GRPC_PORT: "0",
      DEBUG_PORT: "0",
      ...extraEnv,
    };
    const daemon = await startDaemon(env, 20_000, {
      baseEnv: {},
      cwd: join(dir, "app"),
      entry: join(dir, "bin", "ratelimit"),
      args,
    });
    t.teardown(() => daemon.stop());
    return { daemon, address: `127.0.0.1:${daemon.grpcPort}`, prometheusPort };
  };

  const envoy = tlsCredentials({ ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey });
  return { certs, redis, controlPlane, envoy, startRatelimit };
}
