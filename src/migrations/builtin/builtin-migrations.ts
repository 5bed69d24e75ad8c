import { emailKeyOf } from "../../users/email-address.js";
import type { MigrationDefinition } from "../migration.js";
import { userColumnMigration } from "./user-column-migration.js";

/**
 * Lower-cases stored e-mail addresses. Addresses are unique case-insensitively (a unique index on the
 * lower-cased form), so no two users can end up with the same address.
 */
export const normalizeUserEmails: MigrationDefinition = userColumnMigration({
  id: "normalize-user-emails",
  label: "Lower-case user e-mail addresses",
  description:
    "Stores every user's e-mail address in lower case (as it is compared). Rolling back restores the addresses as they were entered.",
  tags: ["users", "email"],
  column: "email",
  backupTable: "migration_email_backup",
  rewrite: emailKeyOf,
  // email_key is the lower-cased address: a user is done when the two are equal.
  pendingCondition: "email <> email_key",
});

/** Collapses runs of whitespace in user names to one space, in Unicode NFC. */
export const collapseUserNameWhitespace: MigrationDefinition = userColumnMigration({
  id: "collapse-user-name-whitespace",
  label: "Tidy user names",
  description:
    "Replaces runs of whitespace (tabs, non-breaking spaces, several spaces) in user names with one space and normalises them to Unicode NFC. Rolling back restores the names as they were.",
  tags: ["users", "names"],
  column: "name",
  backupTable: "migration_name_backup",
  rewrite: (name) => name.normalize("NFC").replace(/\s+/gu, " ").trim(),
});

/** The migrations every ratelimitd has, before the operator's own. */
export const BUILTIN_MIGRATIONS: readonly MigrationDefinition[] = [
  normalizeUserEmails,
  collapseUserNameWhitespace,
];
