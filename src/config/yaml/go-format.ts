import { YamlScalar } from "./yaml-schema.js";

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 or from 1e6 (`1e+06`). */
export function goFloatText(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value === 0) return Object.is(value, -0) ? "-0" : "0";
  const [mantissa, exponentText] = value.toExponential().split("e") as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  return String(value);
}

/**
 * Go's `%v` of a value decoded from YAML, for the reference's messages that print one
 * (`key is not of type string: 0.25`, `list of type other than map: [a b]`).
 */
export function goValueText(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (value instanceof YamlScalar) {
    return value.kind === "float" ? goFloatText(value.value as number) : String(value.value);
  }
  if (Array.isArray(value)) return `[${value.map(goValueText).join(" ")}]`;
  if (value instanceof Map) {
    const items = [...value.entries()].map(([k, v]) => [goValueText(k), goValueText(v)] as const);
    items.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${items.map(([k, v]) => `${k}:${v}`).join(" ")}]`;
  }
  if (value instanceof Uint8Array) return `[${[...value].join(" ")}]`;
  return String(value);
}

/** The YAML tag yaml.v2 names in its messages for a decoded value. */
export function yamlTagOf(value: unknown): string {
  if (value instanceof YamlScalar) return `!!${value.kind}`;
  if (typeof value === "string") return "!!str";
  if (Array.isArray(value)) return "!!seq";
  if (value instanceof Map) return "!!map";
  if (value instanceof Uint8Array) return "!!binary";
  return "!!null";
}

/**
 * yaml.v2's type-mismatch text: `cannot unmarshal !!int \`-1\` into uint32`. Scalars show their text,
 * cut to 7 bytes and `...` beyond 10 bytes; sequences and maps show only their tag.
 */
export function unmarshalMismatchText(value: unknown, into: string): string {
  const text = value instanceof YamlScalar ? value.text : typeof value === "string" ? value : undefined;
  if (text === undefined) return `cannot unmarshal ${yamlTagOf(value)} into ${into}`;
  const bytes = Buffer.from(text, "utf8");
  const shown = bytes.length > 10 ? `${bytes.subarray(0, 7).toString("utf8")}...` : text;
  return `cannot unmarshal ${yamlTagOf(value)} \`${shown}\` into ${into}`;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Whether a YAML integer fits Go's int64. yaml.v2 decodes larger ones as uint64 or float64, which the
 * reference's key check rejects (`error checking config`).
 */
export function fitsInt64(scalar: YamlScalar): boolean {
  const cleaned = scalar.text.replaceAll("_", "");
  const match = /^([-+]?)(0[xXoObB][0-9a-fA-F]+|\d+)$/.exec(cleaned);
  if (match === null) return Number.isSafeInteger(scalar.value);
  const magnitude = BigInt(match[2]!.replace(/^0([oObB])/, (_m, p: string) => `0${p.toLowerCase()}`));
  const signed = match[1] === "-" ? -magnitude : magnitude;
  return signed >= INT64_MIN && signed <= INT64_MAX;
}
