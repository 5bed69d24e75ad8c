// ratelimitd-admin (docs/cli.md "ratelimitd-admin"): capabilities and application passwords as a
// running daemon's migrations API sees them; on a SQLite file and on PostgreSQL.
import t, { type Test } from "tap";
import { basic, migrationsClient } from "../migrations/migrations-harness.js";
import {
  adminCli,
  againstDaemon,
  type Cli,
  createUsers,
  expectRun,
  expectSteps,
  jsonOf,
  masked,
  onEachDatabase,
  refused,
} from "./admin-cli-harness.js";

onEachDatabase(t, (t, target) => {
  const cli = adminCli({ DATABASE_URL: target.databaseUrl });

  t.test("an unknown e-mail is refused", async (t) => {
    const unknown = refused("no user with e-mail x@y.com");
    await expectSteps(t, cli, [
      [["capability", "grant", "x@y.com"], 1, [], unknown],
      [["capability", "revoke", "x@y.com", "audit"], 1, [], unknown],
      [["capability", "list", " x@y.com ", "--json"], 1, [], unknown],
      [["app-password", "create", "x@y.com", "ci"], 1, [], unknown],
      [["app-password", "list", "x@y.com"], 1, [], unknown],
      [["app-password", "revoke", "x@y.com", "ci"], 1, [], unknown],
    ]);
  });

  againstDaemon(t, target.databaseUrl, (t, port) => accountCases(t, cli, port));
});

function accountCases(t: Test, cli: Cli, port: number): void {
  const anonymous = migrationsClient(port, null);
  // Ann's application password, created by the application passwords test for the later ones.
  let admin = anonymous;
  const forbidden = {
    code: "migrations_forbidden",
    success: false,
    message: "Sorry, you are not allowed to manage migrations.",
  };

  t.test("capabilities of a user created through the users API", async (t) => {
    const [ann, bob] = await createUsers(port);
    t.strictSame([ann.status, ann.json], [200, { id: 1, name: "Ann", email: "Ann@Example.COM" }]);
    t.strictSame([bob.status, bob.json], [200, { id: 2, name: "Bob   Smith", email: "bob@example.com" }]);
    const granted = "Granted manage_options to Ann@Example.COM.";
    await expectSteps(t, cli, [
      [["capability", "list", "ann@example.com"], 0, "Ann@Example.COM has no capabilities."],
      [["capability", "list", "ann@example.com", "--json"], 0, "[]"],
      [["capability", "grant", "ann@example.com"], 0, granted],
      [
        ["capability", "grant", "ANN@EXAMPLE.COM", "manage_options"],
        0,
        "Ann@Example.COM already has manage_options.",
      ],
      [["capability", "list", "ann@example.com"], 0, "manage_options"],
      [["capability", "list", "ann@example.com", "--json"], 0, ["[", '  "manage_options"', "]"]],
      [["capability", "revoke", "ann@example.com"], 0, "Revoked manage_options from Ann@Example.COM."],
      [["capability", "revoke", "ann@example.com"], 0, "Ann@Example.COM does not have manage_options."],
      [["capability", "list", "ann@example.com", "--json"], 0, "[]"],
      [["capability", "grant", "ann@example.com"], 0, granted],
    ]);
  });

  t.test("application passwords authenticate against the daemon until revoked", async (t) => {
    const created = await cli("app-password", "create", "ann@example.com", "ci");
    const shown =
      /^Created application password "ci" for Ann@Example\.COM\.\nuuid: {5}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\npassword: ((?:[A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4})\nCopy the password now: it cannot be shown again\.\n$/.exec(
        created.stdout,
      );
    t.strictSame([created.code, created.stderr, shown !== null], [0, "", true], created.stdout);
    const [, uuid = "", password = ""] = shown ?? [];
    const secret = password.replaceAll(" ", "");

    const listed = jsonOf(t, await cli("app-password", "list", "ann@example.com", "--json"));
    t.strictSame(masked(listed), [{ uuid, name: "ci", created: "<date>", last_used: null, last_ip: null }]);
    const table = await cli("app-password", "list", "ann@example.com");
    expectRun(t, masked(table), 0, [
      "UUID                                  NAME  CREATED                    LAST USED  LAST IP",
      `${uuid}  ci    <date>  -          -`,
    ]);
    for (const output of [JSON.stringify(listed), table.stdout]) {
      t.notOk(output.includes(secret) || output.includes(password), "the secret is never listed");
    }

    const ann = migrationsClient(port, basic("ann@example.com", password));
    const migrations = await ann.get("/migrations");
    t.strictSame(
      [migrations.status, (migrations.json as { id: string }[]).map((m) => m.id)],
      [200, ["normalize-user-emails", "collapse-user-name-whitespace"]],
    );
    const withoutSpaces = await migrationsClient(port, basic("ann@example.com", secret)).get("/migrations");
    t.equal(withoutSpaces.status, 200);
    t.strictSame(masked(jsonOf(t, await cli("app-password", "list", "ann@example.com", "--json"))), [
      { uuid, name: "ci", created: "<date>", last_used: "<date>", last_ip: "127.0.0.1" },
    ]);

    await expectSteps(t, cli, [
      [
        ["app-password", "create", "ann@example.com", "ci"],
        1,
        [],
        refused('Ann@Example.COM already has an application password named "ci"'),
      ],
      [
        ["app-password", "revoke", "ann@example.com", "ci"],
        0,
        `Revoked application password "ci" (${uuid}) of Ann@Example.COM.`,
      ],
    ]);
    const rejected = await ann.get("/migrations");
    t.strictSame(
      [rejected.status, rejected.headers["www-authenticate"], rejected.json],
      [
        401,
        'Basic realm="ratelimitd"',
        {
          code: "migrations_unauthorized",
          success: false,
          message: "Invalid e-mail address or application password.",
        },
      ],
    );
    await expectSteps(t, cli, [
      [
        ["app-password", "revoke", "ann@example.com", "ci"],
        1,
        [],
        refused('Ann@Example.COM has no application password with uuid or name "ci"'),
      ],
      [["app-password", "list", "ann@example.com"], 0, "Ann@Example.COM has no application passwords."],
    ]);

    const spare = jsonOf<Record<string, string>>(
      t,
      await cli("app-password", "create", "ann@example.com", "spare", "--json"),
    );
    t.strictSame(Object.keys(spare), ["uuid", "name", "password", "created"]);
    await expectSteps(t, cli, [
      [
        ["app-password", "revoke", "ann@example.com", spare.uuid!],
        0,
        `Revoked application password "spare" (${spare.uuid}) of Ann@Example.COM.`,
      ],
    ]);
    t.equal(
      (await migrationsClient(port, basic("ann@example.com", spare.password!)).get("/migrations")).status,
      401,
    );

    const kept = jsonOf<{ password: string }>(
      t,
      await cli("app-password", "create", "ann@example.com", "admin", "--json"),
    );
    admin = migrationsClient(port, basic("ann@example.com", kept.password));
    t.equal((await admin.get("/migrations")).status, 200);
  });

  t.test("without manage_options an application password gets 403", async (t) => {
    const bobs = jsonOf<{ password: string }>(
      t,
      await cli("app-password", "create", "bob@example.com", "ci", "--json"),
    );
    const bob = await migrationsClient(port, basic("bob@example.com", bobs.password)).get("/migrations");
    t.strictSame([bob.status, bob.json], [403, forbidden]);
    // Revoking the capability takes effect at once on the running daemon.
    await expectSteps(t, cli, [
      [["capability", "revoke", "ann@example.com"], 0, "Revoked manage_options from Ann@Example.COM."],
    ]);
    const ann = await admin.get("/migrations");
    t.strictSame([ann.status, ann.json], [403, forbidden]);
    await expectSteps(t, cli, [
      [["capability", "grant", "ann@example.com"], 0, "Granted manage_options to Ann@Example.COM."],
    ]);
    t.equal((await admin.get("/migrations")).status, 200);
  });
}
