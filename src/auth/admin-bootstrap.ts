import { randomBytes } from "node:crypto";
import { DatabaseError } from "../errors.js";
import type { PasswordHasher } from "../users/password-hasher.js";
import { checkEmail } from "../users/user-input.js";
import type { UserStore } from "../users/user-store.js";
import { MANAGE_OPTIONS } from "./authenticator.js";
import type { SqlAuthStore } from "./sql-auth-store.js";

/** Options of {@link bootstrapAdmin}. */
export interface AdminBootstrapOptions {
  readonly email: string;
  readonly applicationPassword: string;
  readonly users: UserStore;
  readonly auth: SqlAuthStore;
  readonly hasher: PasswordHasher;
  readonly nowMs: number;
}

/** The name of the application password ADMIN_APP_PASSWORD becomes. */
export const BOOTSTRAP_PASSWORD_NAME = "bootstrap";

/**
 * ADMIN_EMAIL + ADMIN_APP_PASSWORD: makes sure that user exists (created with an unusable random password
 * if not), holds `manage_options`, and has the given application password (named `bootstrap`, replacing an
 * older one of that name). Idempotent, and safe when replicas start together. Resolves with what changed.
 */
export async function bootstrapAdmin(options: AdminBootstrapOptions): Promise<string[]> {
  const { users, auth, nowMs } = options;
  const checked = checkEmail(options.email);
  if (!checked.ok) throw new Error(`ADMIN_EMAIL: ${checked.reason}`);
  const changes: string[] = [];
  let found = await users.findByEmailKey(checked.value.emailKey);
  if (found === undefined) {
    // Never refused for a full queue: the daemon's own set-up, not a client's request.
    const passwordHash = await options.hasher.hash(randomBytes(32).toString("base64"), { unbounded: true });
    const created = await users.create({ name: "Administrator", ...checked.value, passwordHash }, nowMs);
    if (created !== "duplicate") changes.push(`created user ${created.id}`);
    found = await users.findByEmailKey(checked.value.emailKey);
    if (found === undefined)
      throw new Error(`ADMIN_EMAIL: user ${checked.value.email} vanished while being created`);
  }
  const userId = found.user.id;
  if (await auth.grant(userId, MANAGE_OPTIONS, nowMs)) changes.push(`granted ${MANAGE_OPTIONS}`);
  if ((await auth.findApplicationPassword(userId, options.applicationPassword)) === undefined) {
    await auth.revokeApplicationPassword(userId, BOOTSTRAP_PASSWORD_NAME);
    try {
      await auth.addApplicationPassword(userId, BOOTSTRAP_PASSWORD_NAME, options.applicationPassword, nowMs);
      changes.push(`set application password "${BOOTSTRAP_PASSWORD_NAME}"`);
    } catch (error) {
      // Another replica stored the same password a moment ago.
      if (!(error instanceof DatabaseError && error.uniqueViolation)) throw error;
    }
  }
  return changes;
}
