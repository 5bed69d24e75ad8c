// The README documents every variable the settings module reads (and nothing it does not), in tables that
// render: the variables are read from the tables a GFM parser finds (see readme-tables.test.ts).
import { readFileSync } from "node:fs";
import t from "tap";
import { SETTINGS_TABLE } from "../../src/settings/settings-table.js";
import { markdownTables } from "../helpers/markdown-tables.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const documented = new Set(
  markdownTables(readme)
    .tables.flatMap((table) => table.rows.map((row) => /^`([A-Z][A-Z0-9_]*)`$/.exec(row[0] ?? "")?.[1]))
    .filter((name) => name !== undefined),
);

t.test("every setting is in the README's table", async (t) => {
  for (const spec of Object.values(SETTINGS_TABLE)) t.ok(documented.has(spec.env), spec.env);
});

t.test("the README's table lists no setting the code does not read", async (t) => {
  const read = new Set(Object.values(SETTINGS_TABLE).map((spec) => spec.env));
  t.strictSame(
    [...documented].filter((env) => !read.has(env)),
    [],
  );
});
