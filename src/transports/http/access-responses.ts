import type { IncomingMessage, ServerResponse } from "node:http";
import type { AccessDecision, Credentials } from "../../auth/authenticator.js";
import { sendJson } from "./http-responses.js";

/** The realm named in `WWW-Authenticate` challenges. */
export const AUTH_REALM = "ratelimitd";

/** What an HTTP request carries for authentication. */
export function credentialsOf(req: IncomingMessage): Credentials {
  return { authorization: req.headers.authorization, remoteAddress: req.socket.remoteAddress };
}

/**
 * Answers a refused request: 401 with a Basic challenge, 403, or 429 with `Retry-After`; `body` is the
 * API's own error object for that status. `challenge` false leaves the challenge out: the console's API,
 * whose page sends credentials itself, must not make browsers prompt for and then keep sending them
 * (README "Operator console").
 */
export function accessDenied(
  res: ServerResponse,
  decision: Extract<AccessDecision, { allowed: false }>,
  body: unknown,
  challenge = true,
): void {
  const headers: Record<string, string> = {};
  if (decision.status === 401 && challenge) headers["www-authenticate"] = `Basic realm="${AUTH_REALM}"`;
  if (decision.status === 429) headers["retry-after"] = String(decision.retryAfterSeconds ?? 1);
  sendJson(res, decision.status, body, headers);
}
