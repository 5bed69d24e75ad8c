import { fitsInt64, goValueText } from "./go-format.js";
import { YamlScalar } from "./yaml-schema.js";

/**
 * Keys of ours inside a limit (`rate_limit` or an entry of `rate_limits`). Their scalar values skip the
 * reference's value check (which says only `error checking config` for a float) so that the rule set
 * builder can name the rule and the allowed values.
 */
export const LIMIT_EXTENSION_KEYS: readonly string[] = [
  "algorithm",
  "burst",
  "unit_multiplier",
  "reservation",
];

/** Keys of ours inside a limit's `reservation` map (docs/token-budgets.md); their scalars skip the check too. */
export const RESERVATION_KEYS: readonly string[] = ["estimate", "ttl", "request_id_key"];

/** Keys allowed anywhere in a rule file: one flat list for every nesting level, as the reference. */
export const VALID_KEYS: ReadonlySet<string> = new Set([
  "domain",
  "key",
  "value",
  "descriptors",
  "rate_limit",
  "unit",
  "requests_per_unit",
  "unlimited",
  "shadow_mode",
  "quota_mode",
  "name",
  "replaces",
  "detailed_metric",
  "value_to_metric",
  "share_threshold",
  "metadata",
  // The extensions (docs/algorithms.md); the reference refuses them as unknown keys.
  "rate_limits",
  ...LIMIT_EXTENSION_KEYS,
  ...RESERVATION_KEYS,
]);

/**
 * The reference's first validation pass over the untyped document (`validateYamlKeys`), in document order.
 * Returns the reason for the first problem, or undefined. Values under `metadata` are free-form and are
 * not checked against the key list.
 */
export function firstKeyProblem(map: Map<unknown, unknown>): string | undefined {
  for (const [key, value] of map) {
    if (typeof key !== "string") return `config error, key is not of type string: ${goValueText(key)}`;
    if (!VALID_KEYS.has(key)) return `config error, unknown key '${key}'`;
    if (key === "metadata") continue;
    const ours = LIMIT_EXTENSION_KEYS.includes(key) || RESERVATION_KEYS.includes(key);
    if (ours && (typeof value === "string" || value instanceof YamlScalar)) continue;
    const problem = valueProblem(value);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function valueProblem(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const element of value) {
      if (!(element instanceof Map)) {
        return `config error, yaml file contains list of type other than map: ${goValueText(element)}`;
      }
      const problem = firstKeyProblem(element);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (value instanceof Map) return firstKeyProblem(value);
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (value instanceof YamlScalar && value.kind === "bool") return undefined;
  if (value instanceof YamlScalar && value.kind === "int" && fitsInt64(value)) return undefined;
  return "error checking config";
}
