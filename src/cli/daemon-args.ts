import { SETTINGS_TABLE } from "../settings/settings-table.js";

/**
 * What `ratelimitd`'s command line asks for: run the daemon (no arguments), print the usage (stdout,
 * exit 0), or a usage error (stderr: the message then the hint; exit 2).
 */
export type DaemonInvocation =
  | { readonly kind: "run" }
  | { readonly kind: "help" }
  | { readonly kind: "usage"; readonly message: string; readonly hint: string };

const HELP_WORDS = new Set(["-h", "-help", "--help"]);

/** Reads the words after the program. The daemon takes none: its settings are environment variables. */
export function parseDaemonArgs(args: readonly string[]): DaemonInvocation {
  if (args.some((arg) => HELP_WORDS.has(arg))) return { kind: "help" };
  const [first] = args;
  if (first === undefined) return { kind: "run" };
  const setting = settingNamed(first);
  return {
    kind: "usage",
    message: `ratelimitd: unexpected argument ${JSON.stringify(first)}`,
    hint:
      setting === undefined
        ? "ratelimitd takes no arguments: its settings are environment variables (ratelimitd --help lists the most used)."
        : `ratelimitd takes no arguments: set the environment variable instead, e.g. ${setting.env}=${setting.value} ratelimitd`,
  };
}

/**
 * The setting an argument was probably meant to be: `--port=9090`, `-grpc_port 1`, `PORT=9090` (a
 * variable passed as an argument, as a container's CMD can do by mistake).
 */
function settingNamed(arg: string): { env: string; value: string } | undefined {
  const match = /^-{0,2}([A-Za-z][A-Za-z0-9_-]*)(?:=(.*))?$/s.exec(arg);
  if (match === null) return undefined;
  const env = match[1]!.toUpperCase().replaceAll("-", "_");
  const known = Object.values(SETTINGS_TABLE).some((spec) => spec.env === env);
  return known ? { env, value: match[2] ?? "<value>" } : undefined;
}
