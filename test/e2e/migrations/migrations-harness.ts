// A daemon with the test migrations (test/fixtures/migrations) and a bootstrapped administrator, and the
// calls the migrations tests make against it.
import { fileURLToPath } from "node:url";
import { SqlAuthStore } from "../../../src/auth/sql-auth-store.js";
import type { SqlDatabase } from "../../../src/database/sql-database.js";
import { SqlUserStore } from "../../../src/users/sql-user-store.js";
import { type HttpReply, httpRequest } from "../../helpers/http-request.js";

export const FIXTURES = fileURLToPath(new URL("../../fixtures/migrations", import.meta.url));
export const ADMIN = { email: "admin@example.com", password: "abcd efgh ijkl mnop qrst uvwx" };
export const BASE = "/ratelimitd/migrations/v1";

/** Settings of a daemon under test: the fixtures, the admin, and short timings. */
export function migrationsEnv(
  databaseUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    MIGRATIONS_DIR: FIXTURES,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_APP_PASSWORD: ADMIN.password,
    MIGRATIONS_POLL_INTERVAL: "100ms",
    MIGRATIONS_RETRY_BASE: "100ms",
    MIGRATIONS_JOB_LEASE: "2s",
    ...extra,
  };
}

/** `Authorization: Basic …` for an e-mail and password. */
export function basic(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`).toString("base64")}`;
}

export type Reply = HttpReply & { json: unknown };

/** A migrations API client for one daemon: as the admin unless told otherwise (`null`: no credentials). */
export function migrationsClient(
  port: number,
  authorization: string | null = basic(ADMIN.email, ADMIN.password),
) {
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const reply = await httpRequest(
      port,
      path.startsWith("/") && !path.startsWith(BASE) && !path.startsWith("/users") ? `${BASE}${path}` : path,
      {
        method,
        headers: {
          ...(authorization ? { authorization } : {}),
          ...(text === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(text === undefined ? {} : { body: text }),
      },
    );
    let json: unknown;
    try {
      json = reply.body === "" ? undefined : JSON.parse(reply.body);
    } catch {
      json = reply.body;
    }
    return { ...reply, json };
  };
  return {
    call,
    get: (path: string) => call("GET", path),
    post: (path: string, body?: unknown) => call("POST", path, body),
    /** Polls a migration's executions until `executionId` is in one of `statuses`; returns it. */
    async waitFor(migrationId: string, executionId: number, statuses: readonly string[], timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const executions = (await call("GET", `/migrations/${migrationId}/executions`)).json as {
          id: number;
          status: string;
        }[];
        const found = executions.find((e) => e.id === executionId);
        if (found && statuses.includes(found.status)) return found as Record<string, unknown>;
        if (Date.now() > deadline) {
          throw new Error(
            `execution ${executionId} of ${migrationId} is ${found?.status ?? "missing"} after ${timeoutMs} ms`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

/** Gives an existing user an application password (and optionally a capability), as the admin CLI does. */
export async function addApplicationPassword(
  db: SqlDatabase,
  email: string,
  secret: string,
  capability?: string,
): Promise<void> {
  const users = new SqlUserStore(db);
  const auth = new SqlAuthStore(db);
  const found = await users.findByEmailKey(email.toLowerCase());
  if (found === undefined) throw new Error(`no user ${email}`);
  await auth.addApplicationPassword(found.user.id, "test", secret, Date.now());
  if (capability) await auth.grant(found.user.id, capability, Date.now());
}

/** The batches each migration processed, as recorded by the test migrations: `up:1`, `down:2`… */
export async function runsOf(db: SqlDatabase, migration: string): Promise<string[]> {
  const rows = await db.query<{ operation: string; batch: number }>(
    "SELECT operation, batch FROM test_runs WHERE migration = $1 ORDER BY operation DESC, batch",
    [migration],
  );
  return rows.rows.map((row) => `${row.operation}:${row.batch}`);
}
