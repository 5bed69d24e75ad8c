/**
 * The command-line syntax of `ratelimitd-admin`: GNU-style long options (`--name value` or `--name=value`,
 * switches without a value), mixed freely with positional arguments; `--` ends the options; `-h` and
 * `--help` anywhere before `--` ask for help. (The reference's Go-style `-flag` parsing in `go-flags.ts`
 * belongs to the tools that copy the reference; this CLI follows the origin's WP-CLI commands.)
 */

/** One option of a command. */
export interface OptionSpec {
  /** Long name without the dashes: `from-batch`. */
  readonly name: string;
  /** Placeholder of its value in help (`<n>`); absent for a switch such as `--json`. */
  readonly value?: string;
  /** One line of help. */
  readonly help: string;
}

/** The words of a command line, split into positional arguments and options. */
export interface SplitCommandLine {
  readonly positionals: readonly string[];
  /** Option name → its value, or `true` for a switch. */
  readonly options: ReadonlyMap<string, string | true>;
}

/** A split command line, a request for help, or what is wrong with it. */
export type CommandLineParse =
  | ({ readonly ok: true } & SplitCommandLine)
  | { readonly ok: false; readonly help: true }
  | { readonly ok: false; readonly help: false; readonly message: string };

/** True when `args` ask for help (`-h` or `--help` before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === "-h" || arg === "--help");
}

/** Splits `args` by `options`; an unknown option, a missing value or a repeated option is an error. */
export function splitCommandLine(args: readonly string[], options: readonly OptionSpec[]): CommandLineParse {
  if (wantsHelp(args)) return { ok: false, help: true };
  const byName = new Map(options.map((spec) => [spec.name, spec]));
  const positionals: string[] = [];
  const values = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") ? arg.slice(2, eq < 0 ? undefined : eq) : "";
    const spec = byName.get(name);
    if (spec === undefined) return usage(`unknown option ${eq < 0 ? arg : arg.slice(0, eq)}`);
    if (values.has(name)) return usage(`option --${name} given twice`);
    if (spec.value === undefined) {
      if (eq >= 0) return usage(`option --${name} takes no value`);
      values.set(name, true);
    } else if (eq >= 0) values.set(name, arg.slice(eq + 1));
    else if (i + 1 < args.length) values.set(name, args[++i]!);
    else return usage(`option --${name} needs a value ${spec.value}`);
  }
  return { ok: true, positionals, options: values };
}

function usage(message: string): CommandLineParse {
  return { ok: false, help: false, message };
}

/** `--json` and friends: the switches every listing command has. */
export const JSON_OPTION: OptionSpec = {
  name: "json",
  help: "print the result as JSON (the REST API's shapes) instead of text",
};

/**
 * An option value that must be an integer ≥ `min` (decimal digits only, at most 16); undefined when the
 * option is absent, a message naming the option when it is not such a number.
 */
export function integerOption(
  options: ReadonlyMap<string, string | true>,
  name: string,
  min: number,
): number | undefined | { readonly problem: string } {
  const value = options.get(name);
  if (value === undefined) return undefined;
  const text = value === true ? "" : value.trim();
  const number = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isSafeInteger(number) && number >= min) return number;
  return { problem: `option --${name} must be an integer ≥ ${min}, not ${JSON.stringify(value)}` };
}
