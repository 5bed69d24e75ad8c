// GRPC_CLIENT_TLS_SAN (the reference's verifyClient: x509 Verify with DNSName and ClientAuth):
// which client certificates pass, and the reasons logged for the others.
import type { PeerCertificate, TLSSocket } from "node:tls";
import t from "tap";
import { clientSanProblem } from "../../../src/transports/server/server-tls.js";

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
const socketWith = (certificate: Partial<PeerCertificate>) =>
  ({ getPeerCertificate: () => certificate }) as unknown as TLSSocket;
const cert = (subjectaltname: string | undefined, usages?: string[]) =>
  socketWith({
    subject: { CN: "envoy.mesh.local" } as PeerCertificate["subject"],
    subjectaltname,
    ext_key_usage: usages,
  });

t.test("certificates that pass", async (t) => {
  t.equal(clientSanProblem(cert("DNS:envoy.mesh.local", [CLIENT_AUTH]), "envoy.mesh.local"), undefined);
  t.equal(clientSanProblem(cert("DNS:a.b, DNS:*.mesh.local", [CLIENT_AUTH]), "envoy.mesh.local"), undefined);
  t.equal(clientSanProblem(cert("DNS:envoy.mesh.local"), "envoy.mesh.local"), undefined, "no EKU: any usage");
  t.equal(clientSanProblem(cert("IP Address:10.0.0.7", [CLIENT_AUTH]), "10.0.0.7"), undefined, "an IP SAN");
});

t.test("certificates that fail, with the reason", async (t) => {
  t.equal(clientSanProblem(socketWith({}), "envoy.mesh.local"), "missing client cert");
  t.equal(
    clientSanProblem(cert(undefined, [CLIENT_AUTH]), "envoy.mesh.local"),
    "x509: certificate is not valid for any names, but wanted to match envoy.mesh.local",
    "the CN alone does not count",
  );
  t.equal(
    clientSanProblem(cert("DNS:other.mesh.local", [CLIENT_AUTH]), "envoy.mesh.local"),
    "x509: certificate is valid for DNS:other.mesh.local, not envoy.mesh.local",
  );
  t.equal(
    clientSanProblem(cert("DNS:x.envoy.mesh.local", [CLIENT_AUTH]), "envoy.mesh.local"),
    "x509: certificate is valid for DNS:x.envoy.mesh.local, not envoy.mesh.local",
  );
  t.equal(
    clientSanProblem(cert("DNS:envoy.mesh.local", [SERVER_AUTH]), "envoy.mesh.local"),
    "x509: certificate specifies an incompatible key usage",
  );
});
