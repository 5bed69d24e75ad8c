// gRPC over TLS with client certificates (docs/production.md "TLS and mTLS on the gRPC port"): an Envoy-style mTLS
// client is served on the fast path, Connect clients over HTTP/2 and HTTP/1.1 (ALPN) too, and anything
// without a certificate from the client CA is refused at the handshake.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import t from "tap";
import { RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { shouldRateLimitWith, tlsCredentials } from "../helpers/grpc-tls-client.js";
import { generateCertificates } from "../helpers/tls-certificates.js";

const RULES =
  "domain: tls\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n";
const root = t.testdir({ config: { "rules.yaml": RULES }, certs: {} });
const certs = await generateCertificates(join(root, "certs"));
const daemon = await startDaemon({
  RUNTIME_ROOT: root,
  GRPC_SERVER_USE_TLS: "true",
  GRPC_SERVER_TLS_CERT: certs.serverCert,
  GRPC_SERVER_TLS_KEY: certs.serverKey,
  GRPC_CLIENT_TLS_CACERT: certs.caCert,
});
t.teardown(() => daemon.stop());
const address = `127.0.0.1:${daemon.grpcPort}`;
const request = { domain: "tls", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
const clientFiles = { ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey };

t.test("an Envoy-style gRPC client with a certificate from the client CA is served", async (t) => {
  const first = await shouldRateLimitWith(address, tlsCredentials(clientFiles), request);
  t.equal(first.overallCode, 1, "OK");
  t.equal(first.statuses[0]?.limitRemaining, 99);
  const second = await shouldRateLimitWith(address, tlsCredentials(clientFiles), request);
  t.equal(second.statuses[0]?.limitRemaining, 98, "counted on the same counter");
});

t.test("Connect over HTTP/2 and over HTTP/1.1 (ALPN) with the client certificate", async (t) => {
  const nodeOptions = {
    servername: "localhost",
    ca: readFileSync(certs.caCert),
    cert: readFileSync(certs.clientCert),
    key: readFileSync(certs.clientKey),
  };
  const baseUrl = `https://127.0.0.1:${daemon.grpcPort}`;
  const transports = {
    "gRPC over HTTP/2": createGrpcTransport({ baseUrl, nodeOptions }),
    "Connect over HTTP/1.1": createConnectTransport({ baseUrl, httpVersion: "1.1", nodeOptions }),
  };
  for (const [name, transport] of Object.entries(transports)) {
    const response = await createClient(RateLimitService, transport).shouldRateLimit({
      domain: "tls",
      descriptors: [{ entries: [{ key: "k", value: name }] }],
    });
    t.equal(response.statuses[0]?.limitRemaining, 99, name);
  }
});

t.test("ALPN negotiates h2 and http/1.1; the server presents its certificate", async (t) => {
  for (const protocol of ["h2", "http/1.1"]) {
    const socket = tlsConnect({
      host: "127.0.0.1",
      port: daemon.grpcPort,
      ca: readFileSync(certs.caCert),
      cert: readFileSync(certs.clientCert),
      key: readFileSync(certs.clientKey),
      servername: "localhost",
      ALPNProtocols: [protocol],
    });
    await new Promise<void>((resolve, reject) => socket.once("secureConnect", resolve).once("error", reject));
    t.equal(socket.alpnProtocol, protocol);
    t.equal(socket.getPeerCertificate().subject.CN, "localhost");
    socket.destroy();
  }
});

/** A request for a descriptor value of its own, so that a later good call shows whether it was counted. */
const requestFor = (value: string) => ({ domain: "tls", descriptors: [{ entries: [{ key: "k", value }] }] });

/** What a good client sees for `value`: 99 remaining means no refused request was ever counted. */
const remainingAfterOneGoodCall = async (value: string) =>
  (await shouldRateLimitWith(address, tlsCredentials(clientFiles), requestFor(value))).statuses[0]
    ?.limitRemaining;

t.test(
  "gRPC clients without a certificate from the client CA are refused, and nothing is counted",
  async (t) => {
    const refused: [string, grpc.ChannelCredentials][] = [
      [
        "a certificate signed by another CA",
        tlsCredentials({ ca: certs.caCert, cert: certs.otherClientCert, key: certs.otherClientKey }),
      ],
      ["no client certificate", tlsCredentials({ ca: certs.caCert })],
      ["plaintext h2c", grpc.credentials.createInsecure()],
    ];
    for (const [name, credentials] of refused) {
      const error = (await shouldRateLimitWith(address, credentials, requestFor(name)).catch(
        (e: unknown) => e,
      )) as grpc.ServiceError | undefined;
      t.equal(error?.code, grpc.status.UNAVAILABLE, name);
      t.equal(await remainingAfterOneGoodCall(name), 99, `${name}: never reached the service`);
    }
  },
);

t.test(
  "a Connect client with a certificate from another CA is refused, and nothing is counted",
  async (t) => {
    const transport = createGrpcTransport({
      baseUrl: `https://127.0.0.1:${daemon.grpcPort}`,
      nodeOptions: {
        servername: "localhost",
        ca: readFileSync(certs.caCert),
        cert: readFileSync(certs.otherClientCert),
        key: readFileSync(certs.otherClientKey),
      },
    });
    const error = await createClient(RateLimitService, transport)
      .shouldRateLimit(requestFor("connect-other-ca"))
      .catch((e: unknown) => e);
    t.ok(error instanceof ConnectError, "the call fails");
    // TLS 1.3: the client's handshake completes before the server's alert arrives, so the stream ends as
    // canceled, aborted or unavailable depending on which the client notices first.
    t.ok(
      [Code.Canceled, Code.Aborted, Code.Unavailable].includes((error as ConnectError).code),
      String(error),
    );
    t.equal(await remainingAfterOneGoodCall("connect-other-ca"), 99, "never reached the service");
  },
);
