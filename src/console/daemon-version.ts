import { readFileSync } from "node:fs";

/**
 * Where package.json lies, from this module: the repository's root when run from the sources
 * (src/console), the package's root when compiled (dist/src/console; the container image copies package.json
 * to /app beside dist/, and an npm install always ships it).
 */
const CANDIDATES = ["../../package.json", "../../../package.json"];

/** What the Overview shows when no package.json of ratelimitd lies where it is looked for. */
export const UNKNOWN_VERSION = "unknown";

/**
 * The daemon's version: package.json's `version`. Read from the file (once, when the console is made), so
 * a release changes it in one place. A package.json whose `name` is not `ratelimitd` is someone else's and
 * skipped; none found gives {@link UNKNOWN_VERSION} rather than a daemon that does not start.
 */
export function readDaemonVersion(base: URL = new URL(import.meta.url)): string {
  for (const candidate of CANDIDATES) {
    let manifest: unknown;
    try {
      manifest = JSON.parse(readFileSync(new URL(candidate, base), "utf8"));
    } catch {
      // Absent or unreadable here: try the next place.
      continue;
    }
    const { name, version } = (manifest ?? {}) as { name?: unknown; version?: unknown };
    if (name === "ratelimitd" && typeof version === "string" && version !== "") return version;
  }
  return UNKNOWN_VERSION;
}
