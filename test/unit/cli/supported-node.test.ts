// The daemon's start-up warning on a Node.js older than package.json's "engines" (docs/development.md "Node.js").
import { readFileSync } from "node:fs";
import t from "tap";
import { OLDEST_SUPPORTED_NODE, unsupportedNodeWarning } from "../../../src/cli/supported-node.js";

const engines = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")).engines;

t.equal(engines.node, ">=22.12", "package.json's engines");
t.equal(OLDEST_SUPPORTED_NODE, "22.12.0", "the same line as package.json's engines");

t.test("supported lines: no warning", async (t) => {
  for (const version of ["22.12.0", "22.12.1", "22.20.0", "23.0.0", "24.11.1", "26.12.1", "30.0.0"]) {
    t.equal(unsupportedNodeWarning(version), undefined, version);
  }
});

t.test("older lines: one warning naming the version and the oldest supported one", async (t) => {
  t.equal(
    unsupportedNodeWarning("20.20.2"),
    "Node.js 20.20.2 is older than the oldest supported line (22.12.0); ratelimitd runs, but is tested on 22.12 and 26 only: upgrade Node.js",
  );
  for (const version of ["22.11.0", "22.0.0", "18.20.4", "21.99.99"]) {
    t.match(
      unsupportedNodeWarning(version),
      new RegExp(`^Node\\.js ${version.replaceAll(".", "\\.")} is older`),
      version,
    );
  }
});
