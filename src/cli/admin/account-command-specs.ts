import { MANAGE_OPTIONS } from "../../auth/authenticator.js";
import type { AdminCommand, CommandSpec } from "./admin-command.js";
import { JSON_OPTION } from "./command-line.js";

const CAPABILITY = /^[A-Za-z0-9_.:-]{1,100}$/;
/** Longest application password name accepted. */
export const MAX_APP_PASSWORD_NAME_LENGTH = 100;

const EMAIL_DETAILS = "<email> names a user of the users API, in any letter case.";

function capabilityCommand(action: "grant" | "revoke"): CommandSpec {
  return {
    group: "capability",
    action,
    args: [{ name: "email" }, { name: "capability", optional: true }],
    options: [],
    summary:
      action === "grant"
        ? `give a user a capability (default ${MANAGE_OPTIONS})`
        : `take a capability from a user (default ${MANAGE_OPTIONS})`,
    details: [
      action === "grant"
        ? `Gives the user a capability. ${MANAGE_OPTIONS}, the default, lets the user's application passwords use the migrations API (and the users API with USERS_REQUIRE_AUTH=true). Granting a capability the user already has changes nothing.`
        : "Takes a capability from the user, with immediate effect on the running daemons. Revoking a capability the user does not have changes nothing.",
      EMAIL_DETAILS,
    ],
    build(args) {
      const capability = args[1] ?? MANAGE_OPTIONS;
      if (!CAPABILITY.test(capability)) {
        return {
          problem: `invalid capability ${JSON.stringify(capability)}: use letters, digits and _ . : - (at most 100)`,
        };
      }
      return { name: `capability ${action}`, email: args[0]!, capability };
    },
  };
}

/** The `capability …` and `app-password …` commands. */
export const ACCOUNT_COMMANDS: readonly CommandSpec[] = [
  capabilityCommand("grant"),
  capabilityCommand("revoke"),
  {
    group: "capability",
    action: "list",
    args: [{ name: "email" }],
    options: [JSON_OPTION],
    summary: "list a user's capabilities",
    details: ["Prints the user's capabilities, one per line.", EMAIL_DETAILS],
    build: (args, options) => ({ name: "capability list", email: args[0]!, json: options.has("json") }),
  },
  {
    group: "app-password",
    action: "create",
    args: [{ name: "email" }, { name: "name" }],
    options: [JSON_OPTION],
    summary: "create an application password (its secret is shown once)",
    details: [
      "Creates an application password for HTTP Basic authentication (<email>:<password>) and prints it, in groups of four characters (spaces are ignored when it is used), with its uuid. Only a digest is stored: the password cannot be shown again.",
      `<name> says what it is for; each of a user's application passwords has its own name (at most ${MAX_APP_PASSWORD_NAME_LENGTH} characters). ${EMAIL_DETAILS}`,
    ],
    build(args, options): AdminCommand | { problem: string } {
      const appName = args[1]!.trim();
      if (appName === "" || appName.length > MAX_APP_PASSWORD_NAME_LENGTH) {
        return { problem: `<name> must be 1 to ${MAX_APP_PASSWORD_NAME_LENGTH} characters` };
      }
      return { name: "app-password create", email: args[0]!, appName, json: options.has("json") };
    },
  },
  {
    group: "app-password",
    action: "list",
    args: [{ name: "email" }],
    options: [JSON_OPTION],
    summary: "list a user's application passwords (never their secrets)",
    details: [
      "Prints the user's application passwords: uuid, name, when it was created, when it was last used and from which address (recorded at most once a minute).",
      EMAIL_DETAILS,
    ],
    build: (args, options) => ({ name: "app-password list", email: args[0]!, json: options.has("json") }),
  },
  {
    group: "app-password",
    action: "revoke",
    args: [{ name: "email" }, { name: "uuid-or-name" }],
    options: [],
    summary: "revoke application passwords by uuid or name",
    details: [
      "Deletes the user's application password with this uuid, or those with this name. Requests using it are refused at once.",
      EMAIL_DETAILS,
    ],
    build: (args) => ({ name: "app-password revoke", email: args[0]!, uuidOrName: args[1]! }),
  },
];
