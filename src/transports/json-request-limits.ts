import type { JsonValue } from "@bufbuild/protobuf";
import { type RequestLimits, tooManyDescriptors, tooManyEntries } from "../engine/request-limits.js";
import type { InvalidArgumentError } from "../errors.js";

/**
 * The request-limits error for too many descriptors or entries in a parsed proto3-JSON `RateLimitRequest`,
 * if any: checked on the parsed JSON (`/json`, Connect JSON), before protobuf-es builds the message.
 */
export function countBeyondLimits(json: JsonValue, limits: RequestLimits): InvalidArgumentError | undefined {
  const descriptors = isObject(json) ? json.descriptors : undefined;
  if (!Array.isArray(descriptors)) return undefined;
  if (descriptors.length > limits.maxDescriptors) return tooManyDescriptors(limits);
  for (let i = 0; i < descriptors.length; i++) {
    const descriptor = descriptors[i];
    const entries = isObject(descriptor) ? descriptor.entries : undefined;
    if (Array.isArray(entries) && entries.length > limits.maxEntries) return tooManyEntries(i, limits);
  }
  return undefined;
}

function isObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
