import { type FSWatcher, watch } from "node:fs";
import { dirname } from "node:path";
import type { Server } from "node:tls";
import { messageOf } from "../../errors.js";
import type { Logger } from "../../observability/logger.js";
import { readServerIdentity, type ServerTlsOptions } from "./server-tls.js";

/** Changes closer together than this are one reload (an editor, or a Kubernetes secret's symlink swap). */
const SETTLE_MS = 100;

/**
 * Hot reload of the gRPC server certificate, as the reference's CertProvider: any change in the directory
 * of the certificate and key reloads both; new connections get the new certificate (`setSecureContext`),
 * established ones keep theirs. A pair that fails to load (a half-written file, a key that does not match)
 * is logged and the previous one stays.
 */
export class CertificateReloader {
  readonly #watcher: FSWatcher;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly server: Server,
    private readonly options: ServerTlsOptions,
    private readonly logger: Logger,
  ) {
    this.#watcher = watch(dirname(options.certFile), () => {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.reload(), SETTLE_MS);
      this.#timer.unref();
    });
    // A watched directory that disappears stops reloads; the certificate in use stays valid.
    this.#watcher.on("error", (error) => this.logger.warn(`CertProvider stopped watching: ${error.message}`));
    this.#watcher.unref();
  }

  /** Loads the pair now; true when the server took it. */
  reload(): boolean {
    const { certFile, keyFile } = this.options;
    try {
      this.server.setSecureContext(readServerIdentity(this.options));
    } catch (error) {
      this.logger.error(
        `CertProvider failed to load TLS key pair (${certFile}, ${keyFile}): ${messageOf(error)}`,
      );
      return false;
    }
    this.logger.info(`CertProvider reloaded cert from (${certFile}, ${keyFile})`);
    return true;
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#watcher.close();
  }
}
