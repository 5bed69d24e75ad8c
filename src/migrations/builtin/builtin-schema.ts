import type { SchemaStep } from "../../database/schema-steps.js";

/** What the built-in migrations keep so that their rollbacks can restore the data they changed. */
export const BUILTIN_MIGRATIONS_SCHEMA: readonly SchemaStep[] = [
  {
    id: "builtin-migrations-1",
    sqlite: `
      CREATE TABLE migration_email_backup (
        user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        original TEXT NOT NULL,
        restored INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE migration_name_backup (
        user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        original TEXT NOT NULL,
        restored INTEGER NOT NULL DEFAULT 0
      );`,
    postgres: `
      CREATE TABLE migration_email_backup (
        user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        original TEXT NOT NULL,
        restored INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE migration_name_backup (
        user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        original TEXT NOT NULL,
        restored INTEGER NOT NULL DEFAULT 0
      );`,
  },
];
