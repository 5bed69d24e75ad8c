// Bundles the operator console's browser app (src/console-ui/main.tsx and console.css) into
// dist/console-ui: app-<hash>.js, app-<hash>.css and manifest.json with their sizes and gzip sizes. The
// daemon reads the manifest once at start to write its HTML shell. Run by `npm run build`.
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const outdir = join(root, "dist", "console-ui");

async function bundle() {
  await mkdir(outdir, { recursive: true });
  // Old hashed files would pile up build after build; the manifest names the only ones in use.
  for (const name of await readdir(outdir)) {
    if (name.startsWith("app-") || name === "manifest.json") await rm(join(outdir, name));
  }
  const result = await build({
    entryPoints: [join(here, "main.tsx")],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2020",
    platform: "browser",
    jsx: "automatic",
    jsxImportSource: "preact",
    entryNames: "app-[hash]",
    outdir,
    metafile: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "silent",
    tsconfig: join(here, "tsconfig.json"),
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const js = outputs.find((name) => name.endsWith(".js"));
  const css = outputs.find((name) => name.endsWith(".css"));
  if (js === undefined || css === undefined) throw new Error(`expected one .js and one .css, got ${outputs}`);
  const sizes = async (name) => {
    const bytes = await readFile(join(outdir, name));
    return { bytes: bytes.length, gzip: gzipSync(bytes).length };
  };
  const [jsSize, cssSize] = await Promise.all([sizes(js), sizes(css)]);
  const manifest = {
    js,
    css,
    bytes: { js: jsSize.bytes, css: cssSize.bytes },
    gzipBytes: { js: jsSize.gzip, css: cssSize.gzip },
  };
  await writeFile(join(outdir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(
    `console-ui: ${js} ${jsSize.bytes} B (gzip ${jsSize.gzip} B), ${css} ${cssSize.bytes} B (gzip ${cssSize.gzip} B)`,
  );
}

try {
  await bundle();
} catch (error) {
  const messages = error?.errors?.map((e) => {
    const at = e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ` : "";
    return `${at}${e.text}`;
  });
  console.error(
    `console-ui bundle failed: ${messages?.length ? messages.join("\n") : (error?.message ?? error)}`,
  );
  process.exit(1);
}
