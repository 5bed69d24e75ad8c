import { randomBytes } from "node:crypto";
import pg from "pg";
import { testPostgres } from "./postgres-server.js";

/** A schema created for one test and dropped at its teardown. */
export interface PostgresSchema {
  readonly name: string;
  /** A DATABASE_URL whose connections work in this schema (search_path). */
  readonly url: string;
  /** The server's own URL (no schema). */
  readonly serverUrl: string;
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
 * Creates an empty schema for the test on the test process's PostgreSQL ({@link testPostgres}: a
 * throwaway server, or TEST_POSTGRES_URL). When there is none or it cannot be reached: with `CI=true` the
 * test fails; elsewhere it records a skip and prints a loud line on stderr. Resolves undefined in both cases.
 */
export async function createPostgresSchema(t: PostgresTestHooks): Promise<PostgresSchema | undefined> {
  const server = await testPostgres();
  if ("problem" in server) return unusable(t, server.problem);
  const name = `rl_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${name}`);
  } catch (error) {
    await admin.end().catch(() => undefined);
    return unusable(t, `PostgreSQL at ${server.url} is not usable: ${(error as Error).message}`);
  }
  await admin.query(`SET search_path TO ${name}`);
  t.teardown(async () => {
    await admin.query(`DROP SCHEMA ${name} CASCADE`).catch(() => undefined);
    await admin.end();
  });
  const url = new URL(server.url);
  url.searchParams.set("options", `-c search_path=${name}`);
  return {
    name,
    url: url.toString(),
    serverUrl: server.url,
    query: async <Row>(sql: string, params?: unknown[]) => (await admin.query(sql, params)).rows as Row[],
  };
}

/**
 * Reports that the tests cannot have PostgreSQL: a failure under `CI=true` (a CI machine without it must
 * not pass silently), elsewhere a skip and a loud line on stderr. Resolves undefined.
 */
export function unusable(
  t: Pick<PostgresTestHooks, "skip" | "fail">,
  message: string,
  env: NodeJS.ProcessEnv = process.env,
): undefined {
  if (env.CI === "true") t.fail(`${message}; CI=true, so this is a failure`);
  else {
    console.error(`\n!!!!! SKIPPING: ${message} !!!!!\n`);
    t.skip(`SKIPPED: ${message}`, () => {});
  }
  return undefined;
}
