import type { SchemaStep } from "../database/schema-steps.js";

/**
 * The users table. Uniqueness of e-mail addresses is the database's job (a unique index on the normalised
 * address), so concurrent creates cannot both win. Ids come from `ratelimitd_sequences`, incremented in the
 * creating transaction: a refused create does not use up an id on either database, so both assign the
 * same ids.
 */
export const USERS_SCHEMA: readonly SchemaStep[] = [
  {
    id: "users-1",
    sqlite: `
      CREATE TABLE ratelimitd_sequences (name TEXT PRIMARY KEY, last_value INTEGER NOT NULL);
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX users_email_key ON users (email_key);
      INSERT INTO ratelimitd_sequences (name, last_value) VALUES ('users', 0);`,
    postgres: `
      CREATE TABLE ratelimitd_sequences (name TEXT PRIMARY KEY, last_value BIGINT NOT NULL);
      CREATE TABLE users (
        id BIGINT PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        updated_at_ms BIGINT NOT NULL
      );
      CREATE UNIQUE INDEX users_email_key ON users (email_key);
      INSERT INTO ratelimitd_sequences (name, last_value) VALUES ('users', 0);`,
  },
];
