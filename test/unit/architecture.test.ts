import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";

/**
 * The layering rules of README's "Architecture" section, checked on the import statements of src/ (src/gen
 * excluded: generated). Each assertion compares a list of offending imports with an empty list, so a
 * failure prints every `importer -> imported` pair that breaks the rule.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Repository-relative paths (`src/engine/units.ts`) of the TypeScript files under `dir`. */
function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (path !== "src/gen") files.push(...sourceFiles(path));
    } else if (entry.name.endsWith(".ts")) {
      files.push(path);
    }
  }
  return files.sort();
}

/** One import of a file: the module it names (a repository path for relative ones) and the names it takes. */
interface Import {
  readonly from: string;
  readonly target: string;
  readonly names: readonly string[];
}

// Static imports and re-exports (`import … from "x"`, `export … from "x"`, `import "x"`) and `import("x")`.
const IMPORT = /(?:^|\n)\s*(?:import|export)\s+([^;]*?)\s*from\s*"([^"]+)"|(?:^|\n)\s*import\s*"([^"]+)"/g;
const DYNAMIC_IMPORT = /\bimport\(\s*"([^"]+)"\s*\)/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const found: Import[] = [];
  const add = (specifier: string, clause: string) => {
    const target = specifier.startsWith(".")
      ? relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, ".ts")
      : specifier;
    const names = [...clause.matchAll(/[A-Za-z_$][\w$]*/g)].map((match) => match[0]);
    found.push({ from: file, target, names });
  };
  for (const match of text.matchAll(IMPORT)) add(match[2] ?? match[3] ?? "", match[1] ?? "");
  for (const match of text.matchAll(DYNAMIC_IMPORT)) add(match[1] ?? "", "");
  return found;
}

const files = sourceFiles("src");
const imports = files.flatMap(importsOf);
const show = (list: readonly Import[]) => list.map((entry) => `${entry.from} -> ${entry.target}`);
const under = (path: string, folder: string) => path.startsWith(`${folder}/`);

// Pure packages the engine may use: computation only, no I/O (README "Architecture").
const ENGINE_PACKAGES = new Set(["structured-headers"]);

t.test("the engine imports only the engine, src/errors.ts and its pure packages", async (t) => {
  const offending = imports.filter(
    (entry) =>
      under(entry.from, "src/engine") &&
      !under(entry.target, "src/engine") &&
      entry.target !== "src/errors.ts" &&
      !ENGINE_PACKAGES.has(entry.target),
  );
  t.same(show(offending), []);
});

t.test("backends import nothing from settings, transports, observability or the daemon", async (t) => {
  const forbidden = ["src/settings", "src/transports", "src/observability", "src/daemon"];
  const offending = imports.filter(
    (entry) => under(entry.from, "src/backends") && forbidden.some((folder) => under(entry.target, folder)),
  );
  t.same(show(offending), []);
});

t.test("only the wiring (src/daemon/) reads the Settings type", async (t) => {
  const offending = imports.filter(
    (entry) =>
      entry.target === "src/settings/load-settings.ts" &&
      entry.names.includes("Settings") &&
      !under(entry.from, "src/daemon") &&
      !under(entry.from, "src/settings"),
  );
  t.same(show(offending), []);
});

// src/transports/ (README "Architecture"): server/ is the core under every listener (connections, limits,
// protocol detection, TLS, close); grpc/, http/ and debug/ are the transports on it; the files at the top of
// src/transports/ are shared by them (the error-to-status mappings, the wire response, message limits).
const TRANSPORTS = ["src/transports/grpc", "src/transports/http", "src/transports/debug"];
// debug/ is the debug port's routes, served by http/'s HttpListener as the APIs' routes are.
const TRANSPORT_IMPORTS_ALLOWED = new Set(["src/transports/debug -> src/transports/http"]);

t.test(
  "no transport imports another; the server core and the shared files import no transport",
  async (t) => {
    const between = imports.filter((entry) => {
      if (!under(entry.from, "src/transports") || !under(entry.target, "src/transports")) return false;
      // `src/transports/grpc`, or `src/transports` for the shared files (src/ is at most two levels deep).
      const from = dirname(entry.from);
      const target = dirname(entry.target);
      return (
        from !== target &&
        TRANSPORTS.includes(target) &&
        !TRANSPORT_IMPORTS_ALLOWED.has(`${from} -> ${target}`)
      );
    });
    t.same(show(between), []);
  },
);

t.test("the transports import no API, console, wiring or CLI: those plug their routes in", async (t) => {
  const forbidden = ["src/users", "src/migrations", "src/console", "src/daemon", "src/cli"];
  const offending = imports.filter(
    (entry) => under(entry.from, "src/transports") && forbidden.some((folder) => under(entry.target, folder)),
  );
  t.same(show(offending), []);
});

t.test("users/ and migrations/ reach the transports only from their api/ folders", async (t) => {
  const offending = imports.filter(
    (entry) =>
      (under(entry.from, "src/users") || under(entry.from, "src/migrations")) &&
      !under(entry.from, "src/users/api") &&
      !under(entry.from, "src/migrations/api") &&
      under(entry.target, "src/transports"),
  );
  t.same(show(offending), []);
});

t.test("the CLI reaches no transport, not even through other modules", async (t) => {
  t.same(
    chainsFrom("src/cli", (file) => under(file, "src/transports")),
    [],
  );
});

t.test("only cmd/ uses the CLI's code: nothing else in src/ imports src/cli/", async (t) => {
  const offending = imports.filter(
    (entry) => !under(entry.from, "src/cli") && under(entry.target, "src/cli"),
  );
  t.same(show(offending), []);
});

/**
 * For each file under `folder` that reaches a file `matches` accepts through src/ imports, one shortest
 * chain `a -> b -> … -> z` (breadth-first search).
 */
function chainsFrom(folder: string, matches: (file: string) => boolean): string[] {
  const edges = new Map<string, string[]>();
  for (const entry of imports) edges.set(entry.from, [...(edges.get(entry.from) ?? []), entry.target]);
  const chains: string[] = [];
  for (const start of files.filter((file) => under(file, folder))) {
    const parent = new Map<string, string>([[start, ""]]);
    const queue = [start];
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      if (matches(file)) {
        const chain = [file];
        for (let at = parent.get(file); at; at = parent.get(at)) chain.unshift(at);
        chains.push(chain.join(" -> "));
        break;
      }
      for (const next of edges.get(file) ?? []) {
        if (!parent.has(next) && next.startsWith("src/")) {
          parent.set(next, file);
          queue.push(next);
        }
      }
    }
  }
  return chains;
}

t.test("no import cycle among src/ files", async (t) => {
  const graph = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const entry of imports) if (graph.has(entry.target)) graph.get(entry.from)?.push(entry.target);
  t.same(findCycle(graph), [], "a cycle, each file importing the next");
});

/** One cycle of `graph` as `a -> b -> … -> a`, or an empty list when it has none (depth-first search). */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (file: string): string[] => {
    if (onPath.has(file)) return [...path.slice(path.indexOf(file)), file];
    if (done.has(file)) return [];
    path.push(file);
    onPath.add(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle.length > 0) return cycle;
    }
    path.pop();
    onPath.delete(file);
    done.add(file);
    return [];
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle.length > 0) return [cycle.join(" -> ")];
  }
  return [];
}
