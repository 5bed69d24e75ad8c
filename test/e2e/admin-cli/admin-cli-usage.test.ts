// ratelimitd-admin (docs/cli.md "ratelimitd-admin"): usage errors and --help, which never touch the
// database, and the settings it refuses before doing anything.
import { existsSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { freePort } from "../../helpers/free-port.js";
import { adminCli, expectRun, refused } from "./admin-cli-harness.js";

t.test("usage errors exit 2 before touching the database; --help exits 0", async (t) => {
  const file = join(t.testdir(), "untouched.db");
  const cli = adminCli({ DATABASE_URL: `sqlite:${file}` });
  const cases: [string[], string, string][] = [
    [[], "missing command", ""],
    [["bogus"], 'unknown command "bogus"', ""],
    [["capability"], "capability: missing action (grant, revoke, list)", " capability"],
    [["capability", "grant"], "capability grant: missing <email>", " capability grant"],
    [
      ["capability", "grant", "x@y.com", "two words"],
      'capability grant: invalid capability "two words": use letters, digits and _ . : - (at most 100)',
      " capability grant",
    ],
    [
      ["capability", "list", "x@y.com", "--bogus"],
      "capability list: unknown option --bogus",
      " capability list",
    ],
    [["app-password", "create", "x@y.com"], "app-password create: missing <name>", " app-password create"],
    [
      ["app-password", "revoke", "x@y.com", "ci", "more"],
      'app-password revoke: unexpected argument "more"',
      " app-password revoke",
    ],
    [
      ["migrations", "list", "--json=yes"],
      "migrations list: option --json takes no value",
      " migrations list",
    ],
    [
      ["migrations", "run", "normalize-user-emails", "--from-batch", "0"],
      'migrations run: option --from-batch must be an integer ≥ 1, not "0"',
      " migrations run",
    ],
    [
      ["migrations", "rollback", "normalize-user-emails", "--batch-size"],
      "migrations rollback: option --batch-size needs a value <n>",
      " migrations rollback",
    ],
    [
      ["migrations", "logs", "abc"],
      'migrations logs: <execution-id> must be an integer ≥ 1, not "abc"',
      " migrations logs",
    ],
    [
      ["migrations", "logs", "1", "--type", "info", "--not-type", "error"],
      "migrations logs: options --type and --not-type cannot be used together",
      " migrations logs",
    ],
  ];
  const runs = await Promise.all(cases.map(([args]) => cli(...args)));
  cases.forEach(([, message, command], i) => {
    expectRun(t, runs[i]!, 2, [], [refused(message), `Run 'ratelimitd-admin${command} --help' for usage.`]);
  });
  t.notOk(existsSync(file), "no database file was created");

  const helps: [string[], string][] = [
    [["--help"], "Usage: ratelimitd-admin <command> [arguments] [options]"],
    [["migrations", "--help"], "Usage: ratelimitd-admin migrations <action> [arguments] [options]"],
    [["capability", "grant", "-h"], "Usage: ratelimitd-admin capability grant <email> [capability]"],
    [
      ["app-password", "create", "--help"],
      "Usage: ratelimitd-admin app-password create <email> <name> [options]",
    ],
  ];
  for (const [args, usage] of helps) {
    const help = await cli(...args);
    t.strictSame([help.code, help.stderr, help.stdout.split("\n")[0]], [0, "", usage]);
  }
});

t.test("invalid settings exit 2; an unreachable database is a refusal (1)", async (t) => {
  expectRun(
    t,
    await adminCli({ DATABASE_URL: "mysql://x" })("capability", "list", "x@y.com"),
    2,
    [],
    [
      "ratelimitd-admin: invalid settings:",
      '  invalid setting DATABASE_URL="mysql://x": must start with sqlite: or postgres://',
    ],
  );
  const port = await freePort();
  const url = `postgres://nobody@127.0.0.1:${port}/test`;
  const message = `cannot open the database ${url}: PostgreSQL: connect ECONNREFUSED 127.0.0.1:${port}`;
  expectRun(
    t,
    await adminCli({ DATABASE_URL: url })("capability", "list", "x@y.com"),
    1,
    [],
    refused(message),
  );
});
