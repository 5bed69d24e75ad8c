import { isUtf8 } from "node:buffer";
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

const QUOTE_ESCAPES: Record<number, string> = {
  7: "\\a",
  8: "\\b",
  9: "\\t",
  10: "\\n",
  11: "\\v",
  12: "\\f",
  13: "\\r",
  34: '\\"',
  92: "\\\\",
};

/**
 * Go's `%q` of a string holding arbitrary bytes: printable characters as they are, the usual backslash
 * escapes, `\xHH` for bytes that are not UTF-8 and for control bytes, `\uHHHH` / `\UHHHHHHHH` for other
 * non-printable characters.
 */
export function goQuoteBytes(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const length = utf8SequenceLength(bytes, i);
    if (length === 0) {
      out += `\\x${bytes[i]!.toString(16).padStart(2, "0")}`;
      i++;
      continue;
    }
    const char = Buffer.from(bytes.subarray(i, i + length)).toString("utf8");
    const code = char.codePointAt(0)!;
    i += length;
    const escaped = QUOTE_ESCAPES[code];
    if (escaped !== undefined) out += escaped;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(char)) out += char;
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return `"${out}"`;
}

/** Length of the well-formed UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const first = bytes[i]!;
  if (first < 0x80) return 1;
  const length =
    first >= 0xc2 && first <= 0xdf
      ? 2
      : first >= 0xe0 && first <= 0xef
        ? 3
        : first >= 0xf0 && first <= 0xf4
          ? 4
          : 0;
  if (length === 0 || i + length > bytes.length) return 0;
  return isUtf8(bytes.subarray(i, i + length)) ? length : 0;
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
