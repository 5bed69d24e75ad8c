import { existsSync } from "node:fs";

/**
 * A worker thread's module `name` (without extension) beside the module at `base` (its `import.meta.url`):
 * the compiled `.js`, or under a TypeScript loader (tests run the sources) the `.ts`, which the worker then
 * loads through the same loader.
 */
export function workerEntry(name: string, base: string): URL {
  const compiled = new URL(`./${name}.js`, base);
  return existsSync(compiled) ? compiled : new URL(`./${name}.ts`, base);
}
