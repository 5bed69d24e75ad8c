// The rule format (YAML read by gopkg.in/yaml.v2, as the reference's src/config/config_impl.go does): what
// parses, and the yaml.v2 quirks a drop-in replacement keeps — scalar text kept for string fields, last
// duplicate key wins, only the first document counts, an empty file is an empty document, timestamps stay
// strings, free-form metadata.
import t from "tap";
import { parseFixture } from "./config-fixtures.js";

t.test('string fields keep a scalar\'s text: `value: yes` is "yes"', async (t) => {
  const document = parseFixture("value-yes.yaml");
  t.strictSame(
    document.descriptors.map((d) => [d.key, d.value]),
    [
      ["answer", "yes"],
      ["switch", "off"],
      ["octal", "010"],
      ["flag", "true"],
    ],
  );
});

t.test("a duplicate mapping key: the last one wins", async (t) => {
  const document = parseFixture("duplicate-key.yaml");
  t.equal(document.domain, "test-domain");
  t.equal(document.descriptors.length, 1);
  t.equal(document.descriptors[0]?.value, "second");
});

t.test("only the first YAML document counts; later ones are not even validated", async (t) => {
  const document = parseFixture("multi-document.yaml");
  t.equal(document.name, "multi-document.yaml");
  t.equal(document.domain, "test-domain");
  t.strictSame(
    document.descriptors.map((d) => d.key),
    ["key1"],
  );
});

t.test("a syntax error in a later document does not count either", async (t) => {
  // yaml.v2 parses lazily and stops after the first document's end, before scanning the second one.
  t.equal(parseFixture("multi-document-broken-second.yaml").domain, "test-domain");
});

t.test("an empty file is an empty document", async (t) => {
  const document = parseFixture("empty.yaml");
  t.equal(document.domain, "");
  t.strictSame(document.descriptors, []);
});

t.test(
  "timestamps stay strings (yaml.v2 hands timestamp-looking text to untyped fields as text)",
  async (t) => {
    const document = parseFixture("timestamp-value.yaml");
    t.strictSame(
      document.descriptors.map((d) => d.value),
      ["2001-12-14", "2001-12-14t21:59:43.10-05:00"],
    );
  },
);

t.test("descriptor fields decode with their defaults", async (t) => {
  const [descriptor] = parseFixture("whitelist-descriptor.yaml").descriptors;
  t.strictSame(descriptor, {
    key: "internal",
    value: "health-check",
    rateLimit: undefined,
    descriptors: [],
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    valueToMetric: false,
    shareThreshold: false,
    metadata: undefined,
  });
});

t.test("rate_limit decodes: missing requests_per_unit is 0, unit kept as written", async (t) => {
  const [descriptor] = parseFixture("missing-requests-per-unit.yaml").descriptors;
  t.strictSame(descriptor?.rateLimit, {
    requestsPerUnit: 0,
    unit: "second",
    unlimited: false,
    name: "",
    replaces: [],
  });
  const [named] = parseFixture("replaces-self.yaml").descriptors;
  t.strictSame(named?.rateLimit, {
    requestsPerUnit: 5,
    unit: "second",
    unlimited: false,
    name: "limit1",
    replaces: ["limit1"],
  });
});

t.test(
  "`unit:` at the root and `requests_per_unit:` on a descriptor pass the flat key whitelist",
  async (t) => {
    const document = parseFixture("unit-at-root.yaml");
    t.equal(document.domain, "test-domain");
    t.equal(document.descriptors.length, 1);
    t.equal(document.descriptors[0]?.rateLimit, undefined);
  },
);

t.test("metadata: free-form keys, nested maps, lists and numbers become JSON", async (t) => {
  const [descriptor] = parseFixture("metadata.yaml").descriptors;
  // Keys under metadata are not checked against the whitelist; floats are allowed there; `yes` is a
  // YAML 1.1 boolean in an untyped value.
  t.strictSame(descriptor?.metadata, {
    service_with_quota: { name: "service_2", weight: 3, ratio: 0.5 },
    tags: ["a", 1, { enabled: true }],
    nothing: null,
  });
});

t.test("metadata: a UTF-8 `!!binary` value is the string of its bytes, as yaml.v2 decodes it", async (t) => {
  const [descriptor] = parseFixture("metadata-binary-utf8.yaml").descriptors;
  t.strictSame(descriptor?.metadata, { greeting: "hello" });
});
