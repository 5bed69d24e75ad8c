import { InvalidArgumentError } from "../errors.js";
import type { DecisionRequest } from "./decision-request.js";

/**
 * Bounds on the shape of one `RateLimitRequest`, so that no single request can hold the event loop or fill
 * the counter store: MAX_DESCRIPTORS_PER_REQUEST, MAX_ENTRIES_PER_DESCRIPTOR, MAX_DESCRIPTOR_ENTRY_BYTES.
 * A request beyond any of them is refused whole (gRPC INVALID_ARGUMENT, `/json` 400) before anything is
 * counted. Transports check the counts while decoding, before the descriptors exist as objects; the engine
 * checks everything again, for every transport.
 */
export interface RequestLimits {
  /** Most descriptors in one request. */
  readonly maxDescriptors: number;
  /** Most entries in one descriptor. */
  readonly maxEntries: number;
  /** Longest domain, entry key or entry value, in UTF-8 bytes. */
  readonly maxEntryBytes: number;
}

/**
 * The defaults: far above what Envoy sends (one descriptor per `rate_limits` item of a route and virtual
 * host, one entry per action) and what request paths and header values need (8 KiB is the request-line
 * limit of common servers), while one request stays cheap.
 */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = Object.freeze({
  maxDescriptors: 256,
  maxEntries: 64,
  maxEntryBytes: 8192,
});

/** `rate limit request has more than 256 descriptors`. */
export function tooManyDescriptors(limits: RequestLimits): InvalidArgumentError {
  return new InvalidArgumentError(`rate limit request has more than ${limits.maxDescriptors} descriptors`);
}

/** `descriptor 3 has more than 64 entries`. */
export function tooManyEntries(descriptor: number, limits: RequestLimits): InvalidArgumentError {
  return new InvalidArgumentError(`descriptor ${descriptor} has more than ${limits.maxEntries} entries`);
}

/** `descriptor 3 entry 0: value is longer than 8192 bytes`. */
export function entryTooLong(
  descriptor: number,
  entry: number,
  field: "key" | "value",
  limits: RequestLimits,
): InvalidArgumentError {
  return new InvalidArgumentError(
    `descriptor ${descriptor} entry ${entry}: ${field} is longer than ${limits.maxEntryBytes} bytes`,
  );
}

/** `rate limit domain is longer than 8192 bytes`. */
export function domainTooLong(limits: RequestLimits): InvalidArgumentError {
  return new InvalidArgumentError(`rate limit domain is longer than ${limits.maxEntryBytes} bytes`);
}

/** Throws the first limit `request` is beyond, in request order (counts before lengths within a descriptor). */
export function checkRequestLimits(request: DecisionRequest, limits: RequestLimits): void {
  const { descriptors } = request;
  if (descriptors.length > limits.maxDescriptors) throw tooManyDescriptors(limits);
  if (longerThan(request.domain, limits.maxEntryBytes)) throw domainTooLong(limits);
  for (let d = 0; d < descriptors.length; d++) {
    const entries = descriptors[d]!.entries;
    if (entries.length > limits.maxEntries) throw tooManyEntries(d, limits);
    for (let e = 0; e < entries.length; e++) {
      const entry = entries[e]!;
      if (longerThan(entry.key, limits.maxEntryBytes)) throw entryTooLong(d, e, "key", limits);
      if (longerThan(entry.value, limits.maxEntryBytes)) throw entryTooLong(d, e, "value", limits);
    }
  }
}

/**
 * Whether `text` is longer than `maxBytes` in UTF-8. A UTF-16 code unit takes 1 to 3 UTF-8 bytes, so only
 * texts between a third of the limit and the limit need their bytes counted.
 */
export function longerThan(text: string, maxBytes: number): boolean {
  if (text.length * 3 <= maxBytes) return false;
  if (text.length > maxBytes) return true;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    // A surrogate pair is one 4-byte character; a lone surrogate is written as U+FFFD, 3 bytes.
    else if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes > maxBytes;
}
