// The migrations API's authentication and authorization: HTTP Basic with an application password, and the
// manage_options capability (docs/migrations-api.md).
import type { Test } from "tap";
import type { MigrationsApiContext } from "./migrations-api-context.js";
import { ADMIN, addApplicationPassword, basic, migrationsClient } from "./migrations-harness.js";

/** 401 for missing or wrong credentials, 403 for a user without the capability; leaves a user "Plain". */
export function authenticationCases(t: Test, { port, db, api, error }: MigrationsApiContext): void {
  t.test("authentication: 401 without or with wrong credentials, 403 without manage_options", async (t) => {
    const anonymous = await migrationsClient(port, null).get("/migrations");
    t.equal(anonymous.status, 401);
    t.equal(anonymous.headers["www-authenticate"], 'Basic realm="ratelimitd"');
    t.strictSame(
      anonymous.json,
      error(
        "migrations_unauthorized",
        "Authentication required: use HTTP Basic with an application password.",
      ),
    );
    for (const authorization of [
      basic(ADMIN.email, "wrong password"),
      basic("nobody@example.com", ADMIN.password),
      basic(ADMIN.email, ""),
      // No user can have this address (PostgreSQL cannot even store a NUL): a refusal, not a 500.
      basic("ad\u0000min@example.com", ADMIN.password),
    ]) {
      const refused = await migrationsClient(port, authorization).get("/migrations");
      t.equal(refused.status, 401);
      t.strictSame(
        refused.json,
        error("migrations_unauthorized", "Invalid e-mail address or application password."),
      );
    }
    const bearer = await migrationsClient(port, "Bearer abc").get("/migrations");
    t.equal(bearer.status, 401, "no bearer authenticator is configured");
    t.equal(
      (
        await migrationsClient(
          port,
          basic(ADMIN.email.toUpperCase(), ADMIN.password.replaceAll(" ", "")),
        ).get("/migrations")
      ).status,
      200,
    );
    // A user of its own, with an application password but no capability.
    t.equal(
      (await api.call("PUT", "/users", { name: "Plain", email: "plain@example.com", password: "pw" })).status,
      200,
    );
    await addApplicationPassword(db, "plain@example.com", "plainplainplainplainplai");
    const plain = migrationsClient(port, basic("plain@example.com", "plainplainplainplainplai"));
    const forbidden = await plain.get("/migrations");
    t.equal(forbidden.status, 403);
    t.strictSame(
      forbidden.json,
      error("migrations_forbidden", "Sorry, you are not allowed to manage migrations."),
    );
    t.equal((await plain.post("/migrations/one-batch/run")).status, 403);
    t.equal((await api.call("PUT", "/users", {}, {})).status, 400, "the users API itself stays open");
  });
}
