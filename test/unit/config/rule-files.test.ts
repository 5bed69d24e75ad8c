// File layouts (the reference's src/provider/file_provider.go, lyft/goruntime) and the RUNTIME_* settings:
// which files are read and what they are named. RUNTIME_WATCH_ROOT=true: every file under ROOT/SUBDIRECTORY,
// named relative to it with '/' → '.', kept when the name starts with `<APPDIRECTORY>.`; an empty
// SUBDIRECTORY means no files. RUNTIME_WATCH_ROOT=false: every file under ROOT/SUBDIRECTORY/APPDIRECTORY,
// named relative to it, no filter. No extension filter in either mode; RUNTIME_IGNOREDOTFILES skips dotfiles
// and dot-directories; a missing directory means no files.
import { join } from "node:path";
import t, { type Test } from "tap";
import {
  noRuleFilesWarning,
  type RuleFilesLayout,
  readRuleFiles,
  ruleDirectory,
} from "../../../src/config/file/rule-files.js";

/** The reference's load order is Go map order, so names are compared sorted. */
async function namesOf(layout: RuleFilesLayout): Promise<string[]> {
  return (await readRuleFiles(layout)).files.map((file) => file.name).sort();
}

/** ROOT/v1/ratelimit/… with ROOT/current → v1, the symlink-swap layout of RUNTIME_WATCH_ROOT=true. */
function runtimeTree(t: Test): string {
  return t.testdir({
    v1: {
      ratelimit: {
        config: {
          "basic.yaml": "domain: basic\n",
          "notes.txt": "domain: notes\n",
          ".hidden.yaml": "domain: hidden\n",
          nested: { "deep.yaml": "domain: deep\n" },
          ".snapshots": { "old.yaml": "domain: old\n" },
        },
        // Its name `config.yaml` starts with `config.`, so the prefix filter keeps it.
        "config.yaml": "domain: top\n",
        "configx.yaml": "domain: configx\n",
        other: { "x.yaml": "domain: other\n" },
      },
    },
    current: t.fixture("symlink", "v1"),
  });
}

function watchRootLayout(root: string, overrides: Partial<RuleFilesLayout> = {}): RuleFilesLayout {
  return {
    runtimeRoot: join(root, "current"),
    runtimeSubdirectory: "ratelimit",
    runtimeAppDirectory: "config",
    watchRoot: true,
    ignoreDotfiles: false,
    ...overrides,
  };
}

t.test(
  "watch root: names relative to ROOT/SUBDIRECTORY through the root symlink, APPDIRECTORY prefix",
  async (t) => {
    const root = runtimeTree(t);
    const layout = watchRootLayout(root);
    t.equal(ruleDirectory(layout), join(root, "current", "ratelimit"));
    t.strictSame(await namesOf(layout), [
      "config..hidden.yaml",
      "config..snapshots.old.yaml",
      "config.basic.yaml",
      "config.nested.deep.yaml",
      "config.notes.txt",
      "config.yaml",
    ]);
    const basic = (await readRuleFiles(layout)).files.find((file) => file.name === "config.basic.yaml");
    t.equal(basic?.content, "domain: basic\n");
    t.equal(basic?.path, join(root, "current", "ratelimit", "config", "basic.yaml"));
  },
);

t.test("watch root: the prefix follows RUNTIME_APPDIRECTORY", async (t) => {
  const root = runtimeTree(t);
  t.strictSame(await namesOf(watchRootLayout(root, { runtimeAppDirectory: "other" })), ["other.x.yaml"]);
});

t.test("watch root: RUNTIME_IGNOREDOTFILES skips dotfiles and dot-directories", async (t) => {
  const root = runtimeTree(t);
  t.strictSame(await namesOf(watchRootLayout(root, { ignoreDotfiles: true })), [
    "config.basic.yaml",
    "config.nested.deep.yaml",
    "config.notes.txt",
    "config.yaml",
  ]);
});

t.test("watch root: an empty RUNTIME_SUBDIRECTORY loads no files (goruntime nil loader)", async (t) => {
  const root = t.testdir({ config: { "basic.yaml": "domain: basic\n" } });
  const layout: RuleFilesLayout = {
    runtimeRoot: root,
    runtimeSubdirectory: "",
    runtimeAppDirectory: "config",
    watchRoot: true,
    ignoreDotfiles: false,
  };
  t.equal(ruleDirectory(layout), undefined);
  t.strictSame(await readRuleFiles(layout), { files: [], directoryMissing: false });
});

t.test("app directory: every file of ROOT/SUBDIRECTORY/APPDIRECTORY, named relative to it", async (t) => {
  const root = runtimeTree(t);
  const layout: RuleFilesLayout = {
    ...watchRootLayout(root),
    runtimeRoot: join(root, "v1"),
    watchRoot: false,
  };
  t.equal(ruleDirectory(layout), join(root, "v1", "ratelimit", "config"));
  t.strictSame(await namesOf(layout), [
    ".hidden.yaml",
    ".snapshots.old.yaml",
    "basic.yaml",
    "nested.deep.yaml",
    "notes.txt",
  ]);
  t.strictSame(await namesOf({ ...layout, ignoreDotfiles: true }), [
    "basic.yaml",
    "nested.deep.yaml",
    "notes.txt",
  ]);
});

t.test("app directory: an empty RUNTIME_SUBDIRECTORY reads ROOT/APPDIRECTORY", async (t) => {
  const root = t.testdir({ config: { "basic.yaml": "domain: basic\n" } });
  const layout: RuleFilesLayout = {
    runtimeRoot: root,
    runtimeSubdirectory: "",
    runtimeAppDirectory: "config",
    watchRoot: false,
    ignoreDotfiles: false,
  };
  t.strictSame(await namesOf(layout), ["basic.yaml"]);
});

/** A Kubernetes ConfigMap volume: real files in a timestamped dot-directory, `..data` and the names symlinked. */
function configMapTree(t: Test): string {
  return t.testdir({
    config: {
      "..2024_01_01_00_00_00.000000001": { "basic.yaml": "domain: basic\n" },
      "..data": t.fixture("symlink", "..2024_01_01_00_00_00.000000001"),
      "basic.yaml": t.fixture("symlink", "..data/basic.yaml"),
    },
  });
}

function configMapLayout(root: string, ignoreDotfiles: boolean): RuleFilesLayout {
  return {
    runtimeRoot: root,
    runtimeSubdirectory: "",
    runtimeAppDirectory: "config",
    watchRoot: false,
    ignoreDotfiles,
  };
}

t.test("ConfigMap mount with RUNTIME_IGNOREDOTFILES: each file once, through its symlink", async (t) => {
  const root = configMapTree(t);
  const { files } = await readRuleFiles(configMapLayout(root, true));
  t.strictSame(
    files.map((file) => [file.name, file.content]),
    [["basic.yaml", "domain: basic\n"]],
  );
});

t.test("ConfigMap mount without RUNTIME_IGNOREDOTFILES: the timestamped copy loads too", async (t) => {
  const names = await namesOf(configMapLayout(configMapTree(t), false));
  t.ok(names.includes("basic.yaml"), "the symlinked file");
  t.ok(names.includes("..2024_01_01_00_00_00.000000001.basic.yaml"), "the copy in the timestamped directory");
});

t.test(
  "ConfigMap mount: a symlink to a directory is not descended (goruntime uses filepath.Walk)",
  async (t) => {
    // filepath.Walk does not follow symbolic links: `..data` is neither a regular file nor a directory to it,
    // so the reference reads each ConfigMap file twice, not three times.
    t.strictSame(await namesOf(configMapLayout(configMapTree(t), false)), [
      "..2024_01_01_00_00_00.000000001.basic.yaml",
      "basic.yaml",
    ]);
  },
);

t.test("a missing directory means no files, in both modes", async (t) => {
  const root = join(t.testdir({}), "does-not-exist");
  const layout: RuleFilesLayout = {
    runtimeRoot: root,
    runtimeSubdirectory: "ratelimit",
    runtimeAppDirectory: "config",
    watchRoot: true,
    ignoreDotfiles: false,
  };
  t.strictSame(await readRuleFiles(layout), { files: [], directoryMissing: true });
  t.strictSame(await readRuleFiles({ ...layout, watchRoot: false }), { files: [], directoryMissing: true });
});

t.test("no rule files: a warning naming the directory, the settings and when rules will load", async (t) => {
  const root = t.testdir({ empty: { ratelimit: { config: {} } }, full: { config: { "a.yaml": "x" } } });
  const warningOf = async (layout: RuleFilesLayout) =>
    noRuleFilesWarning(layout, await readRuleFiles(layout));
  const appDirectory = (runtimeRoot: string): RuleFilesLayout => ({
    runtimeRoot,
    runtimeSubdirectory: "",
    runtimeAppDirectory: "config",
    watchRoot: false,
    ignoreDotfiles: false,
  });
  const watchRoot = (runtimeRoot: string, runtimeSubdirectory = "ratelimit"): RuleFilesLayout => ({
    ...appDirectory(runtimeRoot),
    runtimeSubdirectory,
    watchRoot: true,
  });
  const missing = join(root, "missing");
  t.equal(
    await warningOf(appDirectory(missing)),
    `rule directory ${join(missing, "config")} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY) does not exist: no rate limit rules are loaded and every request is allowed; the rules load as soon as it is created`,
  );
  t.equal(
    await warningOf(watchRoot(missing)),
    `rule directory ${join(missing, "ratelimit")} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY) does not exist: no rate limit rules are loaded and every request is allowed; with RUNTIME_WATCH_ROOT=true the rules load when RUNTIME_ROOT is next created or replaced`,
  );
  t.equal(
    await warningOf({ ...appDirectory(join(root, "empty")), runtimeSubdirectory: "ratelimit" }),
    `rule directory ${join(root, "empty", "ratelimit", "config")} has no rule files: no rate limit rules are loaded and every request is allowed`,
  );
  t.equal(
    await warningOf(watchRoot(join(root, "empty"))),
    `no rule files in ${join(root, "empty", "ratelimit")} (files under config/, or named config.*): no rate limit rules are loaded and every request is allowed`,
  );
  t.equal(
    await warningOf(watchRoot(join(root, "full"), "")),
    "RUNTIME_SUBDIRECTORY is empty with RUNTIME_WATCH_ROOT=true, so no rule files are read (as the reference): no rate limit rules are loaded and every request is allowed",
  );
  t.equal(await warningOf(appDirectory(join(root, "full"))), undefined, "files: no warning");
});
