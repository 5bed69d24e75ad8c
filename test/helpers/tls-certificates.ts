import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

/** PEM files written by {@link generateCertificates}; all paths absolute within its directory. */
export interface TlsCertificates {
  readonly dir: string;
  /** The CA that signed the server and client certificates below. */
  readonly caCert: string;
  readonly caKey: string;
  /** Server certificate: CN and SAN `localhost`, SAN IP `127.0.0.1`; usable as server and client. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** Client certificate (CN `ratelimitd-test-client`) signed by {@link caCert}. */
  readonly clientCert: string;
  readonly clientKey: string;
  /** A second, unrelated CA and a client certificate it signed: for "wrong CA is refused" tests. */
  readonly otherCaCert: string;
  readonly otherCaKey: string;
  readonly otherClientCert: string;
  readonly otherClientKey: string;
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
const DAYS = ["-days", "3650"];

/**
 * Writes a test PKI into `dir` with the `openssl` CLI (EC P-256 keys, ten-year validity; about 0.1 s):
 * a CA with a server and a client certificate, and an unrelated second CA with its own client certificate.
 */
export async function generateCertificates(dir: string): Promise<TlsCertificates> {
  const file = (name: string) => join(dir, name);
  const certs: TlsCertificates = {
    dir,
    caCert: file("ca.crt"),
    caKey: file("ca.key"),
    serverCert: file("server.crt"),
    serverKey: file("server.key"),
    clientCert: file("client.crt"),
    clientKey: file("client.key"),
    otherCaCert: file("other-ca.crt"),
    otherCaKey: file("other-ca.key"),
    otherClientCert: file("other-client.crt"),
    otherClientKey: file("other-client.key"),
  };
  await Promise.all([
    createCa(certs.caCert, certs.caKey, "ratelimitd test CA"),
    createCa(certs.otherCaCert, certs.otherCaKey, "unrelated test CA"),
  ]);
  const leafExtensions = "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n";
  // Redis reuses its server certificate as the client certificate for replication and cluster links.
  await writeFile(
    file("server.ext"),
    `${leafExtensions}extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n`,
  );
  await writeFile(file("client.ext"), `${leafExtensions}extendedKeyUsage=clientAuth\n`);
  await Promise.all([
    createLeaf(certs, "server", "localhost", certs.caCert, certs.caKey),
    createLeaf(certs, "client", "ratelimitd-test-client", certs.caCert, certs.caKey),
    createLeaf(certs, "other-client", "unrelated-test-client", certs.otherCaCert, certs.otherCaKey, "client"),
  ]);
  return certs;
}

function createCa(cert: string, key: string, commonName: string): Promise<void> {
  return openssl([
    "req",
    "-x509",
    ...EC_KEY,
    "-keyout",
    key,
    "-out",
    cert,
    ...DAYS,
    "-subj",
    `/CN=${commonName}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
}

async function createLeaf(
  certs: TlsCertificates,
  name: string,
  commonName: string,
  caCert: string,
  caKey: string,
  extensions = name,
): Promise<void> {
  const file = (suffix: string) => join(certs.dir, `${name}.${suffix}`);
  await openssl([
    "req",
    "-new",
    ...EC_KEY,
    "-keyout",
    file("key"),
    "-out",
    file("csr"),
    "-subj",
    `/CN=${commonName}`,
  ]);
  await openssl([
    "x509",
    "-req",
    "-in",
    file("csr"),
    "-CA",
    caCert,
    "-CAkey",
    caKey,
    "-set_serial",
    `0x${randomBytes(8).toString("hex")}`,
    "-out",
    file("crt"),
    ...DAYS,
    "-extfile",
    join(certs.dir, `${extensions}.ext`),
  ]);
}

function openssl(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("openssl", args, { timeout: 20_000 }, (error, _stdout, stderr) => {
      if (error)
        reject(new Error(`openssl ${args.slice(0, 2).join(" ")} failed: ${error.message}\n${stderr}`));
      else resolve();
    });
  });
}
