import { readFileSync } from "node:fs";
import { type ConnectionOptions, rootCertificates } from "node:tls";

/** MEMCACHE_TLS_*: client certificate, extra CA, and optional hostname verification. */
export interface MemcachedTlsOptions {
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** Added to the system roots, not replacing them (as the reference's Redis and memcache TLS). */
  readonly caFile: string;
  readonly skipHostnameVerification: boolean;
}

/**
 * Node TLS options from the files, read once here so that a missing file stops start-up with its path
 * rather than failing every connection later.
 */
export function memcachedTlsConnectionOptions(tls: MemcachedTlsOptions): ConnectionOptions {
  const read = (file: string) => (file === "" ? undefined : readFileSync(file));
  const ca = read(tls.caFile);
  return {
    ...(ca ? { ca: [...rootCertificates, ca.toString("utf8")] } : {}),
    ...(tls.clientCertFile ? { cert: read(tls.clientCertFile) } : {}),
    ...(tls.clientKeyFile ? { key: read(tls.clientKeyFile) } : {}),
    // Chain still verified; only the name check is skipped.
    ...(tls.skipHostnameVerification ? { checkServerIdentity: () => undefined } : {}),
  };
}
