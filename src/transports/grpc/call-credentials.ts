import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import type { AccessDecision, AccessGuard, Credentials } from "../../auth/authenticator.js";

/** The client's address, put into every call's context by the gRPC listener. */
export const REMOTE_ADDRESS = createContextKey<string | undefined>(undefined, {
  description: "remote address",
});

/** Context values of a call from this socket (for `connectNodeAdapter`'s `contextValues`). */
export function callContextValues(req: { socket: { remoteAddress?: string | undefined } }) {
  return createContextValues().set(REMOTE_ADDRESS, req.socket.remoteAddress);
}

const REFUSALS = {
  401: "Authentication required: use HTTP Basic with an application password.",
  refused: "Invalid e-mail address or application password.",
  403: "Sorry, you are not allowed to do that.",
  429: "Too many failed authentication attempts; try again later.",
} as const;

const REFUSAL_CODES = { 401: Code.Unauthenticated, 403: Code.PermissionDenied, 429: Code.ResourceExhausted };

/** What a call carries for authentication: its `authorization` metadata and the client's address. */
export function credentialsOfCall(context: HandlerContext): Credentials {
  return {
    authorization: context.requestHeader.get("authorization") ?? undefined,
    remoteAddress: context.values.get(REMOTE_ADDRESS),
  };
}

/**
 * A refused call's error: UNAUTHENTICATED (401), PERMISSION_DENIED (403) or RESOURCE_EXHAUSTED (429, with
 * `retry-after` in the trailers), with `message`.
 */
export function refusalError(
  decision: Extract<AccessDecision, { allowed: false }>,
  message: string,
): ConnectError {
  const metadata = decision.retryAfterSeconds
    ? { "retry-after": String(decision.retryAfterSeconds) }
    : undefined;
  return new ConnectError(message, REFUSAL_CODES[decision.status], metadata);
}

/** Checks a call's `authorization` metadata with `guard`; throws {@link refusalError} when it may not proceed. */
export async function requireAccess(guard: AccessGuard | undefined, context: HandlerContext): Promise<void> {
  if (guard === undefined) return;
  const decision = await guard(credentialsOfCall(context));
  if (decision.allowed) return;
  throw refusalError(
    decision,
    REFUSALS[decision.status === 401 && decision.refused ? "refused" : decision.status],
  );
}

/** Wraps unary handlers so that each first passes {@link requireAccess} (nothing to check without a guard). */
export function guarded(guard: AccessGuard | undefined) {
  return <I, O>(handler: (request: I, context: HandlerContext) => Promise<O>) =>
    async (request: I, context: HandlerContext): Promise<O> => {
      await requireAccess(guard, context);
      return handler(request, context);
    };
}
