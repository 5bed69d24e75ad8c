import t from "tap";
import type { DecisionDescriptor } from "../../../src/engine/decision-request.js";
import { decideWith, entries, newEngine, newRegistry, request, rulesFromYaml } from "./decision-fixture.js";

// Dynamic metadata (RESPONSE_DYNAMIC_METADATA=true).
const YAML = `domain: d
descriptors:
  - key: first
    rate_limit: {unit: minute, requests_per_unit: 10}
    metadata:
      tier: gold
      shared: {a: 1, nested: {x: first}}
      list: [1, 2]
  - key: second
    rate_limit: {unit: minute, requests_per_unit: 10}
    metadata:
      tier: silver
      extra: true
      list: [3]
      shared: {b: 2, nested: {x: second, y: second}}
  - key: over
    rate_limit: {unit: minute, requests_per_unit: 10}
    metadata: {from_over: yes}
  - key: shadowed
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 10}
    metadata: {from_shadow: 1}
  - key: free
    rate_limit: {unlimited: true}
    metadata: {from_unlimited: 1}
  - key: plain
    rate_limit: {unit: minute, requests_per_unit: 10}
`;

function metadataFor(
  descriptors: DecisionDescriptor[],
  countersAfter: number[],
  hitsAddend = 0,
  enabled = true,
) {
  const registry = newRegistry();
  const engine = newEngine(registry, { dynamicMetadata: enabled });
  return decideWith(
    engine,
    rulesFromYaml(registry, YAML),
    request("d", descriptors, hitsAddend),
    countersAfter,
  ).dynamicMetadata;
}

t.test("domain and descriptors with k=v entries", async (t) => {
  t.strictSame(metadataFor([entries(["plain", "p"]), entries(["nomatch", "x"], ["sub", ""])], [1]), {
    domain: "d",
    descriptors: [{ entries: ["plain=p"] }, { entries: ["nomatch=x", "sub="] }],
  });
});

t.test("override limit as Go text format", async (t) => {
  const metadata = metadataFor(
    [{ ...entries(["plain", "p"]), limit: { requestsPerUnit: 42, unit: 3 } }],
    [1],
  );
  t.strictSame(metadata?.descriptors, [{ entries: ["plain=p"], limit: "requests_per_unit:42 unit:HOUR" }]);
});

t.test("override text names every unit and omits zero fields", async (t) => {
  const names = ["SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR"];
  for (let unit = 1; unit <= 6; unit++) {
    const metadata = metadataFor([{ ...entries(["plain", "p"]), limit: { requestsPerUnit: 7, unit } }], [1]);
    t.strictSame(metadata?.descriptors, [
      { entries: ["plain=p"], limit: `requests_per_unit:7 unit:${names[unit - 1]}` },
    ]);
  }
  const zero = metadataFor(
    [{ ...entries(["plain", "p"]), limit: { requestsPerUnit: 0, unit: 2 }, hitsAddend: 0n }],
    [0],
  );
  t.strictSame(zero?.descriptors, [{ entries: ["plain=p"], limit: "unit:MINUTE", hitsAddend: 0 }]);
});

t.test("per-descriptor hitsAddend only when set, even 0", async (t) => {
  const metadata = metadataFor(
    [
      { ...entries(["plain", "a"]), hitsAddend: 0n },
      { ...entries(["plain", "b"]), hitsAddend: 5n },
      entries(["plain", "c"]),
    ],
    [0, 5, 1],
  );
  t.strictSame(metadata?.descriptors, [
    { entries: ["plain=a"], hitsAddend: 0 },
    { entries: ["plain=b"], hitsAddend: 5 },
    { entries: ["plain=c"] },
  ]);
});

t.test("request hitsAddend only when non-zero", async (t) => {
  t.equal(metadataFor([entries(["plain", "p"])], [3], 3)?.hitsAddend, 3);
  const without = metadataFor([entries(["plain", "p"])], [1], 0);
  t.notOk(without !== undefined && "hitsAddend" in without, "no hitsAddend for request hits_addend 0");
});

t.test(
  "metadata of passed descriptors merged in request order: first wins, nested objects merge",
  async (t) => {
    const metadata = metadataFor([entries(["first", "1"]), entries(["second", "2"])], [1, 1]);
    t.strictSame(
      metadata?.metadata,
      {
        tier: "gold",
        shared: { a: 1, nested: { x: "first", y: "second" }, b: 2 },
        list: [1, 2],
        extra: true,
      },
      "lists are values: the first one wins whole",
    );
    const reversed = metadataFor([entries(["second", "2"]), entries(["first", "1"])], [1, 1]);
    t.strictSame(reversed?.metadata, {
      tier: "silver",
      extra: true,
      list: [3],
      shared: { b: 2, nested: { x: "second", y: "second" }, a: 1 },
    });
  },
);

t.test("merging does not modify the configured metadata", async (t) => {
  const registry = newRegistry();
  const rules = rulesFromYaml(registry, YAML);
  const engine = newEngine(registry, { dynamicMetadata: true });
  decideWith(engine, rules, request("d", [entries(["first", "1"]), entries(["second", "2"])]), [1, 1]);
  const alone = decideWith(engine, rules, request("d", [entries(["first", "1"])]), [2]);
  t.strictSame(alone.dynamicMetadata?.metadata, {
    tier: "gold",
    shared: { a: 1, nested: { x: "first" } },
    list: [1, 2],
  });
});

t.test(
  "over-limit, unlimited and unmatched descriptors contribute nothing; shadow-rewritten OK does",
  async (t) => {
    const metadata = metadataFor(
      [entries(["over", "o"]), entries(["free", "f"]), entries(["nomatch", "n"]), entries(["shadowed", "s"])],
      [11, 11],
    );
    t.strictSame(metadata?.metadata, { from_shadow: 1 });
  },
);

t.test("no metadata key when nothing passed", async (t) => {
  const metadata = metadataFor([entries(["over", "o"]), entries(["plain", "p"])], [11, 1]);
  t.strictSame(metadata, { domain: "d", descriptors: [{ entries: ["over=o"] }, { entries: ["plain=p"] }] });
});

t.test("no dynamic metadata when the feature is off", async (t) => {
  t.equal(metadataFor([entries(["first", "1"])], [1], 2, false), undefined);
});
