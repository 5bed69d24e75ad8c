// docs/settings.md documents every variable the settings module reads (and nothing it does not), in tables
// that render: the variables are read from the tables a GFM parser finds (see readme-tables.test.ts). The
// other pages' tables name settings too (docs/backends.md's memcached table): none may name one that is not.
import { readFileSync } from "node:fs";
import t from "tap";
import { SETTINGS_TABLE } from "../../src/settings/settings-table.js";
import { docsPages } from "../helpers/docs-pages.js";
import { markdownTables } from "../helpers/markdown-tables.js";

/** The variables a page's tables name in their first column (`` `NAME` ``). */
function tableSettings(source: string): Set<string> {
  return new Set(
    markdownTables(source)
      .tables.flatMap((table) => table.rows.map((row) => /^`([A-Z][A-Z0-9_]*)`$/.exec(row[0] ?? "")?.[1]))
      .filter((name) => name !== undefined),
  );
}

const settingsPage = readFileSync(new URL("../../docs/settings.md", import.meta.url), "utf8");
const documented = tableSettings(settingsPage);
const read = new Set(Object.values(SETTINGS_TABLE).map((spec) => spec.env));

t.test("every setting is in docs/settings.md's tables", async (t) => {
  for (const spec of Object.values(SETTINGS_TABLE)) t.ok(documented.has(spec.env), spec.env);
});

t.test("docs/settings.md's tables list no setting the code does not read", async (t) => {
  t.strictSame(
    [...documented].filter((env) => !read.has(env)),
    [],
  );
});

t.test("no page's table names a setting the code does not read", async (t) => {
  for (const page of docsPages()) {
    t.strictSame(
      [...tableSettings(page.source)].filter((env) => !read.has(env)),
      [],
      page.name,
    );
  }
});
