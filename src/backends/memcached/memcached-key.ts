/** What memcached accepts as a key and as an expiry. */

/** memcached's (and gomemcache's) key size limit, in bytes. */
export const MAX_KEY_BYTES = 250;

/** Longest excerpt of a refused key quoted in an error message. */
const QUOTED_CHARS = 80;

/**
 * Why memcached cannot take `key`, or undefined when it can: gomemcache's `legalKey` refuses keys over 250
 * bytes (UTF-8) and any byte that is a space, a control character or DEL. (Bytes of multi-byte UTF-8
 * characters are all ≥ 0x80, so checking UTF-16 code units finds the same bytes.)
 */
export function memcachedKeyProblem(key: string): string | undefined {
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) {
      const what = code === 0x20 ? "a space" : `control character 0x${code.toString(16).padStart(2, "0")}`;
      return `cache key ${quote(key)} contains ${what} at offset ${i}, which memcached keys cannot contain`;
    }
  }
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short keys need no byte count.
  if (key.length * 3 > MAX_KEY_BYTES) {
    const bytes = Buffer.byteLength(key, "utf8");
    if (bytes > MAX_KEY_BYTES) {
      return `cache key ${quote(key)} is ${bytes} bytes long; memcached keys are at most ${MAX_KEY_BYTES} bytes`;
    }
  }
  return undefined;
}

function quote(key: string): string {
  return JSON.stringify(key.length > QUOTED_CHARS ? `${key.slice(0, QUOTED_CHARS)}…` : key);
}

/** memcached reads an exptime above 30 days (in seconds) as an absolute Unix time. */
export const MAX_RELATIVE_EXPTIME_SECONDS = 2_592_000;

/**
 * The exptime that makes a key live `ttlSeconds` from `nowSeconds`. Up to 30 days it is the TTL itself (as
 * the reference sends it); beyond, memcached would read the TTL as a date in 1970 and drop the key at once
 * (the reference's bug for MONTH limits with jitter and all YEAR limits), so it becomes `now + ttl`.
 */
export function exptimeFor(ttlSeconds: number, nowSeconds: number): number {
  return ttlSeconds > MAX_RELATIVE_EXPTIME_SECONDS ? Math.floor(nowSeconds) + ttlSeconds : ttlSeconds;
}
