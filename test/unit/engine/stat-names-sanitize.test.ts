/**
 * Stat-name sanitising (the reference's src/utils/utilities.go): `:` and `|` become `_`, the dots of every
 * IPv4-looking substring become `_`, every other character is kept. Stats only, never cache keys.
 */
import t from "tap";
import { sanitizeStatName } from "../../../src/engine/stat-names.js";
import { cacheKeysAt, rulesFrom } from "./matching-fixtures.js";

// `:` and `|` → `_`.
t.test("colons and pipes become underscores", async (t) => {
  t.equal(sanitizeStatName("d.k_a:b"), "d.k_a_b");
  t.equal(sanitizeStatName("d.k_a|b|c"), "d.k_a_b_c");
  t.equal(sanitizeStatName("d.k_::||"), "d.k_____");
  t.equal(sanitizeStatName("d.header_x-id:42|y"), "d.header_x-id_42_y");
});

// `\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}` has its dots replaced.
t.test("IPv4-looking substrings lose their dots", async (t) => {
  t.equal(sanitizeStatName("d.remote_address_10.0.0.1"), "d.remote_address_10_0_0_1");
  t.equal(sanitizeStatName("d.remote_address_192.168.100.254.path"), "d.remote_address_192_168_100_254.path");
  t.equal(sanitizeStatName("d.a_1.2.3.4.b_5.6.7.8"), "d.a_1_2_3_4.b_5_6_7_8", "every occurrence");
  t.equal(sanitizeStatName("d.ip_999.999.999.999"), "d.ip_999_999_999_999", "looks like, need not be valid");
  t.equal(sanitizeStatName("d.peer_10.0.0.1:8080"), "d.peer_10_0_0_1_8080", "both rules together");
});

// Only the IPv4 shape is rewritten; the dots separating levels stay.
t.test("other dots are kept", async (t) => {
  t.equal(sanitizeStatName("domain.key_value.subkey"), "domain.key_value.subkey");
  t.equal(sanitizeStatName("d.version_1.2.3"), "d.version_1.2.3", "three groups are not an address");
  t.equal(sanitizeStatName("d.ratio_0.8"), "d.ratio_0.8");
  t.equal(sanitizeStatName("d.ip_10.0.a.1"), "d.ip_10.0.a.1", "a letter breaks the shape");
  t.equal(sanitizeStatName("d.host_example.com"), "d.host_example.com");
  t.equal(sanitizeStatName(""), "");
});

// Stats only: cache keys have no escaping.
t.test("cache keys are not sanitised", async (t) => {
  const rules = rulesFrom(`
domain: d
descriptors:
  - key: remote_address
    rate_limit: { unit: second, requests_per_unit: 1 }
`);
  t.same(cacheKeysAt(rules, 1234, ["remote_address=10.0.0.1:80|x"]), ["d_remote_address_10.0.0.1:80|x_1234"]);
});
