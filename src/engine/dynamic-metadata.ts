import type { DecisionRequest } from "./decision-request.js";
import type { JsonObject, JsonValue } from "./json-value.js";
import { unitName } from "./units.js";

const OVERRIDE_UNIT_NAMES = ["UNKNOWN", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR"];

/**
 * `dynamic_metadata`: the domain, each descriptor's entries (`k=v`), override (as Go's text format of the
 * message) and own hits_addend, the request hits_addend when non-zero, and the merged rule `metadata` of
 * the descriptors that passed (test/unit/engine/metadata-dynamic.test.ts).
 */
export function dynamicMetadataFor(
  request: DecisionRequest,
  passedMetadata: readonly JsonObject[],
): JsonObject {
  const descriptors: JsonValue[] = request.descriptors.map((descriptor) => {
    const item: JsonObject = { entries: descriptor.entries.map((e) => `${e.key}=${e.value}`) };
    if (descriptor.limit) item.limit = overrideText(descriptor.limit.requestsPerUnit, descriptor.limit.unit);
    if (descriptor.hitsAddend !== undefined) item.hitsAddend = Number(descriptor.hitsAddend);
    return item;
  });
  const metadata: JsonObject = { domain: request.domain, descriptors };
  if (request.hitsAddend !== 0) metadata.hitsAddend = request.hitsAddend;
  const merged: JsonObject = {};
  for (const source of passedMetadata) mergeFirstWins(merged, source);
  if (Object.keys(merged).length > 0) metadata.metadata = merged;
  return metadata;
}

/** `requests_per_unit:42 unit:HOUR`, zero fields omitted as the text format does. */
function overrideText(requestsPerUnit: number, unit: number): string {
  const parts: string[] = [];
  if (requestsPerUnit !== 0) parts.push(`requests_per_unit:${requestsPerUnit}`);
  if (unit !== 0) parts.push(`unit:${OVERRIDE_UNIT_NAMES[unit] ?? unitName(unit)}`);
  return parts.join(" ");
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Copies keys of `source` missing from `target`; objects present in both merge recursively. */
function mergeFirstWins(target: JsonObject, source: JsonObject): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (existing === undefined) target[key] = isObject(value) ? structuredClone(value) : value;
    else if (isObject(existing) && isObject(value)) mergeFirstWins(existing, value);
  }
}
