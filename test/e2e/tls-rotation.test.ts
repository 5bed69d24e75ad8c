// Hot reload of the gRPC server certificate (GRPC_SERVER_TLS_CERT is hot-reloaded; docs/production.md, "TLS and
// mTLS on the gRPC port"): replacing the files changes the certificate new connections get, without a restart;
// established connections keep working; a broken pair is logged and the current certificate stays.
import { X509Certificate } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { type ClientHttp2Session, connect as connectHttp2 } from "node:http2";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { pollUntil } from "../helpers/redis-process.js";
import { generateCertificates } from "../helpers/tls-certificates.js";
import { issueLeaf } from "../helpers/tls-leaf.js";

const root = t.testdir({ config: { "rules.yaml": "domain: rot\n" }, certs: {}, staging: {} });
const certs = await generateCertificates(join(root, "certs"));
const ca = readFileSync(certs.caCert);
const daemon = await startDaemon({
  RUNTIME_ROOT: root,
  LOG_LEVEL: "info",
  GRPC_SERVER_USE_TLS: "true",
  GRPC_SERVER_TLS_CERT: certs.serverCert,
  GRPC_SERVER_TLS_KEY: certs.serverKey,
});
t.teardown(() => daemon.stop());

const fingerprintOf = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;

/** The fingerprint of the certificate a new TLS connection gets. */
async function servedFingerprint(): Promise<string> {
  const socket = tlsConnect({ host: "127.0.0.1", port: daemon.grpcPort, ca, servername: "localhost" });
  await new Promise<void>((resolve, reject) => socket.once("secureConnect", resolve).once("error", reject));
  const fingerprint = socket.getPeerCertificate().fingerprint256;
  socket.destroy();
  return fingerprint;
}

/** grpc.health.v1.Health/Check on an existing HTTP/2 session; resolves with the grpc-status trailer. */
function healthCheck(session: ClientHttp2Session): Promise<string> {
  const stream = session.request({
    ":method": "POST",
    ":path": "/grpc.health.v1.Health/Check",
    "content-type": "application/grpc",
    te: "trailers",
  });
  let status = "";
  stream.on("trailers", (trailers) => (status = String(trailers["grpc-status"])));
  stream.resume();
  stream.end(Buffer.alloc(5));
  return new Promise((resolve, reject) => stream.on("close", () => resolve(status)).on("error", reject));
}

/** Issues a new server certificate and moves it over the served files (renames: each file changes at once). */
async function rotate(name: string): Promise<string> {
  const staging = join(root, "staging");
  const leaf = await issueLeaf(
    staging,
    { cert: certs.caCert, key: certs.caKey },
    {
      name,
      commonName: "localhost",
      subjectAltNames: ["DNS:localhost", "IP:127.0.0.1"],
      extendedKeyUsage: ["serverAuth"],
    },
  );
  renameSync(leaf.key, certs.serverKey);
  renameSync(leaf.cert, certs.serverCert);
  return fingerprintOf(certs.serverCert);
}

const waitForServed = (fingerprint: string) =>
  pollUntil(
    "the new certificate served",
    async () => ((await servedFingerprint()) === fingerprint ? true : undefined),
    {
      timeoutMs: 5000,
    },
  );

t.test("new connections get a rotated certificate; established ones keep working", async (t) => {
  t.equal(await servedFingerprint(), fingerprintOf(certs.serverCert), "the initial certificate");
  const session = connectHttp2(`https://localhost:${daemon.grpcPort}`, { ca });
  t.teardown(() => session.close());
  t.equal(await healthCheck(session), "0", "a session opened before the rotation");
  const rotated = await rotate("rotated");
  await waitForServed(rotated);
  t.pass("served after the files changed");
  const logLine = `CertProvider reloaded cert from (${certs.serverCert}, ${certs.serverKey})`;
  t.ok(daemon.logs().includes(logLine), logLine);
  t.equal(await healthCheck(session), "0", "the earlier session still works");
});

t.test("a pair that does not load is logged and the current certificate stays", async (t) => {
  const current = fingerprintOf(certs.serverCert);
  writeFileSync(certs.serverKey, "not a key\n");
  await pollUntil(
    "the failed reload logged",
    async () => (daemon.logs().includes("CertProvider failed to load TLS key pair") ? true : undefined),
    { timeoutMs: 5000 },
  );
  t.equal(await servedFingerprint(), current, "still the last good certificate");
  const next = await rotate("rotated-again");
  await waitForServed(next);
  t.pass("a good pair after a bad one is picked up");
});
