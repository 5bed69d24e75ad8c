import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** A documentation page: README.md, then every docs/*.md, by name. */
export interface DocsPage {
  /** Path from the repository root, e.g. `docs/rules.md`. */
  readonly name: string;
  readonly source: string;
}

/** Every documentation page whose commands the tests run. New pages under docs/ are picked up by themselves. */
export function docsPages(): DocsPage[] {
  const docs = readdirSync(join(REPO, "docs"))
    .filter((file) => file.endsWith(".md"))
    .sort()
    .map((file) => `docs/${file}`);
  return ["README.md", ...docs].map((name) => ({ name, source: readFileSync(join(REPO, name), "utf8") }));
}
