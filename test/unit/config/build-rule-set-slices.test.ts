// Large rule sets: a cap on descriptors, and compilation in slices that let the event loop run between them.
import t from "tap";
import {
  buildRuleSet,
  buildRuleSetInSlices,
  DESCRIPTORS_PER_SLICE,
} from "../../../src/config/build-rule-set.js";
import type { DescriptorDocument, RuleDocument } from "../../../src/config/rule-document.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { configErrorMessage } from "./config-fixtures.js";

function descriptor(key: string, children: DescriptorDocument[] = []): DescriptorDocument {
  return {
    key,
    value: "",
    rateLimit: { requestsPerUnit: 5, unit: "second", unlimited: false, name: "", replaces: [] },
    descriptors: children,
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    valueToMetric: false,
    shareThreshold: false,
    metadata: undefined,
  };
}

function documentOf(count: number): RuleDocument {
  return {
    name: "many.yaml",
    domain: "many",
    descriptors: Array.from({ length: count }, (_, i) => descriptor(`k${i}`)),
  };
}

const stats = new StatsRegistry({ maxDynamicKeys: 10 });
const options = { mergeDomainConfig: false, statsFor: (key: string) => stats.pinnedRuleStats(key) };

t.test("more descriptors than the cap, nested ones included, is an error naming the file", async (t) => {
  const nested: RuleDocument = {
    name: "nested.yaml",
    domain: "nested",
    descriptors: [descriptor("a", [descriptor("b"), descriptor("c")]), descriptor("d")],
  };
  t.equal(
    configErrorMessage(() => buildRuleSet([nested], { ...options, maxDescriptors: 3 })),
    "nested.yaml: too many descriptors: a rule set may hold at most 3",
  );
  t.equal(buildRuleSet([nested], { ...options, maxDescriptors: 4 }).domains.get("nested")?.exact.size, 2);
  // Across documents: the cap is on the whole rule set.
  t.equal(
    configErrorMessage(() =>
      buildRuleSet([documentOf(3), { ...documentOf(3), domain: "other", name: "other.yaml" }], {
        ...options,
        maxDescriptors: 5,
      }),
    ),
    "other.yaml: too many descriptors: a rule set may hold at most 5",
  );
});

t.test(
  "10,000 descriptors compile in slices: the event loop runs between them, the result is the same",
  async (t) => {
    // An immediate that queues itself again runs once per event-loop turn until the build ends.
    let turns = 0;
    let building = true;
    const spin = () => {
      if (!building) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const sliced = await buildRuleSetInSlices([documentOf(10_000)], options);
    building = false;
    // One pause after each slice: a synchronous build would leave no turn at all.
    const slices = 10_000 / DESCRIPTORS_PER_SLICE;
    t.ok(turns >= slices - 1 && turns <= slices + 1, `${turns} event-loop turns during ${slices} slices`);
    const whole = buildRuleSet([documentOf(10_000)], options);
    t.equal(sliced.domains.get("many")?.exact.size, 10_000);
    t.same([...sliced.domains.get("many")!.exact.keys()], [...whole.domains.get("many")!.exact.keys()]);
  },
);

t.test("an error in a later slice rejects the whole build", async (t) => {
  const document = documentOf(5_000);
  const broken: RuleDocument = { ...document, descriptors: [...document.descriptors, descriptor("")] };
  await t.rejects(buildRuleSetInSlices([broken], options), {
    message: "many.yaml: descriptor has empty key",
  });
});
