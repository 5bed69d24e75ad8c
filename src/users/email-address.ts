/** The longest address accepted (RFC 5321's path limit less the angle brackets). */
export const MAX_EMAIL_LENGTH = 254;

const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
// No whitespace or control characters anywhere in the local part.
const LOCAL_PART = /^[^\s\p{Cc}@]+$/u;

/**
 * A practical subset of RFC 5321/5322: exactly one `@`, a non-empty local part without whitespace or
 * control characters (at most 64 characters), and a domain of at least two dot-separated labels made of
 * letters, digits and inner hyphens (each at most 63 characters). Expects an already trimmed address.
 */
export function isValidEmailAddress(address: string): boolean {
  if (address.length === 0 || address.length > MAX_EMAIL_LENGTH) return false;
  const at = address.indexOf("@");
  if (at <= 0 || at !== address.lastIndexOf("@")) return false;
  const local = address.slice(0, at);
  const labels = address.slice(at + 1).split(".");
  return (
    local.length <= 64 &&
    LOCAL_PART.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => label.length <= 63 && DOMAIN_LABEL.test(label))
  );
}

/** The form uniqueness is decided on: `A@X.com` and `a@x.com` are one address. */
export function emailKeyOf(address: string): string {
  return address.toLowerCase();
}
