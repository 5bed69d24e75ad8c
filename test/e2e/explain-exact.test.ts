// Explain is exact (issue 17, spec extensions §E5), the reference's rule features: for every request of
// every scenario (test/e2e/explain-exact-scenarios.ts), POST /explain first, then the real decision through
// /json; the explained overall code and statuses equal the decision's, the explained rule is the expected
// full key, and /stats and the counters did not move during the explain. On memory, Redis and memcached.
import t from "tap";
import { requireBinaries } from "../helpers/redis-servers.js";
import { onMemcached, onMemory, onRedis } from "./explain-exact-daemons.js";
import { REFERENCE_RULES, REFERENCE_SCENARIOS } from "./explain-exact-scenarios.js";

t.test("memory backend", (t) => onMemory(t, REFERENCE_RULES, REFERENCE_SCENARIOS));

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("Redis", (t) => onRedis(t, REFERENCE_RULES, REFERENCE_SCENARIOS));
}

if (requireBinaries(t, ["memcached"])) {
  t.test("memcached", (t) => onMemcached(t, REFERENCE_RULES, REFERENCE_SCENARIOS));
}
