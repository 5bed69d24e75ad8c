import { createHash, randomInt } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const SECRET_LENGTH = 24;

/**
 * A new application password: 24 random letters and digits (~143 bits), shown once in groups of four
 * (`abcd efgh …`, as WordPress shows them). Spaces are ignored when it is used.
 */
export function newApplicationPassword(): { secret: string; display: string } {
  let secret = "";
  for (let i = 0; i < SECRET_LENGTH; i++) secret += ALPHABET[randomInt(ALPHABET.length)];
  return { secret, display: secret.replace(/(.{4})(?!$)/g, "$1 ") };
}

/** The form stored and looked up: SHA-256 (hex) of the secret without spaces. */
export function applicationPasswordDigest(secret: string): string {
  return createHash("sha256").update(secret.replace(/\s+/g, "")).digest("hex");
}
