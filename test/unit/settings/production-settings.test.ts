// Production settings checked at start-up: PROMETHEUS_ADDR as Go's net.Listen reads it, the certificate and
// key in one directory (the reference's CertProvider), mogrifier tags with values, SAN without a client CA.
import t from "tap";
import { loadSettings } from "../../../src/settings/load-settings.js";
import { problemsOf } from "../../helpers/settings-problems.js";

t.test("PROMETHEUS_ADDR: host:port, [v6]:port or :port", async (t) => {
  const listen = (addr: string) =>
    loadSettings({ USE_PROMETHEUS: "true", PROMETHEUS_ADDR: addr }).prometheusListen;
  t.strictSame(loadSettings({}).prometheusListen, { host: "", port: 9090 }, "default :9090, every interface");
  t.strictSame(listen("127.0.0.1:9102"), { host: "127.0.0.1", port: 9102 });
  t.strictSame(listen("[::1]:9102"), { host: "::1", port: 9102 });
  t.strictSame(listen("metrics.local:80"), { host: "metrics.local", port: 80 });
  for (const addr of ["9090", "host:", ":99999", "a:b:1"]) {
    t.strictSame(problemsOf({ USE_PROMETHEUS: "true", PROMETHEUS_ADDR: addr }), [
      `invalid setting PROMETHEUS_ADDR=${JSON.stringify(addr)}: use host:port or :port`,
    ]);
  }
  t.strictSame(problemsOf({ PROMETHEUS_ADDR: "9090" }), [], "not checked while USE_PROMETHEUS is off");
});

t.test("GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY live in one directory", async (t) => {
  const tls = { GRPC_SERVER_USE_TLS: "true", GRPC_SERVER_TLS_CERT: "/certs/tls.crt" };
  t.strictSame(problemsOf({ ...tls, GRPC_SERVER_TLS_KEY: "/keys/tls.key" }), [
    "GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY must be in the same directory",
  ]);
  t.strictSame(problemsOf({ ...tls, GRPC_SERVER_TLS_KEY: "/certs/tls.key" }), []);
});

t.test("GRPC_CLIENT_TLS_SAN without a client CA is accepted with a warning", async (t) => {
  const s = loadSettings({
    GRPC_SERVER_USE_TLS: "true",
    GRPC_SERVER_TLS_CERT: "/certs/tls.crt",
    GRPC_SERVER_TLS_KEY: "/certs/tls.key",
    GRPC_CLIENT_TLS_SAN: "envoy.mesh.local",
  });
  t.strictSame(s.warnings, [
    "GRPC_CLIENT_TLS_SAN has no effect without GRPC_CLIENT_TLS_CACERT (no client certificates)",
  ]);
});

t.test("a mogrifier tag needs a value, as in the reference", async (t) => {
  t.strictSame(
    problemsOf({
      USE_DOG_STATSD_MOGRIFIERS: "X",
      DOG_STATSD_MOGRIFIER_X_PATTERN: "^(.*)$",
      DOG_STATSD_MOGRIFIER_X_NAME: "n",
      DOG_STATSD_MOGRIFIER_X_TAGS: "domain:$1,empty:",
    }),
    ["no value specified for tag empty for mogrifier X"],
  );
});
