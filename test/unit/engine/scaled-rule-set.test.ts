import t from "tap";
import { scaledRuleSet, shareOf } from "../../../src/engine/scaled-rule-set.js";
import { newRegistry, rulesFromYaml } from "./decision-fixture.js";

// BACKEND_LOCAL_LIMIT_FRACTION's arithmetic (docs/outages.md).
t.test("shareOf: floor of the share, at least 1, 0 stays 0, fraction 1 leaves the limit", async (t) => {
  t.strictSame(
    [
      shareOf(10, 0.3),
      shareOf(10, 0.25),
      shareOf(3, 0.25),
      shareOf(0, 0.5),
      shareOf(7, 1),
      shareOf(1_000_000, 0.1),
    ],
    [3, 2, 1, 0, 7, 100_000],
  );
});

t.test(
  "every limit of the tree is scaled: nested, wildcard, stacked, burst; the original stays",
  async (t) => {
    const registry = newRegistry();
    const rules = rulesFromYaml(
      registry,
      `domain: d
descriptors:
  - key: a
    rate_limit: {unit: second, requests_per_unit: 100}
    descriptors:
      - key: b
        rate_limit: {unit: minute, requests_per_unit: 40, algorithm: token_bucket, burst: 8}
  - key: w
    value: "x*"
    rate_limits:
      - {unit: second, requests_per_unit: 20}
      - {unit: hour, requests_per_unit: 1000, algorithm: sliding_window}
`,
    );
    const scaled = scaledRuleSet(rules, 0.25);
    const level = scaled.domains.get("d")!;
    const a = level.exact.get("a")!;
    const b = a.children!.exact.get("b")!;
    const w = level.wildcards[0]!;
    t.strictSame(
      [a.limit!.requestsPerUnit, b.limit!.requestsPerUnit, b.limit!.burst, w.limit!.requestsPerUnit],
      [25, 10, 2, 5],
    );
    t.equal(w.limit!.stacked![0]!.requestsPerUnit, 250);
    t.equal(level.exact.get("w_x*"), w, "the wildcard node is one object in both lists");
    t.equal(
      rules.domains.get("d")!.exact.get("a")!.limit!.requestsPerUnit,
      100,
      "the rules in force are unchanged",
    );
    a.limit!.stats.totalHits.add(5);
    a.limit!.stats.overLimit.add(1);
    const counts = registry
      .snapshotLines()
      .filter((line) => line.startsWith("ratelimit.service.rate_limit.d.a."));
    t.ok(counts.includes("ratelimit.service.rate_limit.d.a.over_limit: 1"));
    t.ok(
      counts.includes("ratelimit.service.rate_limit.d.a.total_hits: 0"),
      "total_hits is counted once, by the first plan",
    );
  },
);
