// The README documents every variable the settings module reads (and nothing it does not).
import { readFileSync } from "node:fs";
import t from "tap";
import { SETTINGS_TABLE } from "../../src/settings/settings-table.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const documented = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((m) => m[1]!));

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
