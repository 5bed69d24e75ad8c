import { parseLogQuery } from "../../migrations/log-query.js";
import type { Operation } from "../../migrations/migration.js";
import { MAX_BATCH_SIZE } from "../../migrations/migration-service.js";
import type { AdminCommand, CommandSpec } from "./admin-command.js";
import { integerOption, JSON_OPTION, type OptionSpec } from "./command-line.js";

const RANGE_OPTIONS: readonly OptionSpec[] = [
  { name: "from-batch", value: "<n>", help: "first batch (default 1)" },
  { name: "to-batch", value: "<n>", help: "last batch, a hard stop (default: the last one)" },
  {
    name: "batch-size",
    value: "<n>",
    help: `items per batch, at most ${MAX_BATCH_SIZE} (default: the migration's)`,
  },
  { name: "no-wait", help: "only schedule it: a daemon's migration worker runs it" },
  JSON_OPTION,
];

const LOG_OPTIONS: readonly OptionSpec[] = [
  { name: "type", value: "<types>", help: "only these types, comma-separated: info, warning, error, debug" },
  { name: "not-type", value: "<types>", help: "all but these types (not with --type)" },
  { name: "search", value: "<text>", help: "only messages containing this text (any letter case)" },
  { name: "limit", value: "<n>", help: "at most this many entries, 1-200 (default 100)" },
  { name: "offset", value: "<n>", help: "skip this many entries first (default 0)" },
  { name: "order", value: "ASC|DESC", help: "sort order (default DESC)" },
  { name: "order-by", value: "<column>", help: "id, type or created_at (default created_at; ties by id)" },
  JSON_OPTION,
];

function scheduleCommand(operation: Operation): CommandSpec {
  const verb = operation === "up" ? "run" : "rollback";
  return {
    group: "migrations",
    action: verb,
    args: [{ name: "migration-id" }],
    options: RANGE_OPTIONS,
    summary:
      operation === "up"
        ? "run a migration, showing its progress until it ends"
        : "roll a migration back, showing its progress until it ends",
    details: [
      `Schedules ${operation === "up" ? "a run (operation up)" : "a rollback (operation down)"} of batches --from-batch to --to-batch, then works through them in this process, as one more migration worker, until the execution ends. Progress goes to stderr: a progress bar on a terminal, otherwise one line per batch. The final status goes to stdout.`,
      operation === "up"
        ? "When a batch fails (after the migration's retries), the execution ends failed and, if the migration can be rolled back, an automatic rollback is scheduled as a child execution; it is run here too. The exit code is then 1."
        : "The exit code is 1 when the rollback fails.",
      "Ctrl-C stops gracefully: the batch in progress is released back to the queue and the execution stays running, for a daemon's worker to finish (exit code 130). While waiting, this process may also run due batches of other executions.",
    ],
    build(args, options) {
      const range: Record<string, number | undefined> = {};
      for (const name of ["from-batch", "to-batch", "batch-size"]) {
        const value = integerOption(options, name, 1);
        if (typeof value === "object") return value;
        range[name] = value;
      }
      return {
        name: "migrations run",
        migrationId: args[0]!,
        operation,
        fromBatch: range["from-batch"],
        toBatch: range["to-batch"],
        batchSize: range["batch-size"],
        wait: !options.has("no-wait"),
        json: options.has("json"),
      };
    },
  };
}

/** The `migrations …` commands. */
export const MIGRATION_COMMANDS: readonly CommandSpec[] = [
  {
    group: "migrations",
    action: "list",
    args: [],
    options: [
      { name: "tags", value: "<tags>", help: "only migrations with any of these tags, comma-separated" },
      JSON_OPTION,
    ],
    summary: "list the migrations and their status",
    details: [
      "Lists the built-in migrations and the operator's (MIGRATIONS_DIR), with their number of batches at the default batch size, whether they can run and apply here, and the status of their latest execution.",
    ],
    build(_args, options): AdminCommand {
      const tags = options.get("tags");
      const wanted =
        typeof tags === "string" && tags.trim() !== "" ? tags.split(",").map((tag) => tag.trim()) : undefined;
      return { name: "migrations list", tags: wanted, json: options.has("json") };
    },
  },
  scheduleCommand("up"),
  scheduleCommand("down"),
  {
    group: "migrations",
    action: "executions",
    args: [{ name: "migration-id" }],
    options: [JSON_OPTION],
    summary: "list a migration's executions",
    details: ["Lists the migration's executions, oldest first, with their progress."],
    build: (args, options) => ({
      name: "migrations executions",
      migrationId: args[0]!,
      json: options.has("json"),
    }),
  },
  {
    group: "migrations",
    action: "logs",
    args: [{ name: "execution-id" }],
    options: LOG_OPTIONS,
    summary: "show an execution's log",
    details: ["Prints the log entries of an execution (ids are in the executions list), newest first."],
    build(args, options) {
      const executionId = /^\d{1,16}$/.test(args[0]!) ? Number(args[0]) : 0;
      if (!Number.isSafeInteger(executionId) || executionId < 1) {
        return { problem: `<execution-id> must be an integer ≥ 1, not ${JSON.stringify(args[0])}` };
      }
      const parsed = parseLogQuery((name) => {
        const value = options.get(name);
        return value === true ? undefined : value;
      });
      if (!parsed.ok) return { problem: optionWording(parsed.message) };
      return { name: "migrations logs", executionId, query: parsed.query, json: options.has("json") };
    },
  },
];

/** The logs route's 400 messages, reworded for options: `Invalid parameter limit: …` → `option --limit: …`. */
function optionWording(message: string): string {
  if (message.startsWith("Invalid parameters:"))
    return "options --type and --not-type cannot be used together";
  return message.replace(/^Invalid parameter (\S+): (.*?)\.?$/, "option --$1: $2");
}
