// Alias bombs: yaml.v2's excessive-aliasing rule, which the reference inherits, counted as yaml.v2 counts
// and applied before the tree is built (each walk of it would otherwise expand 9^9 nodes and never end).

import { parseEvents } from "js-yaml";
import t from "tap";
import { aliasingProblem } from "../../../src/config/yaml/alias-expansion.js";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import { buildFixtures, configErrorMessage, fixtureText, parseFixture } from "./config-fixtures.js";

t.test("a 3.7 KB alias bomb is refused with yaml.v2's message, at once", async (t) => {
  t.ok(fixtureText("alias-bomb.yaml").length < 4000, "the fixture is small");
  t.equal(
    configErrorMessage(() => parseFixture("alias-bomb.yaml")),
    "alias-bomb.yaml: error loading config file: yaml: document contains excessive aliasing",
  );
});

t.test("anchors shared the usual way are accepted and expand as written", async (t) => {
  const rules = buildFixtures(["aliases-shared-limits.yaml"]);
  const root = rules.domains.get("aliases")!;
  t.equal(root.exact.get("tier_trial")?.limit?.requestsPerUnit, 10);
  t.equal(root.exact.get("method")?.children?.exact.get("team")?.limit?.requestsPerUnit, 100);
});

/** `[&a [s0 … s(n-1)], *a × aliases]`: a sequence of n scalars and that many aliases of it. */
function repeatedSequence(items: number, aliases: number): string {
  const scalars = Array.from({ length: items }, (_, i) => `s${i}`).join(", ");
  return `[&a [${scalars}], ${Array(aliases).fill("*a").join(", ")}]`;
}

function aliasingOf(source: string): string | undefined {
  return aliasingProblem(parseEvents(source, {}), source);
}

t.test(
  "yaml.v2's count: the document, every alias node, then every node reached through it; refused over 99 %",
  async (t) => {
    // A 1,000-node target: 1 document + 1 list + 1,000 + m alias nodes decoded directly, 1,000 through each
    // alias. The aliased share 1000m / (1002 + 1001m) passes 99 % from m = 111 on.
    t.equal(aliasingOf(repeatedSequence(999, 110)), undefined);
    t.equal(aliasingOf(repeatedSequence(999, 111)), "yaml: document contains excessive aliasing");
    // At most 100 aliased nodes never fail, whatever their share.
    t.equal(aliasingOf(repeatedSequence(99, 1)), undefined);
    // Alias nodes inside an expansion are aliased nodes themselves: two levels of 12 aliases of a 1,000-node
    // list expand to 156,156 aliased nodes from 1,027 decoded directly.
    const nested = `[&a [${Array.from({ length: 999 }, (_, i) => `s${i}`).join(", ")}], &b [${Array(12).fill("*a").join(", ")}], ${Array(12).fill("*b").join(", ")}]`;
    t.equal(aliasingOf(nested), "yaml: document contains excessive aliasing");
  },
);

t.test("a rule file reusing a small anchor 400 times is accepted, as by the reference", async (t) => {
  // 400 aliases of a 3-node map: each alias node is decoded besides the 3 nodes behind it, so 75 % at most.
  const source = [
    "domain: shared",
    "descriptors:",
    "  - key: k",
    "    metadata:",
    "      team: &team {name: core}",
    `      teams: [${Array(400).fill("*team").join(", ")}]`,
  ].join("\n");
  const document = parseRuleYaml("shared.yaml", source);
  const teams = document.descriptors[0]?.metadata?.teams;
  t.same(teams, Array(400).fill({ name: "core" }));
});

t.test("an anchor whose value contains an alias of itself is yaml.v2's error", async (t) => {
  const source = ["domain: loop", "descriptors: &self", "  - key: k", "    descriptors: *self"].join("\n");
  t.equal(
    configErrorMessage(() => parseRuleYaml("loop.yaml", source)),
    "loop.yaml: error loading config file: yaml: anchor 'self' value contains itself",
  );
});

t.test("a document of the same shape without aliases is not counted as aliased", async (t) => {
  const lines = ["domain: plain", "descriptors:"];
  for (let i = 0; i < 2000; i++)
    lines.push(`  - key: k${i}`, "    rate_limit: { unit: second, requests_per_unit: 1 }");
  t.equal(parseRuleYaml("plain.yaml", lines.join("\n")).descriptors.length, 2000);
});
