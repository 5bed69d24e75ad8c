// The migrations API's routes: the list of migrations, the validation of run and rollback requests, and
// what every other method and path gets (docs/migrations-api.md).
import type { Test } from "tap";
import type { MigrationsApiContext } from "./migrations-api-context.js";
import { migrationsClient } from "./migrations-harness.js";

const TEST_IDS = [
  "one-batch",
  "three-items",
  "not-applicable",
  "tagged",
  "failing",
  "flaky",
  "slow",
  "cannot-run",
];

/** The list with its tag filters, and the 400s and 404s of run and rollback; these schedule nothing. */
export function listingCases(t: Test, { api, expectError }: MigrationsApiContext): void {
  t.test("list: every migration in order, with its fields; tag filters", async (t) => {
    const list = (await api.get("/migrations")).json as Record<string, unknown>[];
    t.strictSame(
      list.map((m) => m.id),
      ["normalize-user-emails", "collapse-user-name-whitespace", ...TEST_IDS],
    );
    t.strictSame(list[2], {
      id: "one-batch",
      label: "Test one-batch",
      description: "Test migration one-batch",
      tags: ["test"],
      total_batches: 1,
      can_run: true,
      is_applicable: true,
      status: "pending",
    });
    const byId = new Map(list.map((m) => [m.id, m]));
    t.equal(byId.get("three-items")?.total_batches, 3);
    t.equal(byId.get("not-applicable")?.status, "not-applicable");
    t.equal(byId.get("not-applicable")?.is_applicable, false);
    t.equal(byId.get("cannot-run")?.can_run, false);
    const ids = async (query: string) =>
      ((await api.get(`/migrations?tags=${query}`)).json as { id: string }[]).map((m) => m.id);
    t.strictSame(await ids("batches"), ["three-items"]);
    t.strictSame(await ids("Alpha,nomatch"), ["tagged"]);
    t.strictSame(await ids("alpha"), [], "tags are case-sensitive");
    t.strictSame(await ids("email,names"), ["normalize-user-emails", "collapse-user-name-whitespace"]);
    t.strictSame(await ids(""), ["normalize-user-emails", "collapse-user-name-whitespace", ...TEST_IDS]);
  });

  t.test("run: parameter validation", async (t) => {
    const cases: [unknown, string][] = [
      [{ "from-batch": 0 }, "Invalid parameter from-batch: must be an integer greater than or equal to 1."],
      [
        { "from-batch": "abc" },
        "Invalid parameter from-batch: must be an integer greater than or equal to 1.",
      ],
      [{ "to-batch": 1.5 }, "Invalid parameter to-batch: must be an integer greater than or equal to 1."],
      [{ "to-batch": null }, "Invalid parameter to-batch: must be an integer greater than or equal to 1."],
      [{ "batch-size": -1 }, "Invalid parameter batch-size: must be an integer greater than or equal to 1."],
      [{ "batch-size": 10001 }, "Invalid parameter batch-size: must be at most 10000."],
      [
        { "from-batch": 3, "to-batch": 2 },
        "Invalid parameter from-batch: must not be greater than to-batch (2).",
      ],
      [{ "to-batch": 4 }, "Invalid parameter to-batch: must not be greater than the number of batches (3)."],
      [
        { "batch-size": 2, "to-batch": 3 },
        "Invalid parameter to-batch: must not be greater than the number of batches (2).",
      ],
      ["{not json", "The request body is not valid JSON."],
      [[1], "The request body must be a JSON object."],
    ];
    for (const [body, message] of cases)
      expectError(t, await api.post("/migrations/three-items/run", body), 400, message);
    expectError(
      t,
      await api.post("/migrations/three-items/run?from-batch=0"),
      400,
      "Invalid parameter from-batch: must be an integer greater than or equal to 1.",
    );
    expectError(
      t,
      await api.post("/migrations/not-applicable/run"),
      400,
      "Migration not-applicable is not applicable.",
    );
    expectError(
      t,
      await api.post("/migrations/cannot-run/run"),
      400,
      "Migration cannot-run cannot run right now.",
    );
    expectError(
      t,
      await api.post("/migrations/tagged/rollback"),
      400,
      "Migration tagged cannot be rolled back.",
    );
    expectError(t, await api.post("/migrations/nope/run"), 404, "Migration with ID nope not found.");
    expectError(
      t,
      await api.post("/migrations/bad%20id/rollback"),
      404,
      "Migration with ID bad id not found.",
    );
    expectError(t, await api.get("/migrations/nope/executions"), 404, "Migration with ID nope not found.");
    t.strictSame((await api.get("/migrations/three-items/executions")).json, [], "nothing was scheduled");
  });
}

/** 405 with Allow, 404 for unknown paths, and every operation the OpenAPI document lists; schedules runs. */
export function routeCases(t: Test, { port, api, expectError }: MigrationsApiContext): void {
  t.test("routes: 405 with Allow, 404 for unknown paths, the OpenAPI document", async (t) => {
    const run = await api.get("/migrations/one-batch/run");
    expectError(t, run, 405, "Method not allowed.");
    t.equal(run.headers.allow, "POST");
    const list = await api.post("/migrations");
    t.equal(list.status, 405);
    t.equal(list.headers.allow, "GET");
    expectError(
      t,
      await api.get("/nothing/here"),
      404,
      "No route was found matching the URL and request method.",
    );
    const doc = await migrationsClient(port, null).get("/openapi.json");
    t.equal(doc.status, 200);
    const spec = doc.json as { openapi: string; servers: { url: string }[]; paths: Record<string, object> };
    t.equal(spec.openapi, "3.1.0");
    t.strictSame(spec.servers, [{ url: "/ratelimitd/migrations/v1" }]);
    // Every documented operation is served (its documented statuses only), and nothing else on those paths.
    const sample = { "{migration_id}": "one-batch", "{execution_id}": "1" };
    for (const [template, item] of Object.entries(spec.paths)) {
      const path = template.replace(/\{[a-z_]+\}/g, (name) => sample[name as keyof typeof sample]);
      const documented = Object.keys(item).map((m) => m.toUpperCase());
      for (const method of documented) {
        const reply = await api.call(method, path);
        const statuses = Object.keys(
          (item as Record<string, { responses: object }>)[method.toLowerCase()]?.responses ?? {},
        );
        t.ok(statuses.includes(String(reply.status)), `${method} ${path}: ${reply.status} is documented`);
        t.ok(reply.status < 400 || reply.status === 409, `${method} ${path} is served (${reply.status})`);
      }
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"].filter((m) => !documented.includes(m))) {
        const reply = await api.call(method, path);
        t.equal(reply.status, 405, `${method} ${path}`);
        t.equal(reply.headers.allow, documented.join(", "));
      }
    }
  });
}
