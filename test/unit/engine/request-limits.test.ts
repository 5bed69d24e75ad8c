// MAX_DESCRIPTORS_PER_REQUEST, MAX_ENTRIES_PER_DESCRIPTOR and MAX_DESCRIPTOR_ENTRY_BYTES in the engine: exact
// texts, the boundaries, UTF-8 byte counting, and nothing counted for a refused request.
import t from "tap";
import {
  checkRequestLimits,
  DEFAULT_REQUEST_LIMITS,
  longerThan,
  type RequestLimits,
} from "../../../src/engine/request-limits.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import {
  CLOCK_SECONDS,
  entries,
  newEngine,
  newRegistry,
  request,
  rulesFromYaml,
  statValues,
} from "./decision-fixture.js";

const LIMITS: RequestLimits = { maxDescriptors: 3, maxEntries: 2, maxEntryBytes: 6 };
const one = (key = "k", value = "v") => entries([key, value]);

function refusal(fn: () => void): { name: string; code: string; message: string } | undefined {
  try {
    fn();
  } catch (error) {
    const e = error as InvalidArgumentError;
    return { name: e.name, code: e.code, message: e.message };
  }
  return undefined;
}

t.test("the defaults are 256 descriptors, 64 entries and 8 KiB", async (t) => {
  t.strictSame({ ...DEFAULT_REQUEST_LIMITS }, { maxDescriptors: 256, maxEntries: 64, maxEntryBytes: 8192 });
});

t.test("requests at every limit pass; one more of anything is refused with its text", async (t) => {
  const atLimits = request("domain", [one(), one(), entries(["kkkkkk", "vvvvvv"], ["k", ""])]);
  t.equal(
    refusal(() => checkRequestLimits(atLimits, LIMITS)),
    undefined,
  );
  const cases: [string, ReturnType<typeof request>, string][] = [
    [
      "4 descriptors",
      request("d", [one(), one(), one(), one()]),
      "rate limit request has more than 3 descriptors",
    ],
    [
      "3 entries",
      request("d", [one(), entries(["a", ""], ["b", ""], ["c", ""])]),
      "descriptor 1 has more than 2 entries",
    ],
    [
      "7-byte key",
      request("d", [one(), one("k", "v"), entries(["k", "v"], ["kkkkkkk", "v"])]),
      "descriptor 2 entry 1: key is longer than 6 bytes",
    ],
    [
      "7-byte value",
      request("d", [one("k", "vvvvvvv")]),
      "descriptor 0 entry 0: value is longer than 6 bytes",
    ],
    ["7-byte domain", request("domains", [one()]), "rate limit domain is longer than 6 bytes"],
    [
      "multi-byte value",
      request("d", [one("k", "värden")]),
      "descriptor 0 entry 0: value is longer than 6 bytes",
    ],
  ];
  for (const [name, req, message] of cases) {
    t.strictSame(
      refusal(() => checkRequestLimits(req, LIMITS)),
      { name: "InvalidArgumentError", code: "invalid_argument", message },
      name,
    );
  }
});

t.test("lengths are UTF-8 bytes, as on the wire", async (t) => {
  const texts = [
    "",
    "a",
    "ab",
    "é",
    "éé",
    "路",
    "路a",
    "😀",
    "a😀",
    "\ud800",
    "\ud800a",
    "\udc00\ud800",
    "aaé",
    "路路",
  ];
  for (const text of texts) {
    for (let max = 0; max <= 7; max++) {
      t.equal(longerThan(text, max), Buffer.byteLength(text) > max, `${JSON.stringify(text)} against ${max}`);
    }
  }
  t.equal(longerThan("x".repeat(8192), 8192), false);
  t.equal(longerThan("x".repeat(8193), 8192), true);
  t.equal(longerThan(`${"x".repeat(8191)}é`, 8192), true, "8191 + 2 bytes");
  t.equal(longerThan(`${"x".repeat(8190)}é`, 8192), false, "8190 + 2 bytes");
});

t.test("the engine refuses before anything is counted, even domain_not_found", async (t) => {
  const registry = newRegistry();
  const rules = rulesFromYaml(
    registry,
    "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 10}\n",
  );
  const engine = newEngine(registry, { requestLimits: LIMITS });
  const before = statValues(registry);
  for (const req of [
    request("d", [one(), one(), one(), one()]),
    request("d", [one("k", "v"), one("k", "vvvvvvv")]),
    request("unknown", [one(), entries(["a", ""], ["b", ""], ["c", ""])]),
  ]) {
    t.throws(() => engine.plan(rules, req, CLOCK_SECONDS), InvalidArgumentError);
  }
  t.strictSame(statValues(registry), before);
  t.equal(engine.plan(rules, request("d", [one(), one(), one()]), CLOCK_SECONDS).increments.length, 3);
});

t.test(
  "the reference's own checks come first; limits come before `no rate limit configuration loaded`",
  async (t) => {
    const engine = newEngine(newRegistry(), { requestLimits: LIMITS });
    t.throws(() => engine.plan(undefined, request("", [one("k", "vvvvvvv")]), CLOCK_SECONDS), {
      message: "rate limit domain must not be empty",
    });
    t.throws(() => engine.plan(undefined, request("d", [one("k", "vvvvvvv")]), CLOCK_SECONDS), {
      message: "descriptor 0 entry 0: value is longer than 6 bytes",
    });
  },
);

t.test("an engine without requestLimits applies the defaults", async (t) => {
  const registry = newRegistry();
  const rules = rulesFromYaml(
    registry,
    "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 10}\n",
  );
  const engine = newEngine(registry);
  const many = request(
    "d",
    Array.from({ length: 257 }, () => one()),
  );
  t.throws(() => engine.plan(rules, many, CLOCK_SECONDS), {
    message: "rate limit request has more than 256 descriptors",
  });
  const long = request("d", [one("k", "v".repeat(8193))]);
  t.throws(() => engine.plan(rules, long, CLOCK_SECONDS), {
    message: "descriptor 0 entry 0: value is longer than 8192 bytes",
  });
  t.equal(engine.plan(rules, request("d", [one("k", "v".repeat(8192))]), CLOCK_SECONDS).increments.length, 1);
});
