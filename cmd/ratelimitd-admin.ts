#!/usr/bin/env node
import { adminContext } from "../src/cli/admin/admin-context.js";
import { processIo } from "../src/cli/admin/admin-io.js";
import { parseAdminArgs } from "../src/cli/admin/parse-admin-args.js";
import { handlesInterrupts, runAdminCommand } from "../src/cli/admin/run-admin-command.js";
import { INTERRUPTED_EXIT_CODE } from "../src/cli/admin/run-migration.js";
import { dropOutputOnceClosed } from "../src/cli/closed-output.js";
import { openAdminDatabase } from "../src/daemon/admin-context.js";
/**
 * ratelimitd-admin: administers ratelimitd's users database directly (DATABASE_URL, as the daemon):
 * capabilities, application passwords, data migrations.
 *   ratelimitd-admin capability grant admin@example.com
 *   ratelimitd-admin app-password create admin@example.com ci
 *   ratelimitd-admin migrations run normalize-user-emails
 * Exit code 0 done, 1 the operation failed or was refused, 2 usage error or invalid settings,
 * 130 interrupted (Ctrl-C during a migration run).
 */
import { SettingsError } from "../src/errors.js";
import { loadSettings, type Settings } from "../src/settings/load-settings.js";

dropOutputOnceClosed();
const invocation = parseAdminArgs(process.argv.slice(2));
if (invocation.kind === "help") {
  process.stdout.write(invocation.text);
  process.exit(0);
}
if (invocation.kind === "usage") {
  process.stderr.write(`ratelimitd-admin: ${invocation.message}\n${invocation.hint}\n`);
  process.exit(2);
}

let settings: Settings;
try {
  settings = loadSettings(process.env);
} catch (error) {
  if (!(error instanceof SettingsError)) throw error;
  process.stderr.write(
    `ratelimitd-admin: invalid settings:\n${error.problems.map((p) => `  ${p}\n`).join("")}`,
  );
  process.exit(2);
}

const interrupt = new AbortController();
if (handlesInterrupts(invocation.command)) {
  // First Ctrl-C: stop gracefully (the batch in progress goes back to the queue); second: stop now.
  const onSignal = () => {
    if (interrupt.signal.aborted) process.exit(INTERRUPTED_EXIT_CODE);
    process.stderr.write("\nratelimitd-admin: stopping; press Ctrl-C again to quit at once\n");
    interrupt.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
process.exitCode = await runAdminCommand(
  invocation.command,
  async (options) => adminContext(await openAdminDatabase(settings, options.operatorMigrations)),
  processIo(),
  interrupt.signal,
);
