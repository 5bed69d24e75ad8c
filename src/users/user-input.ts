import { emailKeyOf, isValidEmailAddress } from "./email-address.js";
import { MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH } from "./user.js";

/** What a create asks for (already typed by the transport). */
export interface CreateUserInput {
  readonly name: string;
  readonly email: string;
  readonly password: string;
}

/** What an update asks for; absent attributes do not change. */
export interface UpdateUserInput {
  readonly name?: string | undefined;
  readonly email?: string | undefined;
  readonly password?: string | undefined;
}

/** A validated attribute set, or the reason it is a bad request (for the debug log, never the client). */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Trimmed name of 1–255 characters, without NUL (PostgreSQL cannot store it). */
export function checkName(name: string): Checked<string> {
  const trimmed = wellFormed(name).trim();
  const length = [...trimmed].length;
  if (length === 0) return { ok: false, reason: "name is empty" };
  if (trimmed.includes("\u0000")) return { ok: false, reason: "name contains a NUL character" };
  if (length > MAX_NAME_LENGTH)
    return { ok: false, reason: `name is longer than ${MAX_NAME_LENGTH} characters` };
  return { ok: true, value: trimmed };
}

/** Trimmed valid e-mail address, with its normalised key. */
export function checkEmail(email: string): Checked<{ email: string; emailKey: string }> {
  const trimmed = wellFormed(email).trim();
  if (!isValidEmailAddress(trimmed)) return { ok: false, reason: "email is not a valid address" };
  return { ok: true, value: { email: trimmed, emailKey: emailKeyOf(trimmed) } };
}

/** Non-empty password of at most 1024 characters, taken as given (not trimmed). */
export function checkPassword(password: string): Checked<string> {
  if (password.length === 0) return { ok: false, reason: "password is empty" };
  // A code point is at most two UTF-16 units: a longer string is refused without counting (gRPC messages
  // may carry megabytes).
  if (password.length > 2 * MAX_PASSWORD_LENGTH || [...password].length > MAX_PASSWORD_LENGTH) {
    return { ok: false, reason: `password is longer than ${MAX_PASSWORD_LENGTH} characters` };
  }
  return { ok: true, value: password };
}

/** A positive integer id from a path segment or request field; anything else names no user. */
export function userIdOf(value: string | number | bigint): number | undefined {
  if (typeof value === "string") {
    if (!/^[1-9][0-9]{0,15}$/.test(value)) return undefined;
    value = Number(value);
  }
  const id = Number(value);
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/**
 * Lone UTF-16 surrogates (JSON allows `"\ud800"`) become U+FFFD, as Go's JSON decoder makes them: stored
 * as they are, SQLite would return three replacement characters where PostgreSQL returns one.
 */
function wellFormed(text: string): string {
  return text.replace(/\p{Cs}/gu, "\ufffd");
}
