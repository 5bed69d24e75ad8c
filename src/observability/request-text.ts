import type { DecisionRequest } from "../engine/decision-request.js";
import { unitName } from "../engine/units.js";

/**
 * A RateLimitRequest in protobuf text format, as Go's `request.String()` gives it to the reference's
 * `request string` span attribute: `domain:"d" descriptors:{entries:{key:"k" value:"v"}} hits_addend:1`.
 * Zero values are omitted, as the text format does.
 */
export function requestText(request: DecisionRequest): string {
  const parts: string[] = [];
  if (request.domain !== "") parts.push(`domain:${quote(request.domain)}`);
  for (const descriptor of request.descriptors) {
    const inner = descriptor.entries.map((e) => `entries:{key:${quote(e.key)} value:${quote(e.value)}}`);
    const limit = descriptor.limit;
    if (limit !== undefined) {
      const fields: string[] = [];
      if (limit.requestsPerUnit !== 0) fields.push(`requests_per_unit:${limit.requestsPerUnit}`);
      if (limit.unit !== 0) fields.push(`unit:${unitName(limit.unit)}`);
      inner.push(`limit:{${fields.join(" ")}}`);
    }
    if (descriptor.hitsAddend !== undefined) {
      const hits = descriptor.hitsAddend;
      inner.push(Number(hits) === 0 ? "hits_addend:{}" : `hits_addend:{value:${hits}}`);
    }
    parts.push(`descriptors:{${inner.join(" ")}}`);
  }
  if (request.hitsAddend !== 0) parts.push(`hits_addend:${request.hitsAddend}`);
  return parts.join(" ");
}

/** A Go-quoted string (JSON's escapes coincide with Go's for everything but rare control characters). */
function quote(text: string): string {
  return JSON.stringify(text);
}
