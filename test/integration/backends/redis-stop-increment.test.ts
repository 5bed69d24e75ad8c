// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT on Redis (the reference's src/redis/fixed_cache_impl.go): the
// reference's integration example, key2 20/min + key3 10/h in one request, through RateLimitService and a
// real Redis.
import t from "tap";
import { CODE_OK, CODE_OVER_LIMIT } from "../../../src/engine/decision-request.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { entries, newService, request, TestClock } from "../../unit/engine/decision-fixture.js";

const YAML = `domain: d
descriptors:
  - key: key2
    rate_limit: {unit: minute, requests_per_unit: 20}
  - key: key3
    rate_limit: {unit: hour, requests_per_unit: 10}
`;
const REQUEST = request("d", [entries(["key2", "value2"]), entries(["key3", "value3"])]);

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("from the 11th request key3 is OVER and key2's counter stops at 10", async (t) => {
    const server = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: server.url });
    const { service } = newService(YAML, new TestClock(7200_000), {
      stopIncrementWhenOverLimit: true,
      store,
    });
    for (let i = 1; i <= 10; i++) {
      const decision = await service.shouldRateLimit(REQUEST);
      t.equal(decision.overallCode, CODE_OK, `request ${i}`);
    }
    for (let i = 11; i <= 15; i++) {
      const decision = await service.shouldRateLimit(REQUEST);
      t.equal(decision.overallCode, CODE_OVER_LIMIT, `request ${i}`);
      t.strictSame(
        decision.statuses.map((s) => [s.code, s.limitRemaining]),
        [
          [CODE_OK, 10],
          [CODE_OVER_LIMIT, 0],
        ],
        `request ${i}: key2 stays at 10 remaining`,
      );
    }
    t.match(
      await server.cli("INFO", "commandstats"),
      /^cmdstat_get:calls=30,/m,
      "a GET per key before each request",
    );
    t.equal(await server.cli("GET", "d_key2_value2_7200"), "10", "key2 stopped counting");
    t.equal(await server.cli("GET", "d_key3_value3_7200"), "15", "key3 kept counting");
  });
}
