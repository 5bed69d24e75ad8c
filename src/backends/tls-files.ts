import { readFileSync } from "node:fs";
import { type ConnectionOptions, rootCertificates } from "node:tls";

/** TLS to a backend from files (REDIS_TLS_*, MEMCACHE_TLS_*); empty strings are unset. */
export interface TlsFiles {
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
export function tlsOptionsFromFiles(files: TlsFiles): ConnectionOptions {
  const read = (file: string) => (file === "" ? undefined : readFileSync(file));
  const ca = read(files.caFile);
  return {
    ...(ca ? { ca: [...rootCertificates, ca.toString("utf8")] } : {}),
    ...(files.clientCertFile ? { cert: read(files.clientCertFile) } : {}),
    ...(files.clientKeyFile ? { key: read(files.clientKeyFile) } : {}),
    // Chain still verified; only the name check is skipped.
    ...(files.skipHostnameVerification ? { checkServerIdentity: () => undefined } : {}),
  };
}
