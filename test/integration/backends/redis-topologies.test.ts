// Redis topologies beyond the contract (docs/backends.md "Redis"): a cluster request spanning slots, a sentinel
// failover in the middle of traffic, and REDIS_PERSECOND routing.
import t from "tap";
import type { CounterIncrement } from "../../../src/engine/counter-store.js";
import { startCluster } from "../../helpers/redis-cluster.js";
import { startSentinelGroup } from "../../helpers/redis-sentinel.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";

const inc = (key: string, hits = 1, perSecond = false): CounterIncrement => ({
  key,
  hits,
  ttlSeconds: 60,
  perSecond,
});

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("cluster: one request whose keys land in different slots on different primaries", async (t) => {
    const cluster = await startCluster(t);
    // {user} hashes to slot 5474 and {tenant} to 14419: different primaries of three.
    const keys = ["{user}_rl_a", "{tenant}_rl_b", "{user}_rl_c"];
    const owners = await Promise.all(
      keys.map((k) => cluster.cli(cluster.nodes[0]!.port, "CLUSTER", "KEYSLOT", k)),
    );
    t.strictSame(owners, ["5474", "14419", "5474"]);
    for (const [run, parallelism] of ["1", "0", "8"].entries()) {
      const { store } = await redisStoreFrom(t, {
        REDIS_TYPE: "cluster",
        REDIS_URL: cluster.url,
        REDIS_CLUSTER_PIPELINE_PARALLELISM: parallelism,
      });
      const expected = keys.map((_, i) => (i + 1) * (run + 1));
      t.strictSame(
        await store.increment(keys.map((k, i) => inc(k, i + 1))),
        expected,
        `parallelism ${parallelism}`,
      );
    }
    t.equal(await cluster.cli(cluster.nodes[0]!.port, "-c", "GET", "{tenant}_rl_b"), "6");
    t.equal(await cluster.cli(cluster.nodes[0]!.port, "-c", "GET", "{user}_rl_c"), "9");
  });

  t.test("sentinel: decisions continue after a failover elects a new primary", async (t) => {
    const group = await startSentinelGroup(t);
    const { store } = await redisStoreFrom(t, {
      REDIS_TYPE: "sentinel",
      REDIS_URL: group.sentinelUrl,
      REDIS_TIMEOUT: "1s",
    });
    t.strictSame(await store.increment([inc("failover_key", 5)]), [5]);
    await group.replica.cli("WAIT", "1", "1000").catch(() => "");
    const primary = await group.failover();
    t.not(primary.port, group.primary.port, "a new primary");
    const deadline = Date.now() + 30_000;
    let value: number | undefined;
    let failures = 0;
    while (Date.now() < deadline) {
      try {
        value = (await store.increment([inc("failover_key")]))[0];
        break;
      } catch {
        failures++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    t.ok(value !== undefined, `served again after ${failures} failed attempts`);
    t.ok(value === 6 || value === 1, `counter continues on the new primary (${value})`);
    t.equal(await group.replica.cli("GET", "failover_key"), String(value), "written to the promoted replica");
  });

  t.test("REDIS_PERSECOND: SECOND-unit counters go to the per-second instance", async (t) => {
    const main = await startRedis(t);
    const perSecond = await startRedis(t, { password: "ps" });
    const { store } = await redisStoreFrom(t, {
      REDIS_URL: main.url,
      REDIS_PERSECOND: "true",
      REDIS_PERSECOND_SOCKET_TYPE: "tcp",
      REDIS_PERSECOND_URL: perSecond.url,
      REDIS_PERSECOND_AUTH: "ps",
    });
    t.strictSame(
      await store.increment([inc("minute_key", 2), inc("second_key", 3, true), inc("minute_key", 1)]),
      [2, 3, 3],
    );
    t.strictSame(await store.increment([inc("second_key", 1, true)]), [4], "all per-second");
    t.equal(await main.cli("GET", "minute_key"), "3");
    t.equal(await main.cli("EXISTS", "second_key"), "0");
    t.equal(await perSecond.cli("GET", "second_key"), "4");
    t.equal(await perSecond.cli("EXISTS", "minute_key"), "0");
  });
}
