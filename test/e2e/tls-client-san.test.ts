// GRPC_CLIENT_TLS_SAN (docs/production.md "TLS and mTLS on the gRPC port"): beyond coming from the client CA, the client
// certificate must name the SAN (DNS subjectAltName, never the CN, as Go's x509) and allow client
// authentication.
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { shouldRateLimitWith, tlsCredentials } from "../helpers/grpc-tls-client.js";
import { pollUntil } from "../helpers/redis-process.js";
import { generateCertificates } from "../helpers/tls-certificates.js";
import { issueLeaf } from "../helpers/tls-leaf.js";

const RULES =
  "domain: san\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 10 }\n";
const root = t.testdir({ config: { "rules.yaml": RULES }, certs: {} });
const certs = await generateCertificates(join(root, "certs"));
const ca = { cert: certs.caCert, key: certs.caKey };
const issue = (name: string, subjectAltNames: string[], usage: ("serverAuth" | "clientAuth")[]) =>
  issueLeaf(certs.dir, ca, {
    name,
    commonName: "envoy.mesh.local",
    subjectAltNames,
    extendedKeyUsage: usage,
  });
const [envoy, wildcard, otherName, serverOnly] = await Promise.all([
  issue("envoy", ["DNS:envoy.mesh.local"], ["clientAuth"]),
  issue("wildcard", ["DNS:*.mesh.local"], ["clientAuth"]),
  issue("other-name", ["DNS:other.mesh.local"], ["clientAuth"]),
  issue("server-only", ["DNS:envoy.mesh.local"], ["serverAuth"]),
]);

const daemon = await startDaemon({
  RUNTIME_ROOT: root,
  GRPC_SERVER_USE_TLS: "true",
  GRPC_SERVER_TLS_CERT: certs.serverCert,
  GRPC_SERVER_TLS_KEY: certs.serverKey,
  GRPC_CLIENT_TLS_CACERT: certs.caCert,
  GRPC_CLIENT_TLS_SAN: "envoy.mesh.local",
});
t.teardown(() => daemon.stop());
const address = `127.0.0.1:${daemon.grpcPort}`;
const call = (files: { cert: string; key: string }, value: string) =>
  shouldRateLimitWith(address, tlsCredentials({ ca: certs.caCert, ...files }), {
    domain: "san",
    descriptors: [{ entries: [{ key: "k", value }] }],
  });

t.test("a client certificate naming the SAN is served, also through a wildcard", async (t) => {
  t.equal((await call(envoy, "envoy")).statuses[0]?.limitRemaining, 9);
  t.equal((await call(wildcard, "wildcard")).statuses[0]?.limitRemaining, 9);
});

t.test("certificates from the right CA without the SAN are refused, and nothing is counted", async (t) => {
  const refused: [string, { cert: string; key: string }, string][] = [
    [
      "another DNS name",
      otherName,
      "error validating client: x509: certificate is valid for DNS:other.mesh.local, not envoy.mesh.local",
    ],
    [
      "no subjectAltName (the CN does not count)",
      { cert: certs.clientCert, key: certs.clientKey },
      "error validating client: x509: certificate is not valid for any names, but wanted to match envoy.mesh.local",
    ],
  ];
  for (const [name, files, logLine] of refused) {
    const error = (await call(files, name).catch((e: unknown) => e)) as grpc.ServiceError | undefined;
    t.equal(error?.code, grpc.status.UNAVAILABLE, name);
    await pollUntil(`log line ${logLine}`, async () => (daemon.logs().includes(logLine) ? true : undefined), {
      timeoutMs: 5000,
    });
    t.pass(`${name}: logged "${logLine}"`);
    t.equal((await call(envoy, name)).statuses[0]?.limitRemaining, 9, `${name}: never reached the service`);
  }
});

t.test("a certificate without client-auth usage fails the handshake", async (t) => {
  const error = (await call(serverOnly, "server-only").catch((e: unknown) => e)) as
    | grpc.ServiceError
    | undefined;
  t.equal(error?.code, grpc.status.UNAVAILABLE);
  t.equal((await call(envoy, "server-only")).statuses[0]?.limitRemaining, 9, "never reached the service");
});
