import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { ConnectionOptions } from "node:tls";
import * as grpc from "@grpc/grpc-js";

/** PEM files of a TLS client: the CA it trusts and, for mTLS, its own key and certificate ("" = none). */
export interface ClientTlsFiles {
  readonly caFile: string;
  readonly keyFile: string;
  readonly certFile: string;
}

/**
 * TLS credentials for a grpc-js client (the xDS client, `ratelimit-client`) that also work when the target is
 * an IP address. grpc-js 1.14 always passes the target's host to `tls.connect` as `servername` (SNI), and
 * since Node 25 an IP address there is an error (`ERR_INVALID_ARG_VALUE`, DEP0123: RFC 6066 allows DNS names
 * only), so `127.0.0.1:18000` could not be reached over TLS at all. Without SNI the certificate is still
 * checked against the IP address (its subjectAltName IP entries), as before; DNS names keep their SNI.
 */
export function clientTlsCredentials(files: ClientTlsFiles): grpc.ChannelCredentials {
  const read = (file: string) => (file === "" ? null : readFileSync(file));
  return new WithoutIpServerName(
    grpc.credentials.createSsl(read(files.caFile), read(files.keyFile), read(files.certFile)),
  );
}

/** Delegates to grpc-js's own TLS credentials and drops an IP address from the connector's `servername`. */
class WithoutIpServerName extends grpc.ChannelCredentials {
  readonly #inner: grpc.ChannelCredentials;

  constructor(inner: grpc.ChannelCredentials) {
    super();
    this.#inner = inner;
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: grpc.ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(
    ...args: Parameters<grpc.ChannelCredentials["_createSecureConnector"]>
  ): ReturnType<grpc.ChannelCredentials["_createSecureConnector"]> {
    const connector = this.#inner._createSecureConnector(...args);
    // grpc-js keeps the options it hands to tls.connect on the connector (channel-credentials.ts).
    const options = (connector as { connectionOptions?: ConnectionOptions }).connectionOptions;
    if (options?.servername !== undefined && isIP(options.servername) !== 0) delete options.servername;
    return connector;
  }
}
