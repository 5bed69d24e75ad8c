import type { Logger } from "../observability/logger.js";
import { emailKeyOf, isValidEmailAddress } from "../users/email-address.js";
import type { UserStore } from "../users/user-store.js";
import type { Authentication, Authenticator, Credentials, Principal } from "./authenticator.js";
import type { FailedAttemptLimiter } from "./failed-attempt-limiter.js";
import { LoginLog } from "./login-log.js";
import type { SqlAuthStore } from "./sql-auth-store.js";

/** Options of {@link ApplicationPasswordAuthenticator}. */
export interface ApplicationPasswordAuthenticatorOptions {
  readonly users: UserStore;
  readonly auth: SqlAuthStore;
  readonly limiter: FailedAttemptLimiter;
  /** Receives a warning per failed login and per address that gets throttled ({@link LoginLog}). */
  readonly logger: Logger;
  readonly nowMs?: () => number;
}

/** `last_used` is written at most this often per password, not on every request. */
const RECORD_USE_EVERY_MS = 60_000;

/**
 * HTTP Basic with application passwords: `Authorization: Basic base64(<email>:<application password>)`.
 * The user's own password is not accepted. Every attempt is counted against the client's address by the
 * {@link FailedAttemptLimiter} before its credentials are looked at, and given back when they are good; an
 * attempt over the limit is refused unchecked.
 */
export class ApplicationPasswordAuthenticator implements Authenticator {
  readonly #options: ApplicationPasswordAuthenticatorOptions;
  readonly #nowMs: () => number;
  readonly #log: LoginLog;

  constructor(options: ApplicationPasswordAuthenticatorOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#log = new LoginLog(options.logger, this.#nowMs);
  }

  async authenticate(credentials: Credentials): Promise<Authentication> {
    const basic = parseBasic(credentials.authorization);
    if (basic === undefined) return { kind: "anonymous" };
    const address = credentials.remoteAddress ?? "unknown";
    const attempt = await this.#options.limiter.attempt(address);
    if (!attempt.allowed) {
      this.#log.throttled(address, basic.email, attempt.retryAfterSeconds);
      return { kind: "throttled", retryAfterSeconds: attempt.retryAfterSeconds };
    }
    let principal: Principal | undefined;
    try {
      principal = await this.#verify(basic.email, basic.password, address);
    } catch (error) {
      // The database failed, not the client: the attempt does not count against it.
      await attempt.release();
      throw error;
    }
    if (principal !== undefined) {
      await attempt.release();
      return { kind: "authenticated", principal };
    }
    this.#log.failed(address, basic.email);
    return { kind: "refused", reason: "unknown user or wrong application password" };
  }

  /** The principal `email` + application `password` name, if they are good. */
  async #verify(email: string, password: string, address: string): Promise<Principal | undefined> {
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
