import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { messageOf } from "../errors.js";
import type { MigrationDefinition } from "./migration.js";
import { definitionProblem } from "./migration-registry.js";

const MODULE = /\.(m?js)$/;

/**
 * The operator's migrations: every `.js`/`.mjs` file directly in `dir`, in name order, each
 * default-exporting a migration definition. Rejects with an error naming the file when a module cannot be
 * loaded or its default export is not a valid definition.
 */
export async function loadOperatorMigrations(
  dir: string,
): Promise<{ file: string; definition: MigrationDefinition }[]> {
  const root = resolve(dir);
  let names: string[];
  try {
    names = readdirSync(root)
      .filter((name) => MODULE.test(name))
      .sort();
  } catch (error) {
    throw new Error(`MIGRATIONS_DIR ${dir}: ${messageOf(error)}`);
  }
  const loaded: { file: string; definition: MigrationDefinition }[] = [];
  for (const name of names) {
    const file = join(root, name);
    let module: { default?: unknown };
    try {
      module = (await import(pathToFileURL(file).href)) as { default?: unknown };
    } catch (error) {
      throw new Error(`migration module ${file} failed to load: ${messageOf(error)}`);
    }
    const problem = module.default === undefined ? "no default export" : definitionProblem(module.default);
    if (problem !== undefined)
      throw new Error(`migration module ${file}: invalid migration definition: ${problem}`);
    loaded.push({ file, definition: module.default as MigrationDefinition });
  }
  return loaded;
}
