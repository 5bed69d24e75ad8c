import { isUtf8 } from "node:buffer";
import type { JsonObject, JsonValue } from "../../engine/json-value.js";
import type {
  DescriptorDocument,
  RateLimitDocument,
  ReservationDocument,
  RuleDocument,
} from "../rule-document.js";
import { goQuoteBytes, goValueText, unmarshalMismatchText } from "./go-format.js";
import type { YamlPathStep } from "./yaml-locations.js";
import { YamlScalar } from "./yaml-schema.js";

/** A type mismatch found while decoding, as yaml.v2 words it (without the line). */
export interface DecodeProblem {
  readonly path: readonly YamlPathStep[];
  readonly message: string;
}

/** What the typed pass found: yaml.v2 mismatches, and `metadata` a protobuf Struct cannot hold. */
export interface DecodeResult {
  readonly document: RuleDocument;
  readonly problems: DecodeProblem[];
  /** `error parsing metadata: …` texts, reported by the reference apart from yaml.v2's errors. */
  readonly metadataProblems: string[];
}

const UINT32_MAX = 4294967295;

/**
 * The reference's second pass: the untyped document into its YAML structs. Like yaml.v2 it keeps going
 * after a mismatch and reports every one; unknown keys were already rejected by the first pass.
 */
export function decodeRuleDocument(name: string, root: Map<unknown, unknown>): DecodeResult {
  const problems: DecodeProblem[] = [];
  const metadataProblems: string[] = [];
  const decoder = new FieldDecoder(problems, metadataProblems);
  const document: RuleDocument = {
    name,
    domain: decoder.string(root, "domain", []),
    descriptors: decoder.descriptors(root, []),
  };
  return { document, problems, metadataProblems };
}

class FieldDecoder {
  constructor(
    private readonly problems: DecodeProblem[],
    private readonly metadataProblems: string[],
  ) {}

  #mismatch(value: unknown, into: string, path: readonly YamlPathStep[]): void {
    this.problems.push({ path, message: unmarshalMismatchText(value, into) });
  }

  string(map: Map<unknown, unknown>, key: string, path: readonly YamlPathStep[]): string {
    const value = map.get(key);
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    if (value instanceof YamlScalar) return value.text;
    this.#mismatch(value, "string", [...path, key]);
    return "";
  }

  bool(map: Map<unknown, unknown>, key: string, path: readonly YamlPathStep[]): boolean {
    const value = map.get(key);
    if (value === null || value === undefined) return false;
    if (value instanceof YamlScalar && value.kind === "bool") return value.value as boolean;
    this.#mismatch(value, "bool", [...path, key]);
    return false;
  }

  uint32(map: Map<unknown, unknown>, key: string, path: readonly YamlPathStep[]): number {
    const value = map.get(key);
    if (value === null || value === undefined) return 0;
    if (value instanceof YamlScalar && value.kind === "int") {
      const n = value.value as number;
      if (n >= 0 && n <= UINT32_MAX) return n;
    }
    this.#mismatch(value, "uint32", [...path, key]);
    return 0;
  }

  descriptors(map: Map<unknown, unknown>, path: readonly YamlPathStep[]): DescriptorDocument[] {
    const value = map.get("descriptors");
    if (value === null || value === undefined) return [];
    if (!Array.isArray(value)) {
      this.#mismatch(value, "[]config.YamlDescriptor", [...path, "descriptors"]);
      return [];
    }
    return value.map((item, i) =>
      this.#descriptor(item as Map<unknown, unknown>, [...path, "descriptors", i]),
    );
  }

  /** A scalar of ours as written: undefined when absent or null, any number as a number. */
  number(map: Map<unknown, unknown>, key: string, path: readonly YamlPathStep[]): number | undefined {
    const value = map.get(key);
    if (value === null || value === undefined) return undefined;
    if (value instanceof YamlScalar && value.kind !== "bool") return value.value as number;
    this.#mismatch(value, "uint32", [...path, key]);
    return undefined;
  }

  #descriptor(map: Map<unknown, unknown>, path: readonly YamlPathStep[]): DescriptorDocument {
    const rateLimits = this.#rateLimits(map, path);
    return {
      key: this.string(map, "key", path),
      value: this.string(map, "value", path),
      rateLimit: this.#rateLimit(map, path),
      // Only present when written, so that a plain descriptor keeps the reference's shape.
      ...(rateLimits === undefined ? {} : { rateLimits }),
      descriptors: this.descriptors(map, path),
      shadowMode: this.bool(map, "shadow_mode", path),
      quotaMode: this.bool(map, "quota_mode", path),
      detailedMetric: this.bool(map, "detailed_metric", path),
      valueToMetric: this.bool(map, "value_to_metric", path),
      shareThreshold: this.bool(map, "share_threshold", path),
      metadata: this.#metadata(map, path),
    };
  }

  #rateLimit(map: Map<unknown, unknown>, path: readonly YamlPathStep[]): RateLimitDocument | undefined {
    const value = map.get("rate_limit");
    if (value === null || value === undefined) return undefined;
    const at = [...path, "rate_limit"];
    if (!(value instanceof Map)) {
      this.#mismatch(value, "config.YamlRateLimit", at);
      return undefined;
    }
    return this.#limit(value, at);
  }

  #rateLimits(map: Map<unknown, unknown>, path: readonly YamlPathStep[]): RateLimitDocument[] | undefined {
    const value = map.get("rate_limits");
    if (value === null || value === undefined) return undefined;
    const at = [...path, "rate_limits"];
    if (!Array.isArray(value)) {
      this.#mismatch(value, "[]config.YamlRateLimit", at);
      return undefined;
    }
    // The key pass already refused entries that are not maps.
    return value.map((item, i) => this.#limit(item as Map<unknown, unknown>, [...at, i]));
  }

  #limit(map: Map<unknown, unknown>, at: readonly YamlPathStep[]): RateLimitDocument {
    const algorithm =
      map.has("algorithm") && map.get("algorithm") !== null ? this.string(map, "algorithm", at) : undefined;
    const burst = this.number(map, "burst", at);
    const unitMultiplier = this.number(map, "unit_multiplier", at);
    const reservation = this.#reservation(map, at);
    return {
      requestsPerUnit: this.uint32(map, "requests_per_unit", at),
      unit: this.string(map, "unit", at),
      unlimited: this.bool(map, "unlimited", at),
      name: this.string(map, "name", at),
      replaces: this.#replaces(map, at),
      // Extension fields only when written: a plain limit keeps the reference's shape.
      ...(algorithm === undefined ? {} : { algorithm }),
      ...(burst === undefined ? {} : { burst }),
      ...(unitMultiplier === undefined ? {} : { unitMultiplier }),
      ...(reservation === undefined ? {} : { reservation }),
    };
  }

  #reservation(map: Map<unknown, unknown>, path: readonly YamlPathStep[]): ReservationDocument | undefined {
    const value = map.get("reservation");
    if (value === null || value === undefined) return undefined;
    const at = [...path, "reservation"];
    if (!(value instanceof Map)) {
      this.#mismatch(value, "config.YamlReservation", at);
      return undefined;
    }
    return {
      estimate: this.number(value, "estimate", at),
      ttl: this.string(value, "ttl", at),
      requestIdKey: this.string(value, "request_id_key", at),
    };
  }

  #replaces(map: Map<unknown, unknown>, path: readonly YamlPathStep[]): string[] {
    const value = map.get("replaces");
    if (value === null || value === undefined) return [];
    if (!Array.isArray(value)) {
      this.#mismatch(value, "[]config.yamlReplaces", [...path, "replaces"]);
      return [];
    }
    return value.map((item, i) =>
      this.string(item as Map<unknown, unknown>, "name", [...path, "replaces", i]),
    );
  }

  #metadata(map: Map<unknown, unknown>, path: readonly YamlPathStep[]): JsonObject | undefined {
    const value = map.get("metadata");
    if (value === null || value === undefined) return undefined;
    if (!(value instanceof Map)) {
      this.#mismatch(value, "map[string]interface {}", [...path, "metadata"]);
      return undefined;
    }
    return jsonObjectFromYaml(value, this.metadataProblems);
  }
}

/**
 * Converts free-form YAML (`metadata`) to JSON, reporting what a `google.protobuf.Struct` cannot hold as
 * the reference does (`error parsing metadata: <structpb error>`).
 */
function jsonObjectFromYaml(map: Map<unknown, unknown>, problems: string[]): JsonObject {
  const object: JsonObject = {};
  for (const [key, value] of map) {
    const name = typeof key === "string" ? key : key instanceof YamlScalar ? key.text : undefined;
    if (name === undefined) {
      problems.push(`error parsing metadata: key ${goValueText(key)} is not a string`);
      continue;
    }
    const converted = jsonValueFromYaml(value, problems);
    if (converted !== undefined) object[name] = converted;
  }
  return object;
}

function jsonValueFromYaml(value: unknown, problems: string[]): JsonValue | undefined {
  if (value === null || typeof value === "string") return value;
  if (value instanceof YamlScalar) return value.value;
  if (value instanceof Map) return jsonObjectFromYaml(value, problems);
  if (Array.isArray(value)) return value.map((item) => jsonValueFromYaml(item, problems) ?? null);
  if (value instanceof Uint8Array) {
    // yaml.v2 decodes `!!binary` into a Go string of the bytes; structpb refuses one that is not UTF-8.
    const bytes = Buffer.from(value);
    if (isUtf8(bytes)) return bytes.toString("utf8");
    problems.push(`error parsing metadata: proto: invalid UTF-8 in string: ${goQuoteBytes(bytes)}`);
    return undefined;
  }
  problems.push(`error parsing metadata: unsupported value ${goValueText(value)}`);
  return undefined;
}
