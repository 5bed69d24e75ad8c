import t from "tap";
import { traceMatch } from "../../../../src/engine/explain/trace-match.js";
import { matchLimit } from "../../../../src/engine/rule-matcher.js";
import { newRegistry, rulesFromYaml } from "../decision-fixture.js";

// POST /explain's account of the rule search (docs/explain.md): the same walk as matchLimit,
// told level by level.
const registry = newRegistry();
const rules = rulesFromYaml(
  registry,
  `domain: d
descriptors:
  - key: path
    value: "/api/*"
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: path
    value: "/api/users*"
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: path
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: user
    value: alice
    descriptors:
      - key: tier
        rate_limit: { unit: hour, requests_per_unit: 4 }
`,
);
const root = rules.domains.get("d")!;
const entries = (...pairs: [string, string][]) => pairs.map(([key, value]) => ({ key, value }));

t.test("wildcards in configuration order, the first match wins, the rest untried", async (t) => {
  const trace = traceMatch(root, entries(["path", "/api/users/7"]));
  t.strictSame(trace.levels, [
    {
      entry: { key: "path", value: "/api/users/7" },
      tried: [
        { candidate: "path_/api/users/7", how: "exact", matched: false },
        { candidate: "path_/api/*", how: "wildcard", matched: true },
      ],
      matched: "path_/api/*",
      how: "wildcard",
    },
  ]);
  t.equal(trace.last?.limit?.requestsPerUnit, 1);
});

t.test("no exact and no wildcard: the value-less key", async (t) => {
  const trace = traceMatch(root, entries(["path", "/health"]));
  t.strictSame(
    trace.levels[0]!.tried.map((c) => [c.candidate, c.how, c.matched]),
    [
      ["path_/health", "exact", false],
      ["path_/api/*", "wildcard", false],
      ["path_/api/users*", "wildcard", false],
      ["path", "key only", true],
    ],
  );
  t.equal(trace.last?.fullKey, "d.path");
});

t.test("nested levels, and a search that stops where nothing matches", async (t) => {
  const nested = traceMatch(root, entries(["user", "alice"], ["tier", "gold"]));
  t.strictSame(
    nested.levels.map((level) => [level.matched, level.how]),
    [
      ["user_alice", "exact"],
      ["tier", "key only"],
    ],
  );
  t.equal(nested.last?.fullKey, "d.user_alice.tier");
  const stopped = traceMatch(root, entries(["user", "bob"], ["tier", "gold"]));
  t.equal(stopped.levels.length, 1, "the second level is never reached");
  t.strictSame([stopped.levels[0]!.matched, stopped.levels[0]!.how], [null, null]);
  t.equal(stopped.last, undefined);
});

t.test("a request shorter than the rule reaches a node without a limit; the matcher agrees", async (t) => {
  const request = entries(["user", "alice"]);
  const trace = traceMatch(root, request);
  t.equal(trace.last?.fullKey, "d.user_alice");
  t.equal(trace.last?.limit, undefined);
  t.equal(matchLimit(root, "d", request, registry), undefined);
});
