/**
 * Command-line flags with the semantics of Go's `flag` package, which the reference's tools use:
 * `-name value`, `-name=value`, `--name` alike; booleans as `-name` or `-name=false`; parsing stops at the
 * first non-flag argument or `--`; `-h`/`-help` prints usage.
 */

export interface FlagSpec {
  readonly name: string;
  readonly usage: string;
  /** Boolean flags take no separate value. */
  readonly boolean?: boolean;
  /** Default shown in usage and used when absent. */
  readonly defaultValue?: string;
  /** Repeatable: every occurrence is kept. */
  readonly repeated?: boolean;
  /** Validates one value; returns an error reason or undefined. */
  readonly validate?: (value: string) => string | undefined;
}

export type FlagValues = Record<string, string | string[] | boolean>;

export type FlagParse =
  | { readonly ok: true; readonly values: FlagValues; readonly rest: string[] }
  | { readonly ok: false; readonly help: boolean; readonly message: string };

/** Go's usage text: `Usage of <program>:` then `  -name type` / `    \t<usage> (default "x")`. */
export function usageText(program: string, specs: readonly FlagSpec[]): string {
  const lines = [`Usage of ${program}:`];
  for (const spec of [...specs].sort((a, b) => a.name.localeCompare(b.name))) {
    lines.push(`  -${spec.name}${spec.boolean ? "" : spec.repeated ? " value" : " string"}`);
    const shown =
      spec.defaultValue && spec.defaultValue !== "false"
        ? ` (default ${JSON.stringify(spec.defaultValue)})`
        : "";
    lines.push(`    \t${spec.usage}${shown}`);
  }
  return `${lines.join("\n")}\n`;
}

const BOOL_WORDS: Record<string, boolean> = {
  "1": true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
};
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

export function parseGoFlags(args: readonly string[], specs: readonly FlagSpec[]): FlagParse {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const values: FlagValues = {};
  for (const spec of specs) {
    values[spec.name] = spec.repeated
      ? []
      : spec.boolean
        ? spec.defaultValue === "true"
        : (spec.defaultValue ?? "");
  }
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      i++;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    if (name === "h" || name === "help") return { ok: false, help: true, message: "" };
    const spec = byName.get(name);
    if (spec === undefined)
      return { ok: false, help: false, message: `flag provided but not defined: -${name}` };
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.boolean) value = "true";
    else if (i + 1 < args.length) value = args[++i]!;
    else return { ok: false, help: false, message: `flag needs an argument: -${name}` };
    if (spec.boolean) {
      if (BOOL_WORDS[value] === undefined && !FALSE_WORDS.has(value)) {
        return {
          ok: false,
          help: false,
          message: `invalid boolean value ${JSON.stringify(value)} for -${name}: parse error`,
        };
      }
      values[name] = BOOL_WORDS[value] === true;
      continue;
    }
    const problem = spec.validate?.(value);
    if (problem !== undefined) {
      return {
        ok: false,
        help: false,
        message: `invalid value ${JSON.stringify(value)} for flag -${name}: ${problem}`,
      };
    }
    if (spec.repeated) (values[name] as string[]).push(value);
    else values[name] = value;
  }
  return { ok: true, values, rest: args.slice(i) };
}
