/** grpc-go's `codes.Code` names, which its status errors print (`code = Unavailable`). */
const GO_CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
];

const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

/** Go's texts for the errno values a TCP connect fails with (`syscall.Errno.Error()`). */
const GO_ERRNO_TEXTS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  EHOSTUNREACH: "no route to host",
  ENETUNREACH: "network is unreachable",
  ETIMEDOUT: "connection timed out",
  EADDRNOTAVAIL: "cannot assign requested address",
  ECONNRESET: "connection reset by peer",
};

/** grpc-js's text for a call that found no connection: `… Last error: Error: connect ECONNREFUSED 127.0.0.1:1.` */
const CONNECT_FAILURE = /Last error: (?:Error: )?connect (E[A-Z]+) (.+):(\d+)\./;

/**
 * A failed call's status as grpc-go's status error prints it, which the reference's client shows:
 * `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp
 * 127.0.0.1:1: connect: connection refused"`. grpc-js words the connection failures and deadlines of its
 * status details differently; those are translated, every other description is kept as it is.
 */
export function goStatusText(code: number, details: string): string {
  return `rpc error: code = ${GO_CODE_NAMES[code] ?? `Code(${code})`} desc = ${goDescription(code, details)}`;
}

function goDescription(code: number, details: string): string {
  if (code === DEADLINE_EXCEEDED && details.startsWith("Deadline exceeded"))
    return "context deadline exceeded";
  const failure = code === UNAVAILABLE ? CONNECT_FAILURE.exec(details) : null;
  if (failure === null) return details;
  const [, errno, host, port] = failure;
  const reason = GO_ERRNO_TEXTS[errno!];
  if (reason === undefined) return details;
  // Go writes an IPv6 address in brackets (net.JoinHostPort).
  const address = host!.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  const dialing = `transport: Error while dialing: dial tcp ${address}: connect: ${reason}`;
  return `connection error: desc = ${JSON.stringify(dialing)}`;
}
