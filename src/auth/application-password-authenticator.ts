import { emailKeyOf, isValidEmailAddress } from "../users/email-address.js";
import type { UserStore } from "../users/user-store.js";
import type { Authentication, Authenticator, Credentials } from "./authenticator.js";
import type { FailedAttemptLimiter } from "./failed-attempt-limiter.js";
import type { SqlAuthStore } from "./sql-auth-store.js";

/** Options of {@link ApplicationPasswordAuthenticator}. */
export interface ApplicationPasswordAuthenticatorOptions {
  readonly users: UserStore;
  readonly auth: SqlAuthStore;
  readonly limiter: FailedAttemptLimiter;
  readonly nowMs?: () => number;
}

/** `last_used` is written at most this often per password, not on every request. */
const RECORD_USE_EVERY_MS = 60_000;

/**
 * HTTP Basic with application passwords: `Authorization: Basic base64(<email>:<application password>)`.
 * The user's own password is not accepted. Failed attempts count against the client's address
 * ({@link FailedAttemptLimiter}); an address over the limit is refused before its credentials are looked at.
 */
export class ApplicationPasswordAuthenticator implements Authenticator {
  readonly #options: ApplicationPasswordAuthenticatorOptions;
  readonly #nowMs: () => number;

  constructor(options: ApplicationPasswordAuthenticatorOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  async authenticate(credentials: Credentials): Promise<Authentication> {
    const basic = parseBasic(credentials.authorization);
    if (basic === undefined) return { kind: "anonymous" };
    const address = credentials.remoteAddress ?? "unknown";
    const { limiter } = this.#options;
    const waitSeconds = limiter.retryAfterSeconds(address);
    if (waitSeconds > 0) return { kind: "throttled", retryAfterSeconds: waitSeconds };
    const principal = await this.#verify(basic.email, basic.password, address);
    if (principal !== undefined) return { kind: "authenticated", principal };
    const blockedSeconds = limiter.recordFailure(address);
    return blockedSeconds > 0
      ? { kind: "throttled", retryAfterSeconds: blockedSeconds }
      : { kind: "refused", reason: "unknown user or wrong application password" };
  }

  async #verify(email: string, password: string, address: string) {
    const { users, auth } = this.#options;
    // No user has an invalid address; and one with a NUL would make PostgreSQL fail the query (a 500).
    const trimmed = email.trim();
    if (!isValidEmailAddress(trimmed)) return undefined;
    const found = await users.findByEmailKey(emailKeyOf(trimmed));
    if (found === undefined) return undefined;
    const applicationPassword = await auth.findApplicationPassword(found.user.id, password);
    if (applicationPassword === undefined) return undefined;
    const now = this.#nowMs();
    if (
      applicationPassword.lastUsedAtMs === null ||
      now - applicationPassword.lastUsedAtMs >= RECORD_USE_EVERY_MS
    ) {
      await auth.recordUse(applicationPassword.id, now, address);
    }
    return {
      userId: found.user.id,
      email: found.user.email,
      capabilities: await auth.capabilitiesOf(found.user.id),
    };
  }
}

/** `Basic <base64(user:password)>` (scheme case-insensitive); undefined for anything else. */
function parseBasic(header: string | undefined): { email: string; password: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "");
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return undefined;
  return { email: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
