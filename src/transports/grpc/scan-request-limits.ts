import {
  domainTooLong,
  entryTooLong,
  type RequestLimits,
  tooManyDescriptors,
  tooManyEntries,
} from "../../engine/request-limits.js";
import { Unusual, WireReader } from "./wire-reader.js";

/**
 * Checks a `RateLimitRequest`'s bytes against `limits` without building anything: counts descriptors
 * (field 2) and each one's entries (field 1), and measures domains, keys and values (fields 1 and 2 of an
 * entry), skipping every other field, unknown ones and groups included. Throws the limit's
 * `InvalidArgumentError`; bytes it cannot follow (truncated, invalid wire types) end the scan quietly, for
 * protobuf-es to refuse with its own error. Used before protobuf-es decodes a message the fast decoder left
 * to it, so that unusual encodings are held to the same limits.
 */
export function scanRequestLimits(buf: Buffer, limits: RequestLimits): void {
  try {
    scanMessage(new WireReader(buf, 0, buf.length), limits);
  } catch (error) {
    if (!(error instanceof Unusual)) throw error;
  }
}

function scanMessage(reader: WireReader, limits: RequestLimits): void {
  let descriptors = 0;
  while (reader.pos < reader.end) {
    const tag = reader.varint();
    if (tag === 0x0a) {
      const end = reader.length();
      if (end - reader.pos > limits.maxEntryBytes) throw domainTooLong(limits);
      reader.pos = end;
    } else if (tag === 0x12) {
      if (descriptors === limits.maxDescriptors) throw tooManyDescriptors(limits);
      const end = reader.length();
      scanDescriptor(new WireReader(reader.buf, reader.pos, end), limits, descriptors++);
      reader.pos = end;
    } else reader.skip(tag);
  }
}

function scanDescriptor(reader: WireReader, limits: RequestLimits, index: number): void {
  let entries = 0;
  while (reader.pos < reader.end) {
    const tag = reader.varint();
    if (tag !== 0x0a) {
      reader.skip(tag);
      continue;
    }
    if (entries === limits.maxEntries) throw tooManyEntries(index, limits);
    const end = reader.length();
    const entry = new WireReader(reader.buf, reader.pos, end);
    while (entry.pos < entry.end) {
      const field = entry.varint();
      if (field !== 0x0a && field !== 0x12) {
        entry.skip(field);
        continue;
      }
      const valueEnd = entry.length();
      if (valueEnd - entry.pos > limits.maxEntryBytes) {
        throw entryTooLong(index, entries, field === 0x0a ? "key" : "value", limits);
      }
      entry.pos = valueEnd;
    }
    entries++;
    reader.pos = end;
  }
}
