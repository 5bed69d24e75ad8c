/**
 * Parsers for environment values with the exact rules the reference gets from Go and envconfig:
 * `strconv.ParseBool`, `strconv.ParseInt(s, 0, bits)`, `strconv.ParseFloat`, `time.ParseDuration`,
 * comma lists and `k1:v1,k2:v2` maps. Each returns a result value; nothing here throws.
 */

/** A parsed value, or the reason the text is not one. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

const TRUE_WORDS = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Go `strconv.ParseBool`: 1,t,T,TRUE,true,True / 0,f,F,FALSE,false,False. */
export function parseGoBool(text: string): Parsed<boolean> {
  if (TRUE_WORDS.has(text)) return ok(true);
  if (FALSE_WORDS.has(text)) return ok(false);
  return fail("not a boolean (use true or false)");
}

const PREFIXED_INT = /^([+-]?)0([xXoObB])((?:_?[0-9a-fA-F])+)$/;
const RADIX_OF: Record<string, number> = { x: 16, o: 8, b: 2 };

/**
 * Go `strconv.ParseInt(text, 0, 64)`: decimal, `0x` hex, `0o`/leading-`0` octal, `0b` binary, underscores
 * only after a base prefix. The result must be a safe JavaScript integer.
 */
export function parseGoInt(text: string): Parsed<number> {
  let value: number;
  const prefixed = PREFIXED_INT.exec(text);
  if (prefixed) {
    const radix = RADIX_OF[prefixed[2]!.toLowerCase()]!;
    const digits = prefixed[3]!.replaceAll("_", "");
    if (![...digits].every((d) => Number.parseInt(d, radix) < radix)) return fail("not an integer");
    value = Number.parseInt(digits, radix) * (prefixed[1] === "-" ? -1 : 1);
  } else if (/^[+-]?0(?:_?[0-7])+$/.test(text)) {
    value =
      Number.parseInt(text.replace(/^[+-]?0/, "").replaceAll("_", ""), 8) * (text.startsWith("-") ? -1 : 1);
  } else if (/^[+-]?(?:0|[1-9](?:_?[0-9])*)$/.test(text)) {
    value = Number(text.replaceAll("_", ""));
  } else {
    return fail("not an integer");
  }
  if (!Number.isSafeInteger(value)) return fail("integer out of range");
  return ok(value);
}

const DIGITS = String.raw`\d(?:_?\d)*`;
const DECIMAL_FLOAT = new RegExp(
  String.raw`^[+-]?(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`,
);
const HEX_DIGITS = "[0-9a-fA-F](?:_?[0-9a-fA-F])*";
const HEX_FLOAT = new RegExp(String.raw`^([+-]?)0[xX](${HEX_DIGITS})?(?:\.(${HEX_DIGITS})?)?[pP]([+-]?\d+)$`);

/**
 * Go `strconv.ParseFloat`: decimal with exponent and underscores between digits, hexadecimal with a `p`
 * exponent (`0x1p-2`), `inf`/`infinity`/`nan` in any case. A finite text that overflows is an error.
 */
export function parseGoFloat(text: string): Parsed<number> {
  let value: number;
  const hex = HEX_FLOAT.exec(text);
  if (DECIMAL_FLOAT.test(text)) value = Number(text.replaceAll("_", ""));
  else if (hex && (hex[2] !== undefined || hex[3] !== undefined)) {
    const whole = (hex[2] ?? "").replaceAll("_", "");
    const fraction = (hex[3] ?? "").replaceAll("_", "");
    const mantissa = Number.parseInt(whole + fraction || "0", 16);
    value = (hex[1] === "-" ? -1 : 1) * mantissa * 2 ** (Number(hex[4]) - 4 * fraction.length);
  } else {
    const word = text.toLowerCase().replace(/^[+-]/, "");
    if (word === "inf" || word === "infinity") return ok(text.startsWith("-") ? -Infinity : Infinity);
    if (word === "nan" && !/^[+-]/.test(text)) return ok(Number.NaN);
    return fail("not a number");
  }
  if (!Number.isFinite(value)) return fail("number out of range");
  return ok(value);
}

const DURATION_UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const DURATION_PART = /(\d*\.?\d*)([a-zµμ]+)/gy;

/**
 * Go `time.ParseDuration` (`"150us"`, `"1h30m"`, `"0"`), returned in milliseconds. A bare number other
 * than 0 is rejected as in Go ("missing unit").
 */
export function parseGoDuration(text: string): Parsed<number> {
  let body = text;
  let sign = 1;
  if (body.startsWith("-") || body.startsWith("+")) {
    sign = body.startsWith("-") ? -1 : 1;
    body = body.slice(1);
  }
  if (body === "0") return ok(0);
  if (body === "") return fail("not a duration (use a number with a unit such as 500ms, 10s, 1h)");
  let total = 0;
  let consumed = 0;
  DURATION_PART.lastIndex = 0;
  for (let m = DURATION_PART.exec(body); m !== null; m = DURATION_PART.exec(body)) {
    const [whole, number, unit] = m as unknown as [string, string, string];
    const factor = DURATION_UNIT_MS[unit];
    if (number === "" || number === "." || factor === undefined) {
      return fail(factor === undefined ? `unknown unit "${unit}" in duration` : "not a duration");
    }
    total += Number(number) * factor;
    consumed += whole.length;
  }
  if (consumed !== body.length)
    return fail("not a duration (use a number with a unit such as 500ms, 10s, 1h)");
  return ok(sign * total);
}

/** envconfig `[]string`: split on commas, no trimming; empty (or blank) text is an empty list. */
export function parseStringList(text: string): Parsed<string[]> {
  return ok(text.trim() === "" ? [] : text.split(","));
}

/** envconfig `map[string]string`: `k1:v1,k2:v2`, each item exactly one colon. */
export function parseStringMap(text: string): Parsed<Record<string, string>> {
  const map: Record<string, string> = {};
  if (text.trim() === "") return ok(map);
  for (const item of text.split(",")) {
    const parts = item.split(":");
    if (parts.length !== 2) return fail(`invalid map item: "${item}" (use k1:v1,k2:v2)`);
    map[parts[0]!] = parts[1]!;
  }
  return ok(map);
}

/** A network address as listed: its text (trimmed) and how to reach it. */
export interface NetworkAddress {
  readonly label: string;
  readonly target: { readonly host: string; readonly port: number } | { readonly path: string };
}

/**
 * One item of a host list, as Go's network clients read it: an item containing `/` is a unix socket path;
 * anything else is `host:port` or `[ipv6]:port` with a port in 1–65535 (`net.ResolveTCPAddr` refuses a
 * missing port).
 */
export function parseNetworkAddress(item: string): Parsed<NetworkAddress> {
  const label = item.trim();
  if (label.includes("/")) return ok({ label, target: { path: label } });
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(label);
  const port = Number(match?.[3]);
  if (match === null || port < 1 || port > 65535) {
    return fail(`${JSON.stringify(label)} is not host:port, [ipv6]:port or a socket path`);
  }
  return ok({ label, target: { host: match[1] ?? match[2] ?? "", port } });
}
