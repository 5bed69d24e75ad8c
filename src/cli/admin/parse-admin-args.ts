import { ACCOUNT_COMMANDS } from "./account-command-specs.js";
import type { AdminCommand, CommandSpec } from "./admin-command.js";
import { commandHelp, overviewHelp, usageHint } from "./admin-help.js";
import { splitCommandLine, wantsHelp } from "./command-line.js";
import { MIGRATION_COMMANDS } from "./migration-command-specs.js";

/** Every `ratelimitd-admin` command, in the order help lists them. */
export const ADMIN_COMMANDS: readonly CommandSpec[] = [...ACCOUNT_COMMANDS, ...MIGRATION_COMMANDS];

/**
 * What a command line asks for: a command to run, help to print (stdout, exit 0), or a usage error
 * (stderr: the message then the hint; exit 2).
 */
export type AdminInvocation =
  | { readonly kind: "command"; readonly command: AdminCommand }
  | { readonly kind: "help"; readonly text: string }
  | { readonly kind: "usage"; readonly message: string; readonly hint: string };

/** Reads `ratelimitd-admin <group> <action> [arguments] [options]` (the words after the program). */
export function parseAdminArgs(argv: readonly string[]): AdminInvocation {
  const [group, action, ...rest] = argv;
  const groups = new Set(ADMIN_COMMANDS.map((spec) => spec.group as string));
  if (group === undefined) return usage("missing command", usageHint());
  if (group === "help" || group === "-h" || group === "--help") return help(overviewHelp(ADMIN_COMMANDS));
  if (!groups.has(group)) return usage(`unknown command ${JSON.stringify(group)}`, usageHint());
  const actions = ADMIN_COMMANDS.filter((spec) => spec.group === group);
  if (action === undefined || action === "-h" || action === "--help") {
    return action === undefined
      ? usage(
          `${group}: missing action (${actions.map((spec) => spec.action).join(", ")})`,
          usageHint({ group }),
        )
      : help(overviewHelp(ADMIN_COMMANDS, group));
  }
  const spec = actions.find((candidate) => candidate.action === action);
  if (spec === undefined) {
    if (wantsHelp(rest)) return help(overviewHelp(ADMIN_COMMANDS, group));
    return usage(`${group}: unknown action ${JSON.stringify(action)}`, usageHint({ group }));
  }
  return parseCommand(spec, rest);
}

function parseCommand(spec: CommandSpec, args: readonly string[]): AdminInvocation {
  const failed = (message: string) => usage(`${spec.group} ${spec.action}: ${message}`, usageHint(spec));
  const split = splitCommandLine(args, spec.options);
  if (!split.ok) return split.help ? help(commandHelp(spec)) : failed(split.message);
  const { positionals, options } = split;
  const required = spec.args.filter((arg) => !arg.optional);
  if (positionals.length < required.length) return failed(`missing <${required[positionals.length]!.name}>`);
  if (positionals.length > spec.args.length) {
    return failed(`unexpected argument ${JSON.stringify(positionals[spec.args.length])}`);
  }
  const empty = spec.args.find((_arg, i) => positionals[i] !== undefined && positionals[i].trim() === "");
  if (empty !== undefined) return failed(`<${empty.name}> must not be empty`);
  const built = spec.build(
    positionals.map((value) => value.trim()),
    options,
  );
  return "problem" in built ? failed(built.problem) : { kind: "command", command: built };
}

function help(text: string): AdminInvocation {
  return { kind: "help", text };
}

function usage(message: string, hint: string): AdminInvocation {
  return { kind: "usage", message, hint };
}
