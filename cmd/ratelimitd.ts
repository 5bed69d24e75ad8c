#!/usr/bin/env node
/**
 * ratelimitd: the rate-limit daemon. Reads settings from the environment (see docs/settings.md), serves gRPC
 * (GRPC_PORT, 8081), HTTP (PORT, 8080) and debug (DEBUG_PORT, 6070), and stops gracefully on
 * SIGTERM, SIGINT and SIGHUP (as the reference; SIGHUP does not reload). `-h`/`--help` prints the usage.
 * Exit code 0 after a graceful stop or help, 1 on invalid settings or a failed start, 2 on arguments.
 */
import { dropOutputOnceClosed } from "../src/cli/closed-output.js";
import { parseDaemonArgs } from "../src/cli/daemon-args.js";
import { daemonUsage } from "../src/cli/daemon-usage.js";
import { unsupportedNodeWarning } from "../src/cli/supported-node.js";
import { Daemon } from "../src/daemon/daemon.js";
import { SettingsError } from "../src/errors.js";
import { loadSettings } from "../src/settings/load-settings.js";

dropOutputOnceClosed();
const invocation = parseDaemonArgs(process.argv.slice(2));
if (invocation.kind === "help") {
  process.stdout.write(daemonUsage());
  process.exit(0);
}
if (invocation.kind === "usage") {
  process.stderr.write(`${invocation.message}\n${invocation.hint}\n`);
  process.exit(2);
}

let daemon: Daemon;
try {
  daemon = new Daemon(loadSettings(process.env), { env: process.env });
} catch (error) {
  if (error instanceof SettingsError) {
    process.stderr.write(`ratelimitd: invalid settings:\n${error.problems.map((p) => `  ${p}\n`).join("")}`);
    process.exit(1);
  }
  throw error;
}

const stop = (signal: NodeJS.Signals) => {
  daemon.logger.warn(`received ${signal}`);
  // The reference fails health at once on SIGTERM, then stops (no drain delay).
  if (signal === "SIGTERM") daemon.failHealthForSigterm();
  daemon.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      daemon.logger.error(`shutdown failed: ${(error as Error).stack}`);
      process.exit(1);
    },
  );
};
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, stop);

// Last line of defence: a bug in one request must not take the daemon down. Reporting never re-enters
// itself, so a failure while logging cannot turn into a loop.
let reporting = false;
const report = (what: string, error: unknown) => {
  if (reporting) return;
  reporting = true;
  try {
    daemon.logger.error(`${what}: ${(error as Error)?.stack ?? String(error)}`);
  } catch {
    // Nothing more can be done about a failure to log.
  } finally {
    reporting = false;
  }
};
process.on("uncaughtException", (error) => report("uncaught exception", error));
process.on("unhandledRejection", (reason) => report("unhandled rejection", reason));

const nodeWarning = unsupportedNodeWarning(process.versions.node);
if (nodeWarning) daemon.logger.warn(nodeWarning);

daemon.start().catch((error: unknown) => {
  daemon.logger.error(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
