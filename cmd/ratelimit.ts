#!/usr/bin/env node
/**
 * `/bin/ratelimit` in the container image: the daemon under the reference's binary name, for the manifests
 * that run it by that name (Envoy Gateway, Istio's sample). envoyproxy/ratelimit's binary reads no
 * command line at all, and Envoy AI Gateway passes it arguments anyway, so this entry drops every argument
 * with one warning line (in the LOG_FORMAT the settings ask for) and then runs `ratelimitd` unchanged.
 * `ratelimitd` itself keeps refusing arguments (exit 2; test/e2e/daemon-command-line.test.ts).
 */
import { Logger, logLevelFromSetting } from "../src/observability/logger.js";
import { loadSettings } from "../src/settings/load-settings.js";

const ignored = process.argv.splice(2);
if (ignored.length > 0) warnIgnored(ignored);
await import("./ratelimitd.js");

function warnIgnored(args: readonly string[]): void {
  const message = `ignoring command-line arguments ${JSON.stringify(args)}: ratelimit reads its settings from environment variables only`;
  let logger: Logger;
  try {
    const settings = loadSettings(process.env);
    logger = new Logger({
      level: logLevelFromSetting(settings.logLevel),
      format: settings.logFormat.toLowerCase() === "json" ? "json" : "text",
    });
  } catch {
    // Invalid settings: ratelimitd reports them and exits 1 right after; the warning still goes out.
    logger = new Logger({ level: "warn", format: "text" });
  }
  logger.warn(message);
}
