/**
 * What a client may be told about a backend failure. Socket and driver errors name addresses
 * (`connect ECONNREFUSED 10.0.0.7:6379`), and the deployment's label comes from REDIS_URL: both belong in
 * the log only (docs/backends.md "Redis"). Clients get a short reason instead, such as `connection refused`.
 */

/** A failure whose message may name addresses, carrying the short reason a client may be shown. */
export class DetailedFailure extends Error {
  /** The reason without any address or setting: `no answer within 300 ms`, `connection closed`. */
  readonly clientReason: string;

  constructor(message: string, clientReason: string, options?: { cause?: unknown }) {
    super(message, options);
    this.clientReason = clientReason;
  }
}

/** Node's socket error codes, as short reasons. */
const SYSTEM_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ECONNABORTED: "connection aborted",
  EPIPE: "connection closed",
  ETIMEDOUT: "connect timed out",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  // A unix socket path that does not exist, or that this process may not open.
  ENOENT: "no such socket",
  EACCES: "permission denied",
};

/**
 * The short reason for any thrown value: a {@link DetailedFailure}'s own, a socket error's code in words,
 * a TLS failure's code, a Redis error reply's text; `request failed` when nothing safe is known.
 */
export function clientReasonOf(error: unknown): string {
  if (error instanceof DetailedFailure) return error.clientReason;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") {
    const reason = SYSTEM_REASONS[code];
    if (reason !== undefined) return reason;
    // Certificate checks (CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID…) and OpenSSL's ERR_SSL_*: the
    // messages of some name the host, the codes never do.
    if (/CERT|SSL|TLS/.test(code)) return `TLS handshake failed (${code})`;
  }
  // ioredis passes Redis error replies on as ReplyError.
  if (error instanceof Error && error.name === "ReplyError") return replyReason(error.message);
  return "request failed";
}

/** A Redis error reply as clients see it: its text, except redirections (`MOVED 3999 10.0.0.7:6381`). */
export function replyReason(reply: string): string {
  const code = reply.split(" ", 1)[0];
  return code === "MOVED" || code === "ASK" ? `${code} redirection` : reply;
}
