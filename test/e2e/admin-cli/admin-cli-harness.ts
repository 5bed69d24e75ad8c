// What the ratelimitd-admin tests share: running the CLI and checking its exact output, the two databases
// they run on (a SQLite file and PostgreSQL), a daemon on the same database, and the users they administer.
import { join } from "node:path";
import type { Test } from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { createPostgresSchema } from "../../helpers/postgres-schema.js";
import { runCommand } from "../../helpers/run-command.js";
import { basic, migrationsClient, type Reply } from "../migrations/migrations-harness.js";

export type CliRun = Awaited<ReturnType<typeof runCommand>>;
export type Cli = (...args: string[]) => Promise<CliRun>;
/** Output lines (each gets its newline); a single line may be given as a string. */
export type Lines = string | readonly string[];
/** One command line and what it must do: exit code, stdout lines, stderr lines. */
export type Step = readonly [args: readonly string[], code: number, stdout?: Lines, stderr?: Lines];
export type MigrationsClient = ReturnType<typeof migrationsClient>;

/** `ratelimitd-admin` with only these settings (DATABASE_URL, MIGRATIONS_DIR…). */
export function adminCli(env: Record<string, string>): Cli {
  return (...args) => runCommand("ratelimitd-admin", args, env);
}

const text = (lines: Lines) => [lines].flat().map((line) => `${line}\n`);

/** A run's exit code and its exact output. */
export function expectRun(t: Test, run: CliRun, code: number, stdout: Lines = [], stderr: Lines = []): void {
  t.strictSame(run, { code, stdout: text(stdout).join(""), stderr: text(stderr).join("") }, `exit ${code}`);
}

/** Runs the steps one after the other, each with its exact expectations. */
export async function expectSteps(t: Test, cli: Cli, steps: readonly Step[]): Promise<void> {
  for (const [args, code, stdout, stderr] of steps) {
    expectRun(t, await cli(...args), code, stdout, stderr);
  }
}

/** The `--json` output of a successful run. */
export function jsonOf<T = unknown>(t: Test, run: CliRun): T {
  t.strictSame([run.code, run.stderr], [0, ""]);
  return JSON.parse(run.stdout) as T;
}

const ISO_DATE = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00/g;

/** Text or JSON with every ISO 8601 date (the CLI's and the API's form) replaced by `<date>`. */
export function masked<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(ISO_DATE, "<date>")) as T;
}

/** A refusal's stderr line. */
export const refused = (message: string) => `ratelimitd-admin: ${message}`;

/** The database to administer, and a second, empty one for the operator's test migrations. */
export interface Target {
  readonly databaseUrl: string;
  readonly fixturesDatabaseUrl: string;
}

/** Defines `cases` on a SQLite file and on PostgreSQL (recorded as skipped where PostgreSQL is unusable). */
export function onEachDatabase(t: Test, cases: (t: Test, target: Target) => void): void {
  t.test("SQLite file", async (t) => {
    const dir = t.testdir({ config: {} });
    cases(t, {
      databaseUrl: `sqlite:${join(dir, "ratelimitd.db")}`,
      fixturesDatabaseUrl: `sqlite:${join(dir, "fixtures.db")}`,
    });
  });

  t.test("PostgreSQL", async (t) => {
    const schema = await createPostgresSchema(t);
    const fixtures = schema && (await createPostgresSchema(t));
    if (schema === undefined || fixtures === undefined) return;
    cases(t, { databaseUrl: schema.url, fixturesDatabaseUrl: fixtures.url });
  });
}

/** Defines `cases` against a daemon (built-in migrations, polled every 100 ms) on `databaseUrl`. */
export function againstDaemon(t: Test, databaseUrl: string, cases: (t: Test, port: number) => unknown): void {
  t.test("against a running daemon on the same database", async (t) => {
    const daemon = await startDaemon({
      RUNTIME_ROOT: t.testdir({ config: {} }),
      DATABASE_URL: databaseUrl,
      MIGRATIONS_POLL_INTERVAL: "100ms",
    });
    t.teardown(() => daemon.stop());
    await cases(t, daemon.httpPort);
  });
}

/** Creates, through the users API, Ann (id 1, a mixed-case e-mail) and Bob (id 2, spaces in his name). */
export async function createUsers(port: number): Promise<[ann: Reply, bob: Reply]> {
  const anonymous = migrationsClient(port, null);
  const ann = await anonymous.call("PUT", "/users", {
    name: "Ann",
    email: "Ann@Example.COM",
    password: "pw",
  });
  const bob = await anonymous.call("PUT", "/users", {
    name: "Bob   Smith",
    email: "bob@example.com",
    password: "pw",
  });
  return [ann, bob];
}

/**
 * Set-up, not a test: Ann and Bob, with manage_options and an application password for Ann, as the
 * accounts tests leave them. Throws when a step fails. Resolves a migrations client authenticated as Ann.
 */
export async function createAdministrator(cli: Cli, port: number): Promise<MigrationsClient> {
  const users = await createUsers(port);
  const granted = await cli("capability", "grant", "ann@example.com");
  const created = await cli("app-password", "create", "ann@example.com", "admin", "--json");
  if (users.some((user) => user.status !== 200) || granted.code !== 0 || created.code !== 0) {
    throw new Error(`cannot set up the administrator: ${JSON.stringify({ users, granted, created })}`);
  }
  const { password } = JSON.parse(created.stdout) as { password: string };
  return migrationsClient(port, basic("ann@example.com", password));
}
