// The environments Envoy Gateway and Istio's sample give envoyproxy/ratelimit load as they are, every
// variable with the reference's meaning (README, "Use with Envoy Gateway" and "Use with Istio").
import t from "tap";
import { loadSettings } from "../../../src/settings/load-settings.js";

// envoyproxy/gateway internal/infrastructure/kubernetes/ratelimit/resource.go, with Redis TLS, Prometheus
// and tracing enabled.
const ENVOY_GATEWAY = {
  RUNTIME_ROOT: "/data",
  RUNTIME_SUBDIRECTORY: "ratelimit",
  RUNTIME_IGNOREDOTFILES: "true",
  RUNTIME_WATCH_ROOT: "false",
  LOG_LEVEL: "info",
  USE_STATSD: "false",
  CONFIG_TYPE: "GRPC_XDS_SOTW",
  CONFIG_GRPC_XDS_SERVER_URL: "envoy-gateway:18001",
  CONFIG_GRPC_XDS_NODE_ID: "envoy-ratelimit",
  GRPC_SERVER_USE_TLS: "true",
  GRPC_SERVER_TLS_CERT: "/certs/tls.crt",
  GRPC_SERVER_TLS_KEY: "/certs/tls.key",
  GRPC_SERVER_TLS_CA_CERT: "/certs/ca.crt",
  CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
  CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/certs/tls.crt",
  CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/certs/tls.key",
  CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/certs/ca.crt",
  FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
  REDIS_SOCKET_TYPE: "tcp",
  REDIS_URL: "redis.redis-system.svc.cluster.local:6379",
  REDIS_TLS: "true",
  REDIS_TLS_CLIENT_CERT: "/redis-certs/tls.crt",
  REDIS_TLS_CLIENT_KEY: "/redis-certs/tls.key",
  USE_PROMETHEUS: "true",
  PROMETHEUS_ADDR: ":19001",
  PROMETHEUS_MAPPER_YAML: "/etc/statsd-exporter/conf.yaml",
  TRACING_ENABLED: "true",
  TRACING_SERVICE_NAME: "envoy-ratelimit",
  TRACING_SERVICE_NAMESPACE: "envoy-gateway-system",
  TRACING_SERVICE_INSTANCE_ID: "envoy-ratelimit-5d8f7c9b4-x2x7q",
  TRACING_SAMPLING_RATE: "0.5",
  OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.monitoring.svc.cluster.local:4318",
};

t.test("Envoy Gateway's environment", async (t) => {
  const s = loadSettings(ENVOY_GATEWAY);
  t.strictSame(s.warnings, []);
  t.match(s, {
    configType: "GRPC_XDS_SOTW",
    xdsServerUrl: "envoy-gateway:18001",
    xdsNodeId: "envoy-ratelimit",
    xdsServerUseTls: true,
    xdsClientTlsCert: "/certs/tls.crt",
    xdsServerTlsCacert: "/certs/ca.crt",
    forceStartWithoutInitialConfig: true,
    grpcServerUseTls: true,
    grpcClientTlsCacert: "/certs/ca.crt",
    runtimeIgnoreDotfiles: true,
    runtimeWatchRoot: false,
    logLevel: "info",
    useStatsd: false,
    backend: "redis",
    redisSocketType: "tcp",
    redisTls: true,
    redisTlsClientKey: "/redis-certs/tls.key",
    usePrometheus: true,
    prometheusListen: { host: "", port: 19001 },
    prometheusMapperYaml: "/etc/statsd-exporter/conf.yaml",
    tracingEnabled: true,
    tracingServiceNamespace: "envoy-gateway-system",
    tracingServiceInstanceId: "envoy-ratelimit-5d8f7c9b4-x2x7q",
    tracingSamplingRate: 0.5,
    redisCloseConnectionOnReadonlyError: false,
  });
  t.equal(
    loadSettings({ ...ENVOY_GATEWAY, REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR: "true" })
      .redisCloseConnectionOnReadonlyError,
    true,
  );
});

t.test("Istio's samples/ratelimit environment", async (t) => {
  const s = loadSettings({
    LOG_LEVEL: "debug",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: "redis:6379",
    USE_STATSD: "false",
    RUNTIME_ROOT: "/data",
    RUNTIME_SUBDIRECTORY: "ratelimit",
    RUNTIME_WATCH_ROOT: "false",
    RUNTIME_IGNOREDOTFILES: "true",
    HOST: "::",
    GRPC_HOST: "::",
  });
  t.strictSame(s.warnings, []);
  t.match(s, { host: "::", grpcHost: "::", redisUrl: "redis:6379", runtimeSubdirectory: "ratelimit" });
});
