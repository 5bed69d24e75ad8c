/**
 * share_threshold (the reference's src/config/config_impl.go and src/limiter/cache_key.go): the wildcard's
 * value part replaces the request value in the cache key, so every matching value shares one counter.
 */
import t from "tap";
import { cacheKeyFor } from "../../../src/engine/cache-key.js";
import { cacheKeysAt, entriesOf, rulesFrom } from "./matching-fixtures.js";

const rules = rulesFrom(`
domain: domain
descriptors:
  - key: files
    value: "files/*"
    share_threshold: true
    rate_limit: { unit: second, requests_per_unit: 100 }
  - key: parent
    value: value1
    descriptors:
      - key: files
        value: "nested/*"
        share_threshold: true
        rate_limit: { unit: second, requests_per_unit: 200 }
  - key: files
    value: "top/*"
    share_threshold: true
    descriptors:
      - key: files
        value: "nested/*"
        share_threshold: true
        rate_limit: { unit: second, requests_per_unit: 300 }
  - key: path
    value: "path/*"
    share_threshold: true
    descriptors:
      - key: file
        value: "file/*"
        descriptors:
          - key: type
            rate_limit: { unit: second, requests_per_unit: 120 }
  - key: file
    value: test1
    rate_limit: { unit: second, requests_per_unit: 50 }
  - key: file
    value: "test*"
    share_threshold: true
    rate_limit: { unit: second, requests_per_unit: 100 }
  - key: midpath
    value: "/api*v1"
    share_threshold: true
    rate_limit: { unit: second, requests_per_unit: 100 }
  - key: multiroute
    value: "svc*ep*rpc"
    share_threshold: true
    rate_limit: { unit: second, requests_per_unit: 50 }
  - key: plain
    value: "p*"
    rate_limit: { unit: second, requests_per_unit: 10 }
`);

// The reference's example `domain_files_files/*_1234`.
t.test("top-level share: domain_files_files/*_1234, one key for all values", async (t) => {
  t.same(cacheKeysAt(rules, 1234, ["files=files/a.pdf"], ["files=files/b.csv"]), [
    "domain_files_files/*_1234",
    "domain_files_files/*_1234",
  ]);
  t.same(rules.match("files=files/a.pdf")?.sharePatterns, ["files/*"]);
  t.equal(
    cacheKeyFor("", "domain", entriesOf("files=files/a.pdf"), ["files/*"], 1234),
    "domain_files_files/*_1234",
    "cacheKeyFor replaces the value at the pattern's index",
  );
});

// The reference's example `domain_parent_value1_files_nested/*_1234`: only the sharing index is replaced.
t.test("nested share: domain_parent_value1_files_nested/*_1234", async (t) => {
  t.same(
    cacheKeysAt(rules, 1234, ["parent=value1", "files=nested/x"], ["parent=value1", "files=nested/y/z"]),
    ["domain_parent_value1_files_nested/*_1234", "domain_parent_value1_files_nested/*_1234"],
  );
  t.same(rules.match("parent=value1", "files=nested/x")?.sharePatterns, [undefined, "nested/*"]);
});

// Patterns are recorded per entry index, also for a wildcard level without a rate_limit.
t.test("same key at two levels, both sharing", async (t) => {
  t.same(cacheKeysAt(rules, 1234, ["files=top/1", "files=nested/2"], ["files=top/3", "files=nested/4"]), [
    "domain_files_top/*_files_nested/*_1234",
    "domain_files_top/*_files_nested/*_1234",
  ]);
});

// A wildcard level without share_threshold keeps the runtime value.
t.test("mixed levels: only sharing entries are replaced", async (t) => {
  t.same(
    cacheKeysAt(
      rules,
      1234,
      ["path=path/a", "file=file/b", "type=jpg"],
      ["path=path/c", "file=file/d", "type=jpg"],
    ),
    ["domain_path_path/*_file_file/b_type_jpg_1234", "domain_path_path/*_file_file/d_type_jpg_1234"],
  );
});

// An exact match is tried before wildcards: an exact value is not shared.
t.test("exact value beats the sharing wildcard", async (t) => {
  t.same(cacheKeysAt(rules, 1234, ["file=test1"], ["file=test2"], ["file=test3"]), [
    "domain_file_test1_1234",
    "domain_file_test*_1234",
    "domain_file_test*_1234",
  ]);
  t.equal(rules.match("file=test1")?.sharePatterns, undefined);
});

// Middle (e.g. `t*prod`) and multiple wildcards share too.
t.test("middle and multiple wildcard patterns are shared", async (t) => {
  t.same(cacheKeysAt(rules, 1234, ["midpath=/api/users/v1"], ["midpath=/apiv1"]), [
    "domain_midpath_/api*v1_1234",
    "domain_midpath_/api*v1_1234",
  ]);
  t.same(cacheKeysAt(rules, 1234, ["multiroute=svcAepBrpc"], ["multiroute=svc-ep-rpc"]), [
    "domain_multiroute_svc*ep*rpc_1234",
    "domain_multiroute_svc*ep*rpc_1234",
  ]);
});

// Without share_threshold each distinct runtime value has its own counter (but the same stats key).
t.test("without share_threshold each value has its own counter", async (t) => {
  t.same(cacheKeysAt(rules, 1234, ["plain=p1"], ["plain=p2"]), [
    "domain_plain_p1_1234",
    "domain_plain_p2_1234",
  ]);
  t.equal(rules.match("plain=p1")?.stats.key, "domain.plain_p*");
  t.equal(rules.match("plain=p2")?.stats.key, "domain.plain_p*");
  t.equal(rules.match("plain=p1")?.sharePatterns, undefined);
});

// The window still comes last, per unit.
t.test("shared keys still roll over per window", async (t) => {
  t.same(cacheKeysAt(rules, 1235, ["files=files/a"]), ["domain_files_files/*_1235"]);
});
