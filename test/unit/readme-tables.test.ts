// Every table in the README, under docs/ and under bench/ renders as a table: parsed with a GFM Markdown
// parser (marked), each block of `|`-led lines must have become a table, not a paragraph of pipes.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { markdownTables } from "../helpers/markdown-tables.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

const files = [
  join(REPO, "README.md"),
  ...markdownFiles(join(REPO, "docs")).sort(),
  ...markdownFiles(join(REPO, "bench")),
];

t.test("the checker: a table without its |---| row is reported, a complete one is not", async (t) => {
  const source = [
    "| a | b |",
    "| - | - |",
    "| 1 | 2 |",
    "",
    "| **Section** | |",
    "| `X` | 1 |",
    "",
    "```",
    "| in code | fine |",
    "```",
    "- a list",
    "",
    "  | c | d |",
    "  | 3 | 4 |",
  ].join("\n");
  t.strictSame(markdownTables(source), {
    tables: [{ line: 1, header: ["a", "b"], rows: [["1", "2"]] }],
    unrendered: [
      { line: 5, text: "| **Section** | |" },
      { line: 13, text: "| c | d |" },
    ],
  });
});

t.test("README.md, docs/*.md and bench/*.md: every |-led block is a table", async (t) => {
  const checked = files.map((file) => relative(REPO, file));
  t.strictSame(
    checked.filter((name) => !name.startsWith("docs/")),
    ["README.md", "bench/OUTAGE.md", "bench/PROFILE.md", "bench/RESULTS.md"],
    "the files checked beside docs/",
  );
  t.ok(checked.includes("docs/settings.md") && checked.includes("docs/README.md"), "docs/ is checked");
  for (const file of files) {
    const { tables, unrendered } = markdownTables(readFileSync(file, "utf8"));
    const name = relative(REPO, file);
    t.strictSame(
      unrendered.map(({ line, text }) => `${name}:${line}: ${text}`),
      [],
      `${name}: ${tables.length} tables, none left unrendered`,
    );
  }
});

t.test("docs/settings.md is thirteen tables of variable, default, meaning", async (t) => {
  const { tables, unrendered } = markdownTables(readFileSync(join(REPO, "docs/settings.md"), "utf8"));
  t.strictSame(unrendered, []);
  t.strictSame(
    tables.map((table) => [table.header, table.rows[0]?.[0]]),
    [
      "**Listeners**",
      "**Rule source**",
      "**Stats**",
      "**Counters (all backends)**",
      "**Backend outages (ratelimitd)**",
      "**Memory backend (ratelimitd)**",
      "**Worker threads (ratelimitd)**",
      "**Responses, modes, health**",
      "**Limits on one request (ratelimitd)**",
      "**Redis (also KVSTORE_*)**",
      "**Memcached (also ALTCACHE_*)**",
      "**Tracing**",
      "**Users and migrations APIs (ratelimitd)**",
    ].map((section) => [["variable", "default", "meaning"], section]),
  );
});
