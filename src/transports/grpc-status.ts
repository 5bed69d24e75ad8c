import { Code, ConnectError } from "@connectrpc/connect";
import { BackendError, DatabaseError, messageOf, OverloadedError, RatelimitdError } from "../errors.js";

/**
 * gRPC status for any error a handler throws — the one place errors become gRPC statuses, as
 * `http-status.ts` beside it is for HTTP. The reference returns plain Go errors, i.e. UNKNOWN with the
 * text; ratelimitd keeps UNKNOWN for the reference's service errors, uses INVALID_ARGUMENT for malformed
 * input (README "Endpoints") and UNAVAILABLE when the backend cannot be reached (Envoy treats every error
 * alike; other clients may retry UNAVAILABLE). A backend failure's text for clients names no address
 * (`redis: connection refused`); its details are logged by the callers.
 */
export function grpcStatusOf(error: unknown): { code: Code; message: string } {
  if (error instanceof ConnectError) return { code: error.code, message: error.rawMessage };
  // The users and migrations APIs never show database details to clients (they are logged instead).
  if (error instanceof DatabaseError) return { code: Code.Internal, message: "server error" };
  if (error instanceof BackendError) return { code: Code.Unavailable, message: error.clientMessage };
  if (error instanceof RatelimitdError)
    return { code: GRPC_CODES[error.code] ?? Code.Unknown, message: error.message };
  return { code: Code.Internal, message: messageOf(error) };
}

const GRPC_CODES: Partial<Record<RatelimitdError["code"], Code>> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  conflict: Code.FailedPrecondition,
  // Shed before anything was done (a full queue): UNAVAILABLE is the status clients retry with backoff
  // (RESOURCE_EXHAUSTED would say the caller ran out of a quota of its own, which is not the case).
  unavailable: Code.Unavailable,
  // grpc-go's status for a message larger than the maximum.
  too_large: Code.ResourceExhausted,
};

/** The same mapping as a ConnectError, for handlers served by connect-node. */
export function connectErrorOf(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  const { code, message } = grpcStatusOf(error);
  // gRPC has no Retry-After header: the hint goes in the trailers, as the failed-login throttle's does.
  const metadata =
    error instanceof OverloadedError ? { "retry-after": String(error.retryAfterSeconds) } : undefined;
  return new ConnectError(message, code, metadata, undefined, error);
}

/** `grpc-message` value: percent-encoding of bytes outside printable ASCII and of `%` (gRPC HTTP/2 spec). */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
