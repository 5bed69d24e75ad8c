import type { Operation } from "../../migrations/migration.js";
import type { LogQuery } from "../../migrations/migration-records.js";
import type { OptionSpec } from "./command-line.js";

/** A validated `ratelimitd-admin` command line, ready to run. `json`: print JSON instead of text. */
export type AdminCommand =
  | {
      readonly name: "capability grant" | "capability revoke";
      readonly email: string;
      readonly capability: string;
    }
  | { readonly name: "capability list"; readonly email: string; readonly json: boolean }
  | {
      readonly name: "app-password create";
      readonly email: string;
      readonly appName: string;
      readonly json: boolean;
    }
  | { readonly name: "app-password list"; readonly email: string; readonly json: boolean }
  | { readonly name: "app-password revoke"; readonly email: string; readonly uuidOrName: string }
  | { readonly name: "migrations list"; readonly tags: readonly string[] | undefined; readonly json: boolean }
  | {
      readonly name: "migrations run";
      readonly migrationId: string;
      readonly operation: Operation;
      readonly fromBatch: number | undefined;
      readonly toBatch: number | undefined;
      readonly batchSize: number | undefined;
      /** False with `--no-wait`: only schedule. */
      readonly wait: boolean;
      readonly json: boolean;
    }
  | { readonly name: "migrations executions"; readonly migrationId: string; readonly json: boolean }
  | {
      readonly name: "migrations logs";
      readonly executionId: number;
      readonly query: LogQuery;
      readonly json: boolean;
    };

/** A positional argument of a command (`<email>`); optional ones are shown as `[capability]`. */
export interface ArgumentSpec {
  readonly name: string;
  readonly optional?: boolean;
}

/** One `ratelimitd-admin <group> <action>` command: its syntax, its help, and how to validate it. */
export interface CommandSpec {
  readonly group: "capability" | "app-password" | "migrations";
  readonly action: string;
  readonly args: readonly ArgumentSpec[];
  readonly options: readonly OptionSpec[];
  /** One line for the command list. */
  readonly summary: string;
  /** Paragraphs for the command's own help. */
  readonly details: readonly string[];
  /**
   * Builds the command from its arguments (already counted against `args`) and options (already checked
   * against `options`), or says which value is invalid.
   */
  build(
    args: readonly string[],
    options: ReadonlyMap<string, string | true>,
  ): AdminCommand | { readonly problem: string };
}
