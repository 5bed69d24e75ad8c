/**
 * The Node.js lines ratelimitd supports: package.json's `engines` (≥ 22.12, where `net`'s and `http2`'s
 * `reusePort` exist; docs/development.md "Node.js"). An older Node still runs the daemon on one thread, with a
 * warning at start-up; test/unit/cli/supported-node.test.ts keeps this and package.json in step.
 */
export const OLDEST_SUPPORTED_NODE = "22.12.0";

/** The warning the daemon logs on `version` (`process.versions.node`), or undefined when it is supported. */
export function unsupportedNodeWarning(version: string): string | undefined {
  const have = version.split(".").map(Number);
  const want = OLDEST_SUPPORTED_NODE.split(".").map(Number);
  for (let i = 0; i < want.length; i++) {
    const a = have[i] ?? 0;
    const b = want[i] ?? 0;
    if (a > b) return undefined;
    if (a < b) {
      return `Node.js ${version} is older than the oldest supported line (${OLDEST_SUPPORTED_NODE}); ratelimitd runs, but is tested on 22.12 and 26 only: upgrade Node.js`;
    }
  }
  return undefined;
}
