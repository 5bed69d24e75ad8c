// The reference's src/provider/file_provider.go and src/config/config_impl.go: every load re-reads and
// re-validates all files; any error rejects the whole new config, and the error names the offending file
// (`<fileName>: <message>`, the goruntime key: `basic.yaml` in the app-directory layout, `config.basic.yaml`
// in the watch-root layout).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { buildRuleSetInSlices } from "../../../src/config/build-rule-set.js";
import { FileRuleSource } from "../../../src/config/file/file-rule-source.js";
import type { RuleFilesLayout } from "../../../src/config/file/rule-files.js";
import type { RuleUpdate } from "../../../src/config/rule-source.js";
import { ConfigError } from "../../../src/errors.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { compileRules, fixtureText } from "./config-fixtures.js";

function appDirectoryLayout(root: string): RuleFilesLayout {
  return {
    runtimeRoot: root,
    runtimeSubdirectory: "",
    runtimeAppDirectory: "config",
    watchRoot: false,
    ignoreDotfiles: false,
  };
}

function load(layout: RuleFilesLayout, mergeDomainConfig = false): Promise<RuleUpdate> {
  return new FileRuleSource({
    layout,
    compile: async (documents) => compileRules(documents, mergeDomainConfig),
  }).load();
}

/** The error message of a failed load, or a description that never equals one. */
function errorOf(update: RuleUpdate): string {
  return update.ok ? "<loaded without error>" : update.error.message;
}

t.test("one invalid file rejects the whole directory, and the error names it", async (t) => {
  const root = t.testdir({
    config: {
      "basic.yaml": fixtureText("merge-domain-a.yaml"),
      "bad.yaml": fixtureText("unknown-key.yaml"),
    },
  });
  const update = await load(appDirectoryLayout(root));
  t.equal(update.ok, false);
  t.equal(errorOf(update), "bad.yaml: config error, unknown key 'ratelimit'");
  if (!update.ok) t.type(update.error, ConfigError);
});

t.test("watch-root layout: the error names the goruntime key", async (t) => {
  const root = t.testdir({
    ratelimit: {
      config: {
        "basic.yaml": fixtureText("merge-domain-a.yaml"),
        "bad.yaml": fixtureText("invalid-unit.yaml"),
      },
    },
  });
  const layout: RuleFilesLayout = {
    runtimeRoot: root,
    runtimeSubdirectory: "ratelimit",
    runtimeAppDirectory: "config",
    watchRoot: true,
    ignoreDotfiles: false,
  };
  t.equal(errorOf(await load(layout)), "config.bad.yaml: invalid rate limit unit 'foo'");
});

t.test("files are parsed as YAML whatever their extension", async (t) => {
  const root = t.testdir({ config: { "limits.conf": fixtureText("dump.yaml"), "notes.txt": "domain: [\n" } });
  // The exact syntax-error texts are asserted in parse-rule-yaml-errors.test.ts.
  t.match(
    errorOf(await load(appDirectoryLayout(root))),
    /^notes\.txt: error loading config file: yaml: line \d+: /,
  );
  const valid = await load(
    appDirectoryLayout(t.testdir({ config: { "limits.conf": fixtureText("dump.yaml") } })),
  );
  t.equal(valid.ok, true);
  if (valid.ok) t.strictSame([...valid.rules.domains.keys()], ["foo"]);
});

t.test("a build error across files names the file loaded second", async (t) => {
  const root = t.testdir({
    config: {
      "a.yaml": fixtureText("duplicate-domain-a.yaml"),
      "b.yaml": fixtureText("duplicate-domain-b.yaml"),
    },
  });
  // The reference's load order is Go map order, so either file may be the second one.
  t.match(
    errorOf(await load(appDirectoryLayout(root))),
    /^(a|b)\.yaml: duplicate domain 'test-domain' in config file$/,
  );
  const merged = await load(appDirectoryLayout(root), true);
  t.equal(merged.ok, true, "MERGE_DOMAIN_CONFIG accepts the same files");
});

t.test("a valid directory loads every domain", async (t) => {
  const root = t.testdir({
    config: {
      "foo.yaml": fixtureText("dump.yaml"),
      nested: { "bar.yaml": fixtureText("dump-second-domain.yaml") },
    },
  });
  const update = await load(appDirectoryLayout(root));
  t.equal(update.ok, true);
  if (update.ok) t.strictSame([...update.rules.domains.keys()].sort(), ["bar", "foo"]);
});

t.test(
  "no files (missing directory) is an empty, valid configuration, with a warning each time",
  async (t) => {
    const root = join(t.testdir({}), "missing");
    const warnings: string[] = [];
    const source = new FileRuleSource({
      layout: appDirectoryLayout(root),
      compile: async (documents) => compileRules(documents),
      warn: (line) => warnings.push(line),
    });
    const update = await source.load();
    t.equal(update.ok, true);
    if (update.ok) t.equal(update.rules.domains.size, 0);
    await source.load();
    const warning = `rule directory ${join(root, "config")} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY) does not exist: no rate limit rules are loaded and every request is allowed; the rules load as soon as it is created`;
    t.strictSame(warnings, [warning, warning], "one warning per load");
  },
);

t.test("start() reports the first load to its listener", async (t) => {
  const root = t.testdir({ config: { "bad.yaml": fixtureText("replaces-self.yaml") } });
  const source = new FileRuleSource({
    layout: appDirectoryLayout(root),
    compile: async (documents) => compileRules(documents),
  });
  const update = await new Promise<RuleUpdate>((resolve) => source.start(resolve));
  await source.stop();
  t.equal(errorOf(update), "bad.yaml: replaces should not contain name of same descriptor");
});

t.test("stop() during a long compilation ends it at its next slice; nothing is applied", async (t) => {
  const lines = ["domain: many", "descriptors:"];
  for (let i = 0; i < 20_000; i++) lines.push(`  - key: k${i}`);
  const root = t.testdir({ config: { "many.yaml": lines.join("\n") } });
  const stats = new StatsRegistry({ maxDynamicKeys: 10 });
  let compiling: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    compiling = resolve;
  });
  let outcome = "<still compiling>";
  const source = new FileRuleSource({
    layout: appDirectoryLayout(root),
    watch: false,
    compile: (documents, signal) => {
      compiling();
      const built = buildRuleSetInSlices(documents, {
        mergeDomainConfig: false,
        statsFor: (key) => stats.pinnedRuleStats(key),
        signal,
      });
      built.then(
        () => {
          outcome = "<compiled>";
        },
        (error: Error) => {
          outcome = error.message;
        },
      );
      return built;
    },
  });
  const updates: RuleUpdate[] = [];
  source.start((update) => updates.push(update));
  await started;
  await source.stop();
  t.equal(outcome, "the rule source is stopped", "the compilation was abandoned");
  t.strictSame(updates, [], "no outcome reported after stop()");
});

t.test(
  "a change while a slow reload runs is not lost: one more reload follows, the last write wins",
  async (t) => {
    const root = t.testdir({ config: { "rules.yaml": fixtureText("merge-domain-a.yaml") } });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let compiling: () => void = () => {};
    const firstCompile = new Promise<void>((resolve) => {
      compiling = resolve;
    });
    let queued: () => void = () => {};
    const changeQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    let compiles = 0;
    const source = new FileRuleSource({
      layout: appDirectoryLayout(root),
      reloadTiming: { quietMs: 10, maxDelayMs: 50, missingPollMs: 1000 },
      onReloadQueued: () => queued(),
      compile: async (documents) => {
        // The first load is held until the change has been seen.
        if (compiles++ === 0) {
          compiling();
          await gate;
        }
        return compileRules(documents);
      },
    });
    t.teardown(() => source.stop());
    const domains: string[][] = [];
    const reloaded = new Promise<void>((resolve) =>
      source.start((update) => {
        domains.push(update.ok ? [...update.rules.domains.keys()] : [update.error.message]);
        if (domains.length === 2) resolve();
      }),
    );
    await firstCompile;
    writeFileSync(join(root, "config", "rules.yaml"), fixtureText("dump.yaml"));
    await changeQueued;
    release();
    await reloaded;
    t.strictSame(domains, [["test-domain"], ["foo"]]);
  },
);
