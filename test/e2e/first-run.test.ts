// A newcomer's first run (docs/console.md "First sign-in", docs/rules.md "A domain no rule defines"): the
// start-up lines say where the console is, an empty users database says how to get an administrator (and
// ADMIN_EMAIL/ADMIN_APP_PASSWORD make one whose credentials sign in), and a request for a domain no rule
// defines is answered OK, as the reference does, with one warning per domain. Exact texts, from JSON logs.
import { join } from "node:path";
import t, { type Test } from "tap";
import { NO_ADMINISTRATOR_YET } from "../../src/daemon/management-apis.js";
import { type DaemonProcess, startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { rulesYaml, waitForLog } from "../helpers/rules-dir.js";

/** The JSON log lines written so far, as `level: message`. */
function lines(daemon: DaemonProcess): string[] {
  return daemon
    .logs()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, string>)
    .map((record) => `${record.level}: ${record["@message"]}`);
}

/**
 * A daemon as `npm start` runs one (info logs), in JSON, on the rules of domain `rl` in `dir` (one
 * testdir per test: tap empties it when asked again).
 */
function start(dir: string, env: Record<string, string> = {}): Promise<DaemonProcess> {
  return startDaemon({ RUNTIME_ROOT: dir, LOG_LEVEL: "info", LOG_FORMAT: "json", ...env });
}

/** A test's directory with the rule file. */
function rulesDir(t: Test): string {
  return t.testdir({ config: { "rl.yaml": rulesYaml("rl", 2) } });
}

/** Lines about the administrator: the first-run hint and the bootstrap's report. */
const aboutAdministrator = (line: string) =>
  line.startsWith("info: no administrator yet") || line.includes(": admin bootstrap for ");

const ADMIN_LOOKUP_DONE = /"@message":"(no administrator yet|admin bootstrap)/;

t.test(
  "an empty users database: the console's address, and one line on how to get an administrator",
  async (t) => {
    const daemon = await start(rulesDir(t));
    t.teardown(() => daemon.stop());
    await waitForLog(daemon.logs, ADMIN_LOOKUP_DONE);
    const said = lines(daemon);
    t.ok(
      said.includes(`warning: Operator console at http://127.0.0.1:${daemon.debugPort}/console`),
      "the console's URL, on the debug port",
    );
    t.ok(
      said.indexOf(`warning: Listening for debug on '127.0.0.1:${daemon.debugPort}'`) <
        said.indexOf(`warning: Operator console at http://127.0.0.1:${daemon.debugPort}/console`),
      "right after the debug port's line",
    );
    t.strictSame(said.filter(aboutAdministrator), [`info: ${NO_ADMINISTRATOR_YET}`]);
    t.equal(
      NO_ADMINISTRATOR_YET,
      "no administrator yet: the console's Users and Migrations pages and the migrations API need the e-mail address and an application password of a user holding manage_options; to create one, start the daemon with ADMIN_EMAIL=<your e-mail address> and ADMIN_APP_PASSWORD=<an application password of 16 or more characters>",
    );
  },
);

t.test("CONSOLE_ENABLED=false: no console line", async (t) => {
  const daemon = await start(rulesDir(t), { CONSOLE_ENABLED: "false" });
  t.teardown(() => daemon.stop());
  await waitForLog(daemon.logs, ADMIN_LOOKUP_DONE);
  t.strictSame(
    lines(daemon).filter((line) => line.includes("Operator console")),
    [],
  );
});

t.test(
  "ADMIN_EMAIL and ADMIN_APP_PASSWORD: the administrator is made, and signs in to the console",
  async (t) => {
    const dir = rulesDir(t);
    const database = `sqlite:${join(dir, "users.db")}`;
    const admin = { ADMIN_EMAIL: "admin@example.com", ADMIN_APP_PASSWORD: "abcd efgh ijkl mnop qrst uvwx" };
    const first = await start(dir, { DATABASE_URL: database, ...admin });
    await waitForLog(first.logs, ADMIN_LOOKUP_DONE);
    t.strictSame(lines(first).filter(aboutAdministrator), [
      'warning: admin bootstrap for admin@example.com: created user 1, granted manage_options, set application password "bootstrap"',
    ]);
    const signIn = (password: string) =>
      httpRequest(first.debugPort, "/console/api/session", {
        method: "POST",
        body: "{}",
        headers: {
          "content-type": "application/json",
          "x-ratelimitd-console": "1",
          authorization: `Basic ${Buffer.from(`admin@example.com:${password}`).toString("base64")}`,
        },
      });
    const accepted = await signIn("abcdefghijklmnopqrstuvwx");
    t.equal(accepted.status, 200, "the application password, spaces or not");
    t.strictSame(JSON.parse(accepted.body), {
      userId: 1,
      email: "admin@example.com",
      capabilities: ["manage_options"],
    });
    t.equal((await signIn("the account's password")).status, 401, "nothing else signs in");
    await first.stop();

    // The next start on that database, without ADMIN_*: an administrator exists, so no hint.
    const again = await start(dir, { DATABASE_URL: database });
    t.teardown(() => again.stop());
    // The lookup ends before the listeners open (the database is up at once), so it is over by now.
    t.strictSame(lines(again).filter(aboutAdministrator), []);
  },
);

t.test("a domain no rule defines: answered OK, said once at warn", async (t) => {
  const daemon = await start(rulesDir(t));
  t.teardown(() => daemon.stop());
  const ask = (domain: string) =>
    httpRequest(daemon.httpPort, "/json", {
      method: "POST",
      body: JSON.stringify({ domain, descriptors: [{ entries: [{ key: "k", value: "v" }] }] }),
    });
  for (let i = 0; i < 3; i++) {
    const reply = await ask("rl2");
    t.equal(reply.status, 200);
    t.strictSame(
      JSON.parse(reply.body),
      { overallCode: "OK", statuses: [{ code: "OK" }] },
      "as the reference",
    );
  }
  await waitForLog(daemon.logs, /is not in the loaded rules/);
  t.strictSame(
    lines(daemon).filter((line) => line.includes("is not in the loaded rules")),
    [
      'warning: domain "rl2" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: rl)',
    ],
    "once for the three requests",
  );
  const known = await ask("rl");
  t.equal(JSON.parse(known.body).overallCode, "OK");
  t.equal(
    lines(daemon).filter((line) => line.includes("is not in the loaded rules")).length,
    1,
    "rl is known",
  );
});
