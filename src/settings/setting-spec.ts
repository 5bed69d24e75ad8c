import {
  type Parsed,
  parseGoBool,
  parseGoDuration,
  parseGoFloat,
  parseGoInt,
  parseStringList,
  parseStringMap,
} from "./value-parsers.js";

/** How one environment variable becomes one typed setting. */
export interface SettingSpec<T> {
  /** Environment variable name, exactly as the reference spells it. */
  readonly env: string;
  /** Default as text (the reference's `default:` tag); `""` means the type's zero value. */
  readonly defaultText: string;
  /** Value used when the variable is unset and the default is `""`. */
  readonly zero: T;
  readonly parse: (text: string) => Parsed<T>;
  /** One line for the README settings table and error messages. */
  readonly description: string;
  /** Never printed in logs. */
  readonly secret?: boolean;
}

type Extra = { secret?: boolean };

function spec<T>(
  env: string,
  defaultText: string,
  zero: T,
  parse: (text: string) => Parsed<T>,
  description: string,
  extra?: Extra,
): SettingSpec<T> {
  return { env, defaultText, zero, parse, description, ...extra };
}

/** A setting with its own parser (`zero` is its value when unset with an empty default). */
export const custom = <T>(
  env: string,
  def: string,
  zero: T,
  parse: (text: string) => Parsed<T>,
  description: string,
  extra?: Extra,
) => spec(env, def, zero, parse, description, extra);

/** A string setting. */
export const str = (env: string, def: string, description: string, extra?: Extra) =>
  spec(env, def, "", (text) => ({ ok: true, value: text }), description, extra);

/** A Go `bool` setting. */
export const bool = (env: string, def: boolean, description: string) =>
  spec(env, def ? "true" : "", false, parseGoBool, description);

function rangeReason(min: number, max: number): string {
  if (max === Infinity) return `must be at least ${min}`;
  if (min === -Infinity) return `must be at most ${max}`;
  return `must be between ${min} and ${max}`;
}

/** A Go `int` setting, optionally bounded. */
export function int(env: string, def: number, description: string, min = -Infinity, max = Infinity) {
  return spec(
    env,
    def === 0 ? "" : String(def),
    0,
    (text) => {
      const parsed = parseGoInt(text);
      if (parsed.ok && (parsed.value < min || parsed.value > max)) {
        return { ok: false, reason: rangeReason(min, max) };
      }
      return parsed;
    },
    description,
  );
}

/** A Go float setting, optionally bounded. */
export function float(env: string, def: number, description: string, min = -Infinity, max = Infinity) {
  return spec(
    env,
    String(def),
    0,
    (text) => {
      const parsed = parseGoFloat(text);
      if (parsed.ok && !(parsed.value >= min && parsed.value <= max)) {
        return { ok: false, reason: rangeReason(min, max) };
      }
      return parsed;
    },
    description,
  );
}

/** A Go `time.Duration` setting, held in milliseconds. */
export const durationMs = (env: string, def: string, description: string) =>
  spec(
    env,
    def,
    0,
    (text) => {
      const parsed = parseGoDuration(text);
      return parsed.ok && parsed.value < 0 ? { ok: false, reason: "must not be negative" } : parsed;
    },
    description,
  );

/** A comma-separated list setting. */
export const list = (env: string, description: string) =>
  spec<string[]>(env, "", [], parseStringList, description);

/** A `k1:v1,k2:v2` map setting. */
export const map = (env: string, description: string, extra?: Extra) =>
  spec<Record<string, string>>(env, "", {}, parseStringMap, description, extra);

/**
 * A string setting restricted to a set of words, matched case-insensitively and returned as written in
 * `allowed` (the canonical spelling). `aliases` maps other accepted words (lower case) to one of `allowed`;
 * the error for any other word lists them too.
 */
export function oneOf<const A extends readonly string[]>(
  env: string,
  def: A[number],
  allowed: A,
  description: string,
  aliases: Readonly<Record<string, A[number]>> = {},
) {
  const words = [
    ...allowed.map((word) => (word === "" ? '""' : word)),
    ...Object.entries(aliases).map(([alias, word]) => `${alias} (alias of ${word})`),
  ];
  return spec<A[number]>(
    env,
    def,
    def,
    (text) => {
      const lower = text.toLowerCase();
      const found = aliases[lower] ?? allowed.find((word) => word.toLowerCase() === lower);
      return found !== undefined
        ? { ok: true, value: found }
        : { ok: false, reason: `must be one of ${words.join(", ")}` };
    },
    description,
  );
}
