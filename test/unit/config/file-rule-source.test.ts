// Spec §3.16 and §3.5 "Whole-config behaviour": every load re-reads and re-validates all files; any error
// rejects the whole new config, and the error names the offending file (`<fileName>: <message>`, the
// goruntime key: `basic.yaml` in the app-directory layout, `config.basic.yaml` in the watch-root layout).
import { join } from "node:path";
import t from "tap";
import { FileRuleSource } from "../../../src/config/file/file-rule-source.js";
import type { RuleFilesLayout } from "../../../src/config/file/rule-files.js";
import type { RuleUpdate } from "../../../src/config/rule-source.js";
import { ConfigError } from "../../../src/errors.js";
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
    compile: (documents) => compileRules(documents, mergeDomainConfig),
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

t.test("no files (missing directory) is an empty, valid configuration", async (t) => {
  const update = await load(appDirectoryLayout(join(t.testdir({}), "missing")));
  t.equal(update.ok, true);
  if (update.ok) t.equal(update.rules.domains.size, 0);
});

t.test("start() reports the first load to its listener", async (t) => {
  const root = t.testdir({ config: { "bad.yaml": fixtureText("replaces-self.yaml") } });
  const source = new FileRuleSource({
    layout: appDirectoryLayout(root),
    compile: (documents) => compileRules(documents),
  });
  const update = await new Promise<RuleUpdate>((resolve) => source.start(resolve));
  await source.stop();
  t.equal(errorOf(update), "bad.yaml: replaces should not contain name of same descriptor");
});
