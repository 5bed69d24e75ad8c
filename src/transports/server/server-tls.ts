import { readFileSync } from "node:fs";
import {
  checkServerIdentity,
  createSecureContext,
  createServer,
  type SecureContextOptions,
  type Server,
  type TLSSocket,
} from "node:tls";
import { SettingsError } from "../../errors.js";

/** GRPC_SERVER_TLS_CERT/KEY and the mTLS settings. */
export interface ServerTlsOptions {
  /** Certificate chain file (PEM); reloaded with the key when their directory changes. */
  readonly certFile: string;
  readonly keyFile: string;
  /** GRPC_CLIENT_TLS_CACERT: clients must present a certificate this CA signed; "" = no client certificates. */
  readonly clientCaFile: string;
  /** GRPC_CLIENT_TLS_SAN: DNS name the client certificate must carry (and client-auth usage); "" = none. */
  readonly clientSan: string;
}

/** The server's identity and client CA read from disk. Throws with the file and the reason. */
export function readServerIdentity(options: ServerTlsOptions): SecureContextOptions {
  const read = (setting: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new SettingsError([`${setting}=${file}: ${(error as Error).message}`]);
    }
  };
  const identity: SecureContextOptions = {
    cert: read("GRPC_SERVER_TLS_CERT", options.certFile),
    key: read("GRPC_SERVER_TLS_KEY", options.keyFile),
    ...(options.clientCaFile === "" ? {} : { ca: read("GRPC_CLIENT_TLS_CACERT", options.clientCaFile) }),
  };
  try {
    // Fails here, with OpenSSL's reason, on unreadable PEM or a key that does not match the certificate.
    createSecureContext(identity);
  } catch (error) {
    throw new SettingsError([`GRPC_SERVER_TLS_CERT/GRPC_SERVER_TLS_KEY: ${(error as Error).message}`]);
  }
  return identity;
}

/**
 * The TLS front of the gRPC port: ALPN offers `h2` and `http/1.1` (gRPC for Envoy; Connect and gRPC-Web
 * for browsers) and each handshaken socket goes to `onSecure`. With a client CA, clients without a
 * certificate from it fail the handshake (Go's RequireAndVerifyClientCert); with a SAN, a verified client
 * whose certificate does not name it is dropped before any request is read, and `onRefused` says why.
 */
export function createTlsServer(
  options: ServerTlsOptions,
  identity: SecureContextOptions,
  onSecure: (socket: TLSSocket) => void,
  onRefused: (reason: string) => void,
): Server {
  const mutual = options.clientCaFile !== "";
  return createServer(
    { ...identity, ALPNProtocols: ["h2", "http/1.1"], requestCert: mutual, rejectUnauthorized: mutual },
    (socket) => {
      const problem =
        mutual && options.clientSan !== "" ? clientSanProblem(socket, options.clientSan) : undefined;
      if (problem === undefined) return onSecure(socket);
      onRefused(problem);
      socket.destroy();
    },
  );
}

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const ANY_USAGE = "2.5.29.37.0";

/**
 * Why a client certificate fails the reference's SAN check (Go `x509.Verify` with `DNSName` and
 * ExtKeyUsage ClientAuth), or undefined when it passes. Like Go, only subjectAltName counts, never the CN.
 */
export function clientSanProblem(socket: TLSSocket, san: string): string | undefined {
  const certificate = socket.getPeerCertificate();
  if (!certificate || Object.keys(certificate).length === 0) return "missing client cert";
  if (!certificate.subjectaltname) {
    return `x509: certificate is not valid for any names, but wanted to match ${san}`;
  }
  const mismatch = checkServerIdentity(san, certificate);
  if (mismatch !== undefined)
    return `x509: certificate is valid for ${certificate.subjectaltname}, not ${san}`;
  const usages = certificate.ext_key_usage;
  if (usages !== undefined && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_USAGE)) {
    return "x509: certificate specifies an incompatible key usage";
  }
  return undefined;
}
