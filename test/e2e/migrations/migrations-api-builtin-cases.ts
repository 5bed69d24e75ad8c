// The built-in migrations (src/migrations) on real user data: run and rolled back through the API (docs/migrations-api.md).
import type { Test } from "tap";
import type { MigrationsApiContext } from "./migrations-api-context.js";

/** normalize-user-emails and collapse-user-name-whitespace, each run then rolled back. */
export function builtinMigrationCases(t: Test, { api }: MigrationsApiContext): void {
  t.test("the built-in migrations change real user data, and their rollbacks restore it", async (t) => {
    const users = [
      { name: "Mixed  Case", email: "Mixed.Case@Example.COM" },
      { name: "Tab\tName", email: "lower@example.com" },
      { name: "No\u00a0Break", email: "UPPER@EXAMPLE.ORG" },
    ];
    const ids: number[] = [];
    for (const user of users) {
      ids.push(((await api.call("PUT", "/users", { ...user, password: "pw" })).json as { id: number }).id);
    }
    const current = async () => {
      const all = (await api.call("GET", "/users")).json as { id: number; name: string; email: string }[];
      return ids.map((id) => all.find((u) => u.id === id));
    };
    const before = await current();
    const runAndWait = async (migration: string, operation: "run" | "rollback", expected: string) => {
      const id = (
        (await api.post(`/migrations/${migration}/${operation}`, { "batch-size": 2 })).json as {
          execution_id: number;
        }
      ).execution_id;
      t.match(
        await api.waitFor(migration, id, [expected, "failed"]),
        { status: expected },
        `${migration} ${operation}`,
      );
    };
    await runAndWait("normalize-user-emails", "run", "completed");
    t.strictSame(
      (await current()).map((u) => u?.email),
      ["mixed.case@example.com", "lower@example.com", "upper@example.org"],
    );
    await runAndWait("collapse-user-name-whitespace", "run", "completed");
    t.strictSame(
      (await current()).map((u) => u?.name),
      ["Mixed Case", "Tab Name", "No Break"],
    );
    // A user changes an address after the migration: the rollback leaves that one alone, with a warning.
    t.equal((await api.call("PATCH", `/users/${ids[2]}`, { email: "Changed@Example.org" })).status, 200);
    await runAndWait("normalize-user-emails", "rollback", "reverted");
    await runAndWait("collapse-user-name-whitespace", "rollback", "reverted");
    const after = await current();
    t.strictSame(
      after.map((u) => u?.name),
      before.map((u) => u?.name),
    );
    t.strictSame(
      after.map((u) => u?.email),
      ["Mixed.Case@Example.COM", "lower@example.com", "Changed@Example.org"],
    );
    const executions = (await api.get("/migrations/normalize-user-emails/executions")).json as {
      id: number;
    }[];
    const warnings = (await api.get(`/executions/${executions.at(-1)?.id}/logs?type=warning`)).json as {
      message: string;
    }[];
    t.strictSame(
      warnings.map((w) => w.message),
      [`User ${ids[2]}'s email changed since the migration ran; left as it is.`],
    );
  });
}
