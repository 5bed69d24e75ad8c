// Rule files parsed on a worker thread: the documents equal the in-thread parse, large documents arrive in
// chunks, errors keep their file and text, and closing ends a parse in progress.
import t from "tap";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import { RuleYamlParser } from "../../../src/config/yaml/rule-yaml-parser.js";
import { ConfigError } from "../../../src/errors.js";
import { fixtureText } from "./config-fixtures.js";

function manyDescriptors(count: number): string {
  const lines = ["domain: many", "descriptors:"];
  for (let i = 0; i < count; i++) {
    lines.push(
      `  - key: k${i}`,
      "    descriptors:",
      "      - key: user",
      `        rate_limit: { unit: minute, requests_per_unit: ${i + 1} }`,
    );
  }
  return lines.join("\n");
}

t.test(
  "several files, one of 5,000 nested descriptors (many messages): the same documents as parseRuleYaml",
  async (t) => {
    const parser = new RuleYamlParser();
    t.teardown(() => parser.close());
    const files = [
      { name: "metadata.yaml", content: fixtureText("metadata.yaml") },
      { name: "many.yaml", content: manyDescriptors(5_000) },
      { name: "aliases.yaml", content: fixtureText("aliases-shared-limits.yaml") },
    ];
    const documents = await parser.parse(files);
    t.same(
      documents,
      files.map((file) => parseRuleYaml(file.name, file.content)),
    );
    t.equal(documents[1]?.descriptors.length, 5_000);
    // The thread serves the next request too.
    t.same(await parser.parse([files[0]!]), [parseRuleYaml(files[0]!.name, files[0]!.content)]);
  },
);

t.test("the first file that does not parse rejects the request with its ConfigError", async (t) => {
  const parser = new RuleYamlParser();
  t.teardown(() => parser.close());
  const error = await parser
    .parse([
      { name: "metadata.yaml", content: fixtureText("metadata.yaml") },
      { name: "config.bomb.yaml", content: fixtureText("alias-bomb.yaml") },
      { name: "unknown.yaml", content: fixtureText("unknown-key.yaml") },
    ])
    .catch((e: unknown) => e);
  t.type(error, ConfigError);
  t.equal(
    (error as Error).message,
    "config.bomb.yaml: error loading config file: yaml: document contains excessive aliasing",
  );
  t.equal((error as ConfigError).source, "config.bomb.yaml");
});

t.test("close() ends a parse in progress: it rejects, and later requests are refused", async (t) => {
  const parser = new RuleYamlParser();
  const parsing = parser.parse([{ name: "many.yaml", content: manyDescriptors(50_000) }]);
  const rejected = t.rejects(parsing, { message: "the rule parser is closed" });
  await parser.close();
  await rejected;
  await t.rejects(parser.parse([]), { message: "the rule parser is closed" });
});

t.test(
  "more descriptors than allowed in all (nested ones counted) is refused against the file that crosses it",
  async (t) => {
    const parser = new RuleYamlParser();
    t.teardown(() => parser.close());
    // 2 descriptors each (k0 and its nested user): 6 in all.
    const files = ["a.yaml", "b.yaml", "c.yaml"].map((name) => ({ name, content: manyDescriptors(1) }));
    t.equal((await parser.parse(files, 6)).length, 3);
    const error = await parser.parse(files, 3).catch((e: unknown) => e);
    t.type(error, ConfigError);
    t.equal((error as Error).message, "b.yaml: too many descriptors: a rule set may hold at most 3");
  },
);
