import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

/** One bundled file, kept in memory with its gzip form. */
export interface ConsoleAsset {
  readonly contentType: string;
  readonly body: Buffer;
  readonly gzipped: Buffer;
}

/** The bundle `npm run build` wrote (src/console-ui/bundle.mjs), or why there is none. */
export type ConsoleBundle =
  | { readonly ok: true; readonly html: string; readonly assets: ReadonlyMap<string, ConsoleAsset> }
  | { readonly ok: false; readonly reason: string };

interface Manifest {
  readonly js: string;
  readonly css: string;
}

/** Where the bundle lies: beside the compiled daemon (dist/src/console → dist/console-ui), or from the sources. */
const CANDIDATES = ["../../console-ui/", "../../dist/console-ui/"];

const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/**
 * Reads the console's bundle once, at start: the hashed script and style sheet the manifest names, served
 * from memory. Nothing is fetched from the network at run time.
 */
export function loadConsoleBundle(base: URL = new URL(import.meta.url)): ConsoleBundle {
  for (const candidate of CANDIDATES) {
    const dir = new URL(candidate, base);
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(new URL("manifest.json", dir), "utf8")) as Manifest;
    } catch {
      // Not at this place: try the next one.
      continue;
    }
    const assets = new Map<string, ConsoleAsset>();
    for (const name of [manifest.js, manifest.css]) {
      if (typeof name !== "string" || !/^[\w.-]+\.(js|css)$/.test(name))
        return { ok: false, reason: `console bundle manifest names a bad file: ${String(name)}` };
      const body = readFileSync(new URL(name, dir));
      const type = CONTENT_TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream";
      assets.set(name, { contentType: type, body, gzipped: gzipSync(body) });
    }
    return { ok: true, html: shell(manifest), assets };
  }
  return { ok: false, reason: "the console is not built: run `npm run build`" };
}

/** The one HTML page; the script draws every page of the console in it (no inline script or style). */
function shell(manifest: Manifest): string {
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>ratelimitd console</title>",
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="/console/assets/${manifest.css}">`,
    `<script type="module" src="/console/assets/${manifest.js}"></script>`,
    "</head>",
    '<body><div id="app"></div></body>',
    "</html>",
    "",
  ].join("\n");
}
