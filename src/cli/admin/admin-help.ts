import type { CommandSpec } from "./admin-command.js";
import type { OptionSpec } from "./command-line.js";

/** The program's name in messages and help. */
export const PROGRAM = "ratelimitd-admin";

const HELP_OPTION: OptionSpec = { name: "help", help: "show this help" };

const ENVIRONMENT =
  "Environment: the daemon's settings (see README), in particular DATABASE_URL (the users database, default sqlite:./data/ratelimitd.db), DATABASE_MAX_CONNECTIONS and MIGRATIONS_DIR; migration runs also use MIGRATIONS_JOB_LEASE, MIGRATIONS_POLL_INTERVAL, MIGRATIONS_RETRY_BASE and MIGRATIONS_RETRY_MAX.";
const EXIT_CODES =
  "Exit codes: 0 done, 1 the operation failed or was refused, 2 usage error or invalid settings, 130 interrupted.";

/** `capability grant <email> [capability] [options]` */
export function synopsis(spec: CommandSpec): string {
  const args = spec.args.map((arg) => (arg.optional ? `[${arg.name}]` : `<${arg.name}>`));
  return [spec.group, spec.action, ...args, ...(spec.options.length > 0 ? ["[options]"] : [])].join(" ");
}

/** Help for every command, or for those of one group (`ratelimitd-admin capability --help`). */
export function overviewHelp(commands: readonly CommandSpec[], group?: string): string {
  const shown = commands.filter((spec) => group === undefined || spec.group === group);
  const width = Math.max(...shown.map((spec) => synopsis(spec).length));
  const lines = [
    `Usage: ${PROGRAM} ${group ?? "<command>"} ${group === undefined ? "" : "<action> "}[arguments] [options]`,
    "",
    wrap(
      "Administers ratelimitd's users database directly, as the daemon's own settings name it: capabilities and application passwords of users, and data migrations.",
    ),
    "",
    "Commands:",
    ...shown.map((spec) => `  ${synopsis(spec).padEnd(width)}  ${spec.summary}`),
    "",
    `Run '${PROGRAM} <command> --help' for a command's details and options.`,
    "",
    wrap(ENVIRONMENT),
    wrap(EXIT_CODES),
  ];
  return `${lines.join("\n")}\n`;
}

/** Help for one command. */
export function commandHelp(spec: CommandSpec): string {
  const options = [...spec.options, HELP_OPTION];
  const label = (option: OptionSpec) =>
    `${option.name === "help" ? "-h, " : ""}--${option.name}${option.value === undefined ? "" : ` ${option.value}`}`;
  const width = Math.max(...options.map((option) => label(option).length));
  const lines = [
    `Usage: ${PROGRAM} ${synopsis(spec)}`,
    "",
    ...spec.details.flatMap((paragraph) => [wrap(paragraph), ""]),
    "Options:",
    ...options.map((option) => `  ${label(option).padEnd(width)}  ${option.help}`),
    "",
    wrap(EXIT_CODES),
  ];
  return `${lines.join("\n")}\n`;
}

/** The hint after a usage error. */
export function usageHint(spec?: { group: string; action?: string }): string {
  const command = [spec?.group, spec?.action].filter((part) => part !== undefined).join(" ");
  return `Run '${PROGRAM}${command === "" ? "" : ` ${command}`} --help' for usage.`;
}

/** Wraps a paragraph at 100 columns. */
function wrap(paragraph: string, columns = 100): string {
  const lines: string[] = [];
  let line = "";
  for (const word of paragraph.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > columns) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join("\n");
}
