// The Overview's version (src/console/daemon-version.ts): package.json's `version`, found from the sources
// and from a compiled layout (dist/src/console beside package.json, as in the container image); another
// package's package.json or none gives "unknown".
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import t, { type Test } from "tap";
import { readDaemonVersion, UNKNOWN_VERSION } from "../../../src/console/daemon-version.js";

const ownVersion = JSON.parse(
  readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
).version;

/** A temporary package root holding `package.json` (when given) and the module's folder `at`. */
function layout(t: Test, at: string, manifest: unknown): URL {
  const root = mkdtempSync(join(tmpdir(), "daemon-version-"));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, at), { recursive: true });
  if (manifest !== undefined)
    writeFileSync(
      join(root, "package.json"),
      typeof manifest === "string" ? manifest : JSON.stringify(manifest),
    );
  return pathToFileURL(join(root, at, "daemon-version.js"));
}

t.test("from the sources: the repository's package.json", async (t) => {
  t.equal(readDaemonVersion(), ownVersion);
});

t.test("compiled: dist/src/console finds the package.json beside dist/", async (t) => {
  t.equal(
    readDaemonVersion(layout(t, "dist/src/console", { name: "ratelimitd", version: "9.8.7" })),
    "9.8.7",
  );
});

t.test("sources layout: src/console finds the package.json two folders up", async (t) => {
  t.equal(
    readDaemonVersion(layout(t, "src/console", { name: "ratelimitd", version: "1.2.3-rc.1" })),
    "1.2.3-rc.1",
  );
});

t.test("another package's package.json, a broken one, or none: unknown", async (t) => {
  t.equal(
    readDaemonVersion(layout(t, "dist/src/console", { name: "other", version: "1.0.0" })),
    UNKNOWN_VERSION,
  );
  t.equal(readDaemonVersion(layout(t, "dist/src/console", "{ not json")), UNKNOWN_VERSION);
  t.equal(readDaemonVersion(layout(t, "dist/src/console", { name: "ratelimitd" })), UNKNOWN_VERSION);
  t.equal(readDaemonVersion(layout(t, "dist/src/console", undefined)), UNKNOWN_VERSION);
  t.equal(UNKNOWN_VERSION, "unknown");
});
