import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import type { AccessGuard } from "../../auth/authenticator.js";

/** The client's address, put into every call's context by the gRPC listener. */
export const REMOTE_ADDRESS = createContextKey<string | undefined>(undefined, {
  description: "remote address",
});

/** Context values of a call from this socket (for `connectNodeAdapter`'s `contextValues`). */
export function callContextValues(req: { socket: { remoteAddress?: string | undefined } }) {
  return createContextValues().set(REMOTE_ADDRESS, req.socket.remoteAddress);
}

const REFUSALS = {
  401: [Code.Unauthenticated, "Authentication required: use HTTP Basic with an application password."],
  refused: [Code.Unauthenticated, "Invalid e-mail address or application password."],
  403: [Code.PermissionDenied, "Sorry, you are not allowed to do that."],
  429: [Code.ResourceExhausted, "Too many failed authentication attempts; try again later."],
} as const;

/**
 * Checks a call's `authorization` metadata with `guard`; throws UNAUTHENTICATED, PERMISSION_DENIED or
 * RESOURCE_EXHAUSTED (with `retry-after` in the trailers) when the call may not proceed.
 */
export async function requireAccess(guard: AccessGuard | undefined, context: HandlerContext): Promise<void> {
  if (guard === undefined) return;
  const decision = await guard({
    authorization: context.requestHeader.get("authorization") ?? undefined,
    remoteAddress: context.values.get(REMOTE_ADDRESS),
  });
  if (decision.allowed) return;
  const [code, message] = REFUSALS[decision.status === 401 && decision.refused ? "refused" : decision.status];
  const metadata = decision.retryAfterSeconds
    ? { "retry-after": String(decision.retryAfterSeconds) }
    : undefined;
  throw new ConnectError(message, code, metadata);
}

/** Wraps unary handlers so that each first passes {@link requireAccess} (nothing to check without a guard). */
export function guarded(guard: AccessGuard | undefined) {
  return <I, O>(handler: (request: I, context: HandlerContext) => Promise<O>) =>
    async (request: I, context: HandlerContext): Promise<O> => {
      await requireAccess(guard, context);
      return handler(request, context);
    };
}
