import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import pg from "pg";

/**
 * The PostgreSQL the tests use: the machine's own server (127.0.0.1:5432, trust auth, database `test`),
 * or TEST_POSTGRES_URL. Tests never touch its existing data: each works in a schema of its own.
 */
export const POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;

/** A schema created for one test and dropped at its teardown. */
export interface PostgresSchema {
  readonly name: string;
  /** A DATABASE_URL whose connections work in this schema (search_path). */
  readonly url: string;
  /** Runs SQL in the schema (for assertions and set-up). */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}

/** The part of a tap test the PostgreSQL helpers use. */
export interface PostgresTestHooks {
  teardown(fn: () => unknown): void;
  skip(name: string, cb: () => void): unknown;
  fail(message: string): unknown;
}

/**
 * Creates an empty schema for the test. When PostgreSQL cannot be reached: with `CI=true` the test
 * fails; elsewhere it records a skip and prints a loud line on stderr. Resolves undefined in both cases.
 */
export async function createPostgresSchema(t: PostgresTestHooks): Promise<PostgresSchema | undefined> {
  const name = `rl_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${name}`);
  } catch (error) {
    await admin.end().catch(() => undefined);
    const message = `PostgreSQL at ${POSTGRES_URL} is not usable: ${(error as Error).message}`;
    if (process.env.CI === "true") t.fail(`${message}; CI=true, so this is a failure`);
    else {
      console.error(`\n!!!!! SKIPPING: ${message} !!!!!\n`);
      t.skip(`SKIPPED: ${message}`, () => {});
    }
    return undefined;
  }
  await admin.query(`SET search_path TO ${name}`);
  t.teardown(async () => {
    await admin.query(`DROP SCHEMA ${name} CASCADE`).catch(() => undefined);
    await admin.end();
  });
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("options", `-c search_path=${name}`);
  return {
    name,
    url: url.toString(),
    query: async <Row>(sql: string, params?: unknown[]) => (await admin.query(sql, params)).rows as Row[],
  };
}
