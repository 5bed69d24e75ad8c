import { LIMIT_EXTENSION_KEYS, RESERVATION_KEYS } from "./validate-yaml-keys.js";
import { YamlScalar } from "./yaml-schema.js";

/**
 * The reference accepts its keys at any level and ignores them where they mean nothing; a misplaced key of
 * ours (`burst` beside `rate_limit` rather than inside it) would silently do nothing, so it is refused.
 * Runs after the key whitelist pass, on the untyped document. Returns the first problem, or undefined.
 */
export function misplacedExtensionKey(root: Map<unknown, unknown>): string | undefined {
  const domain = textOf(root.get("domain"));
  for (const key of ["rate_limits", ...LIMIT_EXTENSION_KEYS, ...RESERVATION_KEYS]) {
    if (root.has(key)) return misplaced(key, "at the top level");
  }
  return inDescriptors(root.get("descriptors"), domain);
}

function inDescriptors(list: unknown, parentKey: string): string | undefined {
  if (!Array.isArray(list)) return undefined;
  for (const descriptor of list) {
    if (!(descriptor instanceof Map)) continue;
    const value = textOf(descriptor.get("value"));
    const composite =
      value === "" ? textOf(descriptor.get("key")) : `${textOf(descriptor.get("key"))}_${value}`;
    const fullKey = `${parentKey}.${composite}`;
    for (const key of [...LIMIT_EXTENSION_KEYS, ...RESERVATION_KEYS]) {
      if (descriptor.has(key)) return misplaced(key, `in descriptor '${fullKey}'`);
    }
    const problem =
      inLimit(descriptor.get("rate_limit"), `rate_limit of '${fullKey}'`) ??
      inLimits(descriptor.get("rate_limits"), fullKey) ??
      inDescriptors(descriptor.get("descriptors"), fullKey);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function inLimits(list: unknown, fullKey: string): string | undefined {
  if (!Array.isArray(list)) return undefined;
  for (const [index, limit] of list.entries()) {
    const problem = inLimit(limit, `rate_limits[${index}] of '${fullKey}'`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function inLimit(limit: unknown, where: string): string | undefined {
  if (!(limit instanceof Map)) return undefined;
  if (limit.has("rate_limits")) return misplaced("rate_limits", `in ${where}`);
  for (const key of RESERVATION_KEYS) if (limit.has(key)) return misplaced(key, `in ${where}`);
  return undefined;
}

function misplaced(key: string, where: string): string {
  const home =
    key === "rate_limits"
      ? "a descriptor"
      : RESERVATION_KEYS.includes(key)
        ? "a limit's reservation"
        : "rate_limit or an entry of rate_limits";
  return `config error, '${key}' belongs in ${home}, found ${where}`;
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof YamlScalar) return value.text;
  return "";
}
