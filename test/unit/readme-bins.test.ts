// docs/cli.md lists every bin the package installs (package.json `bin`, one per cmd/ entry point) and how to
// run each from a checkout.
import { readdirSync, readFileSync } from "node:fs";
import t from "tap";
import { markdownTables } from "../helpers/markdown-tables.js";

const page = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  bin: Record<string, string>;
};

t.test("package.json installs one bin per cmd/ entry point", async (t) => {
  const entries = readdirSync(new URL("../../cmd/", import.meta.url))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => name.slice(0, -".ts".length))
    .sort();
  t.strictSame(Object.keys(pkg.bin).sort(), entries);
  for (const [name, path] of Object.entries(pkg.bin)) t.equal(path, `dist/cmd/${name}.js`, name);
});

t.test(
  "docs/cli.md's table of bins names exactly the installed ones, and says how to run them",
  async (t) => {
    const table = markdownTables(page).tables.find((candidate) => candidate.header[0] === "bin");
    t.ok(table, "a table whose first column is `bin`");
    t.strictSame(
      table?.rows.map((row) => row[0]),
      Object.keys(pkg.bin).map((name) => `\`${name}\``),
      "every bin, in package.json's order",
    );
    t.match(
      page,
      "From a checkout, run them with `npx <bin>` (npm finds the package's own bins\nonce `npm ci` has built them) or `node dist/cmd/<bin>.js`",
    );
  },
);
