// A missing or empty rule directory is said, at start and on every reload while it lasts, in both
// RUNTIME_WATCH_ROOT layouts; the daemon keeps running (the directory may appear later) and loads the rules
// once it does; the warning is not followed by the reference's "Successfully loaded new configuration" (which
// a load that found rules still writes). docs/rules.md, "A missing or empty rule directory", describes it.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import t, { type Test } from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { reloadCounts, rulesDump, rulesYaml, sleep, waitForReload } from "../helpers/rules-dir.js";

const NOTHING_LOADED = "no rate limit rules are loaded and every request is allowed";

/** How many log lines carry exactly `message` as a warning. */
function warnings(logs: string, message: string): number {
  const line = `level=warning msg=${JSON.stringify(message)}`;
  return logs.split("\n").filter((entry) => entry.endsWith(line)).length;
}

/** How many `Successfully loaded new configuration` lines (the reference's, at info) were written. */
function successLines(logs: string): number {
  return logs
    .split("\n")
    .filter((entry) => entry.endsWith('level=info msg="Successfully loaded new configuration"')).length;
}

/** Asserts `count` warnings `message`, polling a little: stderr may arrive after the counters moved. */
async function expectWarnings(t: Test, logs: () => string, message: string, count: number, what: string) {
  for (let i = 0; i < 100 && warnings(logs(), message) < count; i++) await sleep(20);
  t.equal(warnings(logs(), message), count, what);
}

/** Writes `files` into a new directory beside `path`, then renames it to `path`: it appears at once, whole. */
function appear(path: string, files: Record<string, string>): void {
  const staging = `${path}.staging`;
  mkdirSync(staging, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(staging, name), text);
  renameSync(staging, path);
}

t.test(
  "RUNTIME_WATCH_ROOT=false: warned at start, loaded when created, warned again when removed",
  async (t) => {
    const root = join(t.testdir({}), "missing");
    const appDirectory = join(root, "config");
    const missing = `rule directory ${appDirectory} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY) does not exist: ${NOTHING_LOADED}; the rules load as soon as it is created`;
    const daemon = await startDaemon({ RUNTIME_ROOT: root, LOG_LEVEL: "info" });
    t.teardown(() => daemon.stop());
    t.equal(warnings(daemon.logs(), missing), 1, "the start-up load says the directory is missing");
    t.equal(successLines(daemon.logs()), 0, "and does not call the empty load a success");
    t.strictSame(await reloadCounts(daemon.debugPort), { success: 1, error: 0 }, "counted as the reference");
    const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
    t.teardown(() => client.close());
    const ask = () =>
      client.shouldRateLimit({ domain: "late", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });
    t.strictSame(await ask(), { overall_code: "OK", statuses: [{ code: "OK" }] }, "every request allowed");

    mkdirSync(root);
    appear(appDirectory, { "late.yaml": rulesYaml("late", 1) });
    await waitForReload(daemon.debugPort, { counts: { success: 2, error: 0 }, rules: rulesDump("late", 1) });
    for (let i = 0; i < 100 && successLines(daemon.logs()) < 1; i++) await sleep(20);
    t.equal(successLines(daemon.logs()), 1, "the rules that appeared are reported loaded");
    t.equal((await ask()).overall_code, "OK", "the first hit of the new limit");
    t.equal((await ask()).overall_code, "OVER_LIMIT", "the rules that appeared are enforced");

    rmSync(appDirectory, { recursive: true });
    await waitForReload(daemon.debugPort, { counts: { success: 3, error: 0 }, rules: "" });
    await expectWarnings(t, daemon.logs, missing, 2, "a reload while it is missing says so again");
    t.equal(successLines(daemon.logs()), 1, "and is not reported a success");

    appear(appDirectory, { "late.yaml": rulesYaml("late", 5) });
    await waitForReload(daemon.debugPort, { counts: { success: 4, error: 0 }, rules: rulesDump("late", 5) });
    t.pass("a directory removed and created again is watched again");
  },
);

t.test("RUNTIME_WATCH_ROOT=false: an empty app directory is a warning too", async (t) => {
  const root = t.testdir({ config: {} });
  const daemon = await startDaemon({ RUNTIME_ROOT: root, LOG_LEVEL: "info" });
  t.teardown(() => daemon.stop());
  const empty = `rule directory ${join(root, "config")} has no rule files: ${NOTHING_LOADED}`;
  t.equal(warnings(daemon.logs(), empty), 1);
  t.equal(successLines(daemon.logs()), 0, "no success line after the warning");
  writeFileSync(join(root, "config", "a.yaml"), rulesYaml("a", 3));
  await waitForReload(daemon.debugPort, { counts: { success: 2, error: 0 }, rules: rulesDump("a", 3) });
  t.equal(warnings(daemon.logs(), empty), 1, "not repeated once there are rules");
  for (let i = 0; i < 100 && successLines(daemon.logs()) < 1; i++) await sleep(20);
  t.equal(successLines(daemon.logs()), 1, "the load that found a file is a success");
});

t.test("RUNTIME_WATCH_ROOT=true: RUNTIME_ROOT missing, then created by a symlink swap", async (t) => {
  const dir = t.testdir({ v1: { other: {} } });
  const root = join(dir, "current");
  const missing = (subdirectory: string) =>
    `rule directory ${subdirectory} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY) does not exist: ${NOTHING_LOADED}; with RUNTIME_WATCH_ROOT=true the rules load when RUNTIME_ROOT is next created or replaced`;
  const daemon = await startDaemon({
    RUNTIME_ROOT: root,
    RUNTIME_SUBDIRECTORY: "ratelimit",
    RUNTIME_WATCH_ROOT: "true",
  });
  t.teardown(() => daemon.stop());
  t.equal(warnings(daemon.logs(), missing(join(root, "ratelimit"))), 1, "said at start");

  // A root without the subdirectory: the reload finds it still missing, and says so again.
  symlinkSync(join(dir, "v1"), root);
  await waitForReload(daemon.debugPort, { counts: { success: 2, error: 0 }, rules: "" });
  await expectWarnings(t, daemon.logs, missing(join(root, "ratelimit")), 2, "said on the reload");

  mkdirSync(join(dir, "v2", "ratelimit", "config"), { recursive: true });
  writeFileSync(join(dir, "v2", "ratelimit", "config", "a.yaml"), rulesYaml("a", 2));
  symlinkSync(join(dir, "v2"), join(dir, "next"));
  renameSync(join(dir, "next"), root);
  await waitForReload(daemon.debugPort, { counts: { success: 3, error: 0 }, rules: rulesDump("a", 2) });
  t.pass("the swapped-in rules load");
});

t.test("RUNTIME_WATCH_ROOT=true: RUNTIME_ROOT's parent missing too, created later", async (t) => {
  const dir = t.testdir({});
  const parent = join(dir, "deploy");
  const root = join(parent, "current");
  const daemon = await startDaemon({
    RUNTIME_ROOT: root,
    RUNTIME_SUBDIRECTORY: "ratelimit",
    RUNTIME_WATCH_ROOT: "true",
  });
  t.teardown(() => daemon.stop());
  t.match(
    daemon.logs(),
    `rule directory ${join(root, "ratelimit")} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY) does not exist`,
  );
  const staging = join(dir, "staging");
  mkdirSync(join(staging, "v1", "ratelimit", "config"), { recursive: true });
  writeFileSync(join(staging, "v1", "ratelimit", "config", "a.yaml"), rulesYaml("a", 4));
  symlinkSync("v1", join(staging, "current"));
  renameSync(staging, parent);
  await waitForReload(daemon.debugPort, { counts: { success: 2, error: 0 }, rules: rulesDump("a", 4) });
  t.pass("the rules load once the parent appears");
});

t.test("RUNTIME_WATCH_ROOT=true with an empty RUNTIME_SUBDIRECTORY: said at start", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({}), RUNTIME_WATCH_ROOT: "true" });
  t.teardown(() => daemon.stop());
  t.equal(
    warnings(
      daemon.logs(),
      `RUNTIME_SUBDIRECTORY is empty with RUNTIME_WATCH_ROOT=true, so no rule files are read (as the reference): ${NOTHING_LOADED}`,
    ),
    1,
  );
  t.strictSame(await reloadCounts(daemon.debugPort), { success: 1, error: 0 });
});
