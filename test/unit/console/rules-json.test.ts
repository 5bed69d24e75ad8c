// The console's Rules JSON (src/console/rules-json.ts): the search keeps a match's ancestors and
// children, the bound on descriptors, and `truncated` only when something that would show was left out.
import t from "tap";
import { rulesJson } from "../../../src/console/rules-json.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { rulesFromYaml } from "../../helpers/engine-fixtures.js";

const YAML = `domain: d
descriptors:
  - key: a
    descriptors:
      - key: b
        value: one
        rate_limit: { unit: hour, requests_per_unit: 1 }
      - key: b
        value: two
        rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: c
    rate_limit: { unit: hour, requests_per_unit: 3 }
`;
const registry = new StatsRegistry({ maxDynamicKeys: 10 });
const rules = rulesFromYaml(registry, YAML);
const answer = (query: string, maxNodes: number) =>
  rulesJson(rules, (stats) => registry.ruleCounts(stats), { query, maxNodes });
const keys = (result: ReturnType<typeof answer>) => {
  const out: string[] = [];
  const visit = (node: { fullKey: string; children: readonly unknown[] }) => {
    out.push(node.fullKey);
    for (const child of node.children) visit(child as typeof node);
  };
  for (const domain of result.domains) for (const node of domain.rules) visit(node);
  return out;
};

t.test("everything within the bound", async (t) => {
  const all = answer("", 10);
  t.strictSame(keys(all), ["d.a", "d.a.b_one", "d.a.b_two", "d.c"]);
  t.match(all, { total: 4, shown: 4, truncated: false });
});

t.test("a search: the match, its ancestors; a parent's match brings its children", async (t) => {
  t.strictSame(keys(answer("TWO", 10)), ["d.a", "d.a.b_two"]);
  t.strictSame(keys(answer("d.a", 10)), ["d.a", "d.a.b_one", "d.a.b_two"]);
  t.strictSame(answer("zzz", 10).domains, []);
});

t.test("the bound: truncated only when a node that would show was left out", async (t) => {
  const cut = answer("", 2);
  t.strictSame(keys(cut), ["d.a", "d.a.b_one"]);
  t.match(cut, { shown: 2, truncated: true });
  const exact = answer("c", 1);
  t.strictSame(keys(exact), ["d.c"]);
  t.equal(exact.truncated, false, "nothing else matches: not truncated");
  const matched = answer("b_", 1);
  t.strictSame(keys(matched), ["d.a", "d.a.b_one"]);
  t.equal(matched.truncated, true, "b_two matched and was left out");
});

t.test("a limit's reservation, on rate_limit and on a stacked entry; null without one", async (t) => {
  const withReservations = rulesFromYaml(
    registry,
    `domain: ai
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 100, reservation: { estimate: 10, ttl: 2m, request_id_key: rid } }
  - key: team
    rate_limits:
      - { unit: minute, requests_per_unit: 50 }
      - { unit: day, requests_per_unit: 900, reservation: { estimate: 30, ttl: 1h } }
`,
  );
  const result = rulesJson(withReservations, (stats) => registry.ruleCounts(stats), {
    query: "",
    maxNodes: 10,
  });
  const [user, team] = result.domains[0]!.rules;
  t.strictSame(user!.limit!.reservation, { estimate: 10, ttlSeconds: 120, requestIdKey: "rid" });
  t.equal(team!.limit!.reservation, null);
  t.strictSame(team!.limit!.stacked[0]!.reservation, { estimate: 30, ttlSeconds: 3600, requestIdKey: null });
  t.equal(answer("", 10).domains[0]!.rules[1]!.limit!.reservation, null, "a plain rule: null");
});
