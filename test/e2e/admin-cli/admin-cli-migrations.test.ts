// ratelimitd-admin (docs/cli.md "ratelimitd-admin"): migration runs, records and rollbacks, through the CLI
// alone and against a running daemon on the same database; on a SQLite file and on PostgreSQL.
import t, { type Test } from "tap";
import { FIXTURES, migrationsClient } from "../migrations/migrations-harness.js";
import {
  adminCli,
  againstDaemon,
  type Cli,
  createAdministrator,
  expectRun,
  expectSteps,
  jsonOf,
  type MigrationsClient,
  masked,
  onEachDatabase,
  refused,
} from "./admin-cli-harness.js";

/** An execution as `--json` and the API show it, dates masked; `started: false` for one still scheduled. */
function execution(e: {
  id: number;
  migration: string;
  operation: "up" | "down";
  status: string;
  items: [processed: number, total: number];
  parent?: number;
  started?: boolean;
}) {
  const date = e.started === false ? null : "<date>";
  return {
    id: e.id,
    migration_id: e.migration,
    operation: e.operation,
    parent_execution_id: e.parent ?? null,
    start_date_gmt: date,
    end_date_gmt: date,
    status: e.status,
    items_total: e.items[1],
    items_processed: e.items[0],
    created_at: "<date>",
  };
}

onEachDatabase(t, (t, target) => {
  t.test("an operator migration that fails, and --no-wait (no daemon)", async (t) => {
    const fixturesCli = adminCli({ DATABASE_URL: target.fixturesDatabaseUrl, MIGRATIONS_DIR: FIXTURES });
    await expectSteps(t, fixturesCli, [
      [
        ["migrations", "run", "failing"],
        1,
        ["execution 1 (failing up) failed: 1/3 items", "execution 2 (failing down) reverted: 2/2 items"],
        [
          "execution 1: failing up, batches 1-3, batch size 1",
          "execution 1: batch 1/3 done, 1/3 items",
          "ratelimitd-admin: execution 1 failed: Batch 2 failed: boom at batch 2",
          "ratelimitd-admin: automatic rollback scheduled as execution 2",
          "execution 2: failing down (automatic rollback of execution 1), batches 1-2, batch size 1",
          "execution 2: batch 1/2 done, 1/2 items",
          "execution 2: batch 2/2 done, 2/2 items",
        ],
      ],
    ]);
    const failing = { migration: "failing" } as const;
    const failed = (id: number) =>
      execution({ ...failing, id, operation: "up", status: "failed", items: [1, 3] });
    const reverted = (id: number) =>
      execution({ ...failing, id, operation: "down", status: "reverted", items: [2, 2], parent: id - 1 });
    const again = await fixturesCli("migrations", "run", "failing", "--json");
    t.equal(again.code, 1);
    t.strictSame(masked(JSON.parse(again.stdout)), { execution: failed(3), automatic_rollback: reverted(4) });
    t.strictSame(masked(jsonOf(t, await fixturesCli("migrations", "executions", "failing", "--json"))), [
      failed(1),
      reverted(2),
      failed(3),
      reverted(4),
    ]);
    const errors = jsonOf<{ type: string; message: string }[]>(
      t,
      await fixturesCli("migrations", "logs", "1", "--type", "error", "--json"),
    );
    t.strictSame(
      errors.map((log) => [log.type, log.message]),
      [["error", "Batch 2 failed: boom at batch 2"]],
    );

    await expectSteps(t, fixturesCli, [
      [
        ["migrations", "run", "one-batch", "--no-wait"],
        0,
        "Migration scheduled for execution. Execution 5: batches 1-1, batch size 10.",
      ],
    ]);
    // No worker anywhere: the execution waits for a daemon, and blocks a second run meanwhile.
    t.strictSame(masked(jsonOf(t, await fixturesCli("migrations", "executions", "one-batch", "--json"))), [
      execution({
        id: 5,
        migration: "one-batch",
        operation: "up",
        status: "scheduled",
        items: [0, 4],
        started: false,
      }),
    ]);
    await expectSteps(t, fixturesCli, [
      [
        ["migrations", "run", "one-batch"],
        1,
        [],
        refused("Migration one-batch already has an execution scheduled or running."),
      ],
    ]);
  });

  againstDaemon(t, target.databaseUrl, async (t, port) => {
    const cli = adminCli({ DATABASE_URL: target.databaseUrl });
    migrationCases(t, cli, port, await createAdministrator(cli, port));
  });
});

/** The daemon-side cases, with `admin` a client of a user who has manage_options. */
function migrationCases(t: Test, cli: Cli, port: number, admin: MigrationsClient): void {
  const anonymous = migrationsClient(port, null);

  t.test("migrations list: text, and JSON as the API returns it", async (t) => {
    await expectSteps(t, cli, [
      [
        ["migrations", "list"],
        0,
        [
          "ID                             STATUS   BATCHES  CAN RUN  APPLICABLE  TAGS         LABEL",
          "normalize-user-emails          pending  1        yes      yes         users,email  Lower-case user e-mail addresses",
          "collapse-user-name-whitespace  pending  1        yes      yes         users,names  Tidy user names",
        ],
      ],
    ]);
    type Migration = { id: string; status: string; total_batches: number };
    const listed = jsonOf<Migration[]>(t, await cli("migrations", "list", "--json"));
    t.strictSame(listed, (await admin.get("/migrations")).json);
    t.strictSame(
      listed.map((m) => [m.id, m.status, m.total_batches]),
      [
        ["normalize-user-emails", "pending", 1],
        ["collapse-user-name-whitespace", "pending", 1],
      ],
    );
    const tagged = jsonOf<Migration[]>(
      t,
      await cli("migrations", "list", "--tags", "names,nothing", "--json"),
    );
    t.strictSame(tagged, (await admin.get("/migrations?tags=names,nothing")).json);
    t.strictSame(
      tagged.map((m) => m.id),
      ["collapse-user-name-whitespace"],
    );
  });

  t.test("run, records and rollback of normalize-user-emails", async (t) => {
    const migration = "normalize-user-emails";
    await expectSteps(t, cli, [
      [
        ["migrations", "run", migration],
        0,
        "execution 1 (normalize-user-emails up) completed: 2/2 items",
        [
          "execution 1: normalize-user-emails up, batches 1-1, batch size 100",
          "execution 1: batch 1/1 done, 2/2 items",
        ],
      ],
    ]);
    const user = await anonymous.get("/users/1");
    t.strictSame([user.status, user.json], [200, { id: 1, name: "Ann", email: "ann@example.com" }]);

    const executions = jsonOf(t, await cli("migrations", "executions", migration, "--json"));
    t.strictSame(executions, (await admin.get(`/migrations/${migration}/executions`)).json);
    const completed = execution({ id: 1, migration, operation: "up", status: "completed", items: [2, 2] });
    t.strictSame(masked(executions), [completed]);
    expectRun(t, masked(await cli("migrations", "executions", migration)), 0, [
      "ID  OPERATION  STATUS     ITEMS  BATCHES  SIZE  PARENT  CREATED                    STARTED                    ENDED",
      "1   up         completed  2/2    1-1      100   -       <date>  <date>  <date>",
    ]);

    const logs = jsonOf(t, await cli("migrations", "logs", "1", "--json"));
    t.strictSame(logs, (await admin.get("/executions/1/logs")).json);
    const log = (id: number, message: string, data: object) => ({
      id,
      execution_id: 1,
      type: "info",
      message,
      data,
      created_at: "<date>",
    });
    t.strictSame(masked(logs), [
      log(4, "Migration completed.", {}),
      log(3, "Batch 1 of 1 processed: 2 items.", { batch: 1, items: 2 }),
      log(2, "Batch 1: 1 of 2 users rewritten.", { batch: 1, changed: 1 }),
      log(1, "Migration scheduled for execution.", { from_batch: 1, to_batch: 1, batch_size: 100 }),
    ]);
    expectRun(t, masked(await cli("migrations", "logs", "1", "--search", "REWRITTEN")), 0, [
      "ID  CREATED                    TYPE  MESSAGE                           DATA",
      '2   <date>  info  Batch 1: 1 of 2 users rewritten.  {"batch":1,"changed":1}',
    ]);
    const listed = jsonOf<{ id: string; status: string }[]>(t, await cli("migrations", "list", "--json"));
    t.strictSame(
      listed.map((m) => [m.id, m.status]),
      [
        [migration, "completed"],
        ["collapse-user-name-whitespace", "pending"],
      ],
    );

    await expectSteps(t, cli, [
      [
        ["migrations", "rollback", migration],
        0,
        "execution 2 (normalize-user-emails down) reverted: 1/1 items",
        [
          "execution 2: normalize-user-emails down, batches 1-1, batch size 100",
          "execution 2: batch 1/1 done, 1/1 items",
        ],
      ],
    ]);
    const restored = await anonymous.get("/users/1");
    t.strictSame([restored.status, restored.json], [200, { id: 1, name: "Ann", email: "Ann@Example.COM" }]);
    t.strictSame(masked(jsonOf(t, await cli("migrations", "executions", migration, "--json"))), [
      completed,
      execution({ id: 2, migration, operation: "down", status: "reverted", items: [1, 1] }),
    ]);

    const again =
      "Migration normalize-user-emails is already rolled back (execution 2 reverted); run it again before another rollback.";
    expectRun(t, await cli("migrations", "rollback", migration), 1, [], refused(again));
    expectRun(t, await cli("migrations", "rollback", migration, "--no-wait"), 1, [], refused(again));
    const rest = await admin.post(`/migrations/${migration}/rollback`);
    t.strictSame(
      [rest.status, rest.json],
      [409, { code: "migrations_error", success: false, message: again }],
    );
    t.equal(
      jsonOf<unknown[]>(t, await cli("migrations", "executions", migration, "--json")).length,
      2,
      "nothing was scheduled",
    );
  });

  t.test("refusals carry the migrations service's messages", async (t) => {
    const notFound = "Migration with ID no-such-migration not found.";
    const cases: [string[], string, string, unknown, number, string][] = [
      [
        ["migrations", "run", "no-such-migration"],
        "POST",
        "/migrations/no-such-migration/run",
        undefined,
        404,
        notFound,
      ],
      [
        ["migrations", "executions", "no-such-migration"],
        "GET",
        "/migrations/no-such-migration/executions",
        undefined,
        404,
        notFound,
      ],
      [
        ["migrations", "logs", "99"],
        "GET",
        "/executions/99/logs",
        undefined,
        404,
        "Execution with ID 99 not found.",
      ],
      [
        ["migrations", "rollback", "normalize-user-emails", "--to-batch", "5"],
        "POST",
        "/migrations/normalize-user-emails/rollback",
        { "to-batch": 5 },
        400,
        "Invalid parameter to-batch: must not be greater than the number of batches (1).",
      ],
    ];
    for (const [args, method, path, body, status, message] of cases) {
      expectRun(t, await cli(...args), 1, [], refused(message));
      const reply = await admin.call(method, path, body);
      t.strictSame(
        [reply.status, reply.json],
        [status, { code: "migrations_error", success: false, message }],
      );
    }
  });

  t.test("--no-wait schedules and leaves the run to the daemon's worker", async (t) => {
    const migration = "collapse-user-name-whitespace";
    await expectSteps(t, cli, [
      [
        ["migrations", "run", migration, "--no-wait"],
        0,
        "Migration scheduled for execution. Execution 3: batches 1-1, batch size 100.",
      ],
    ]);
    t.strictSame(
      masked(await admin.waitFor(migration, 3, ["completed"])),
      execution({ id: 3, migration, operation: "up", status: "completed", items: [2, 2] }),
    );
    const tidied = await anonymous.get("/users/2");
    t.strictSame(tidied.json, { id: 2, name: "Bob Smith", email: "bob@example.com" });

    t.strictSame(jsonOf(t, await cli("migrations", "rollback", migration, "--no-wait", "--json")), {
      success: true,
      message: "Rollback scheduled for execution.",
      execution_id: 4,
      operation: "down",
      from_batch: 1,
      to_batch: 1,
      batch_size: 100,
    });
    t.strictSame(
      masked(await admin.waitFor(migration, 4, ["reverted"])),
      execution({ id: 4, migration, operation: "down", status: "reverted", items: [1, 1] }),
    );
    const untidied = await anonymous.get("/users/2");
    t.strictSame(untidied.json, { id: 2, name: "Bob   Smith", email: "bob@example.com" });
  });
}
