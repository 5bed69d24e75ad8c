/**
 * Counter keys of every algorithm: the first limit of a one-unit window keeps the reference's key; windows
 * of N units, later limits of a `rate_limits` list and token buckets are told apart by suffixes that no
 * reference key can end with.
 */
import t from "tap";
import { baseKeyFor, bucketKeyFor, windowKeyFor } from "../../../../src/engine/algorithms/limit-keys.js";
import { cacheKeyFor, windowStart } from "../../../../src/engine/cache-key.js";
import type { DecisionEntry } from "../../../../src/engine/decision-request.js";

const ENTRIES: DecisionEntry[] = [
  { key: "key2", value: "value2" },
  { key: "subkey2", value: "subvalue2" },
];
const BASE = "prefix:domain_key2_value2_subkey2_subvalue2_";
// The reference's key shape: `…_<window start>`.
const REFERENCE_KEY = /_\d+$/;

t.test("the base key is the reference's cache key without its window start", async (t) => {
  t.equal(baseKeyFor("prefix:", "domain", ENTRIES, undefined), BASE);
  t.equal(cacheKeyFor("prefix:", "domain", ENTRIES, undefined, 1200), `${BASE}1200`);
  t.equal(baseKeyFor("", "d", [{ key: "k", value: "" }], undefined), "d_k__", "empty value → key__");
  t.equal(
    baseKeyFor("", "d", [{ key: "path", value: "/a/1" }], ["/a/*"]),
    "d_path_/a/*_",
    "a share_threshold pattern replaces the value",
  );
});

t.test("window keys: multiplier 1 and limit 0 → the reference key, byte for byte", async (t) => {
  t.equal(windowKeyFor(BASE, 1200, 1, 0), `${BASE}1200`);
  t.equal(
    windowKeyFor(BASE, 1200, 1, 0),
    cacheKeyFor("prefix:", "domain", ENTRIES, undefined, windowStart(1234, 60)),
  );
});

t.test("window keys: 5 units → _x5; limit index 1 → _l1; both → _x5_l1", async (t) => {
  t.equal(windowKeyFor(BASE, 1200, 5, 0), `${BASE}1200_x5`);
  t.equal(windowKeyFor(BASE, 1200, 1, 1), `${BASE}1200_l1`);
  t.equal(windowKeyFor(BASE, 1200, 5, 1), `${BASE}1200_x5_l1`);
  t.equal(windowKeyFor(BASE, 1200, 1, 12), `${BASE}1200_l12`);
});

t.test("bucket keys: gcra + String(T µs), then _l<i>", async (t) => {
  t.equal(bucketKeyFor(BASE, 1_000_000 / 3, 0), `${BASE}gcra333333.3333333333`);
  t.equal(bucketKeyFor(BASE, 100_000, 0), `${BASE}gcra100000`);
  t.equal(bucketKeyFor(BASE, (3600 * 1_000_000) / 7, 2), `${BASE}gcra514285714.28571427_l2`);
});

t.test("no extension key has the reference's shape", async (t) => {
  const keys = [
    windowKeyFor(BASE, 1200, 5, 0),
    windowKeyFor(BASE, 1200, 1, 1),
    windowKeyFor(BASE, 1200, 2, 3),
    bucketKeyFor(BASE, 100_000, 0),
    bucketKeyFor(BASE, 100_000, 1),
    bucketKeyFor(BASE, 1_000_000 / 3, 0),
  ];
  for (const key of keys) t.notMatch(key, REFERENCE_KEY, key);
  t.match(windowKeyFor(BASE, 1200, 1, 0), REFERENCE_KEY);
});
