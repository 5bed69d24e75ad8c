// Explain is exact (issue 17, spec extensions §E5) for the extensions: each algorithm, unit_multiplier,
// stacked rate_limits (test/e2e/explain-exact-extension-scenarios.ts), on memory and on Redis — the same
// checks as test/e2e/explain-exact.test.ts.
import t from "tap";
import { requireBinaries } from "../helpers/redis-servers.js";
import { onMemory, onRedis } from "./explain-exact-daemons.js";
import { EXTENSION_RULES, EXTENSION_SCENARIOS } from "./explain-exact-extension-scenarios.js";

t.test("memory backend", (t) => onMemory(t, EXTENSION_RULES, EXTENSION_SCENARIOS));

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("Redis", (t) => onRedis(t, EXTENSION_RULES, EXTENSION_SCENARIOS));
}
