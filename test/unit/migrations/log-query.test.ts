import t from "tap";
import { parseLogQuery } from "../../../src/migrations/log-query.js";

const parse = (params: Record<string, string>) => parseLogQuery((name) => params[name]);

t.test("defaults", async (t) => {
  t.strictSame(parse({}), {
    ok: true,
    query: { limit: 100, offset: 0, order: "DESC", orderBy: "created_at" },
  });
});

t.test("every parameter", async (t) => {
  t.strictSame(
    parse({
      type: "info, error",
      search: "Batch",
      limit: "200",
      offset: "7",
      order: "asc",
      "order-by": "type",
    }),
    {
      ok: true,
      query: {
        types: ["info", "error"],
        search: "Batch",
        limit: 200,
        offset: 7,
        order: "ASC",
        orderBy: "type",
      },
    },
  );
  t.strictSame(parse({ "not-type": "debug" }), {
    ok: true,
    query: { notTypes: ["debug"], limit: 100, offset: 0, order: "DESC", orderBy: "created_at" },
  });
  t.strictSame(parse({ search: "" }), {
    ok: true,
    query: { limit: 100, offset: 0, order: "DESC", orderBy: "created_at" },
  });
});

t.test("refusals name the parameter", async (t) => {
  const cases: [Record<string, string>, string][] = [
    [{ type: "info", "not-type": "debug" }, "Invalid parameters: type and not-type cannot be used together."],
    [{ type: "Info" }, 'Invalid parameter type: "Info" is not one of info, warning, error, debug.'],
    [{ "not-type": "" }, 'Invalid parameter not-type: "" is not one of info, warning, error, debug.'],
    [{ limit: "0" }, "Invalid parameter limit: must be an integer between 1 and 200."],
    [{ limit: "1e2" }, "Invalid parameter limit: must be an integer between 1 and 200."],
    [{ limit: "" }, "Invalid parameter limit: must be an integer between 1 and 200."],
    [{ offset: "-3" }, "Invalid parameter offset: must be an integer greater than or equal to 0."],
    [{ offset: "1.0" }, "Invalid parameter offset: must be an integer greater than or equal to 0."],
    [{ order: "up" }, "Invalid parameter order: must be ASC or DESC."],
    [{ "order-by": "created" }, "Invalid parameter order-by: must be one of id, type, created_at."],
    // PostgreSQL cannot compare with a NUL (it failed the query: a 500 there, [] on SQLite).
    [{ search: "a\u0000" }, "Invalid parameter search: must not contain NUL characters."],
  ];
  for (const [params, message] of cases)
    t.strictSame(parse(params), { ok: false, message }, JSON.stringify(params));
});
