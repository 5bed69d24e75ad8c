// MEMCACHE_SRV (docs/backends.md "Memcached"): the nodes come from a DNS SRV lookup, sorted as the reference
// sorts them, and MEMCACHE_SRV_REFRESH looks again. The system resolver of this test process is pointed at a
// stub DNS server on loopback, so the store is built exactly as the daemon builds it.
import { promises as dns } from "node:dns";
import t, { type Test } from "tap";
import { type DnsStub, startDnsStub } from "../../helpers/dns-stub.js";
import { type MemcachedServer, requireBinaries, startMemcached } from "../../helpers/memcached-process.js";
import { memcachedStoreFrom } from "../../helpers/memcached-store-fixture.js";
import { pollUntil } from "../../helpers/redis-process.js";

const inc = (key: string, hits: number) => ({ key, hits, ttlSeconds: 60, perSecond: false });
const SRV = "_memcache._tcp.ratelimit.test";

if (requireBinaries(t, ["memcached"])) {
  let stub: DnsStub;
  const systemServers = dns.getServers();
  t.before(async () => {
    stub = await startDnsStub();
    dns.setServers([`127.0.0.1:${stub.port}`]);
  });
  t.teardown(async () => {
    dns.setServers(systemServers);
    await stub.close();
  });

  /** Two memcached nodes, with the one whose `localhost.:<port>` label sorts first as `first`. */
  const twoNodes = async (t: Test): Promise<[MemcachedServer, MemcachedServer]> => {
    const a = await startMemcached(t);
    const b = await startMemcached(t);
    return `localhost.:${a.port}` < `localhost.:${b.port}` ? [a, b] : [b, a];
  };

  t.test("nodes from SRV, sorted by target:port whatever the answer order, and used as listed", async (t) => {
    const [first, second] = await twoNodes(t);
    stub.setSrv(SRV, [
      { target: "localhost", port: second.port, priority: 1 },
      { target: "localhost", port: first.port, priority: 2 },
    ]);
    const { store } = await memcachedStoreFrom(t, { MEMCACHE_SRV: SRV });
    t.strictSame(store.nodeLabels, [`localhost.:${first.port}`, `localhost.:${second.port}`]);
    // crc32 mod 2: alpha → the first node, bravo → the second (as with MEMCACHE_HOST_PORT).
    t.strictSame(await store.increment([inc("alpha", 2), inc("bravo", 3)]), [2, 3]);
    await store.settle();
    t.strictSame(await first.keys(), ["alpha"]);
    t.strictSame(await second.keys(), ["bravo"]);
  });

  t.test("a refresh replaces the list; a failed refresh keeps it", async (t) => {
    const [first, second] = await twoNodes(t);
    const name = "_mc._tcp.refresh.ratelimit.test";
    stub.setSrv(name, [{ target: "localhost", port: first.port }]);
    const { store, logs } = await memcachedStoreFrom(t, { ALTCACHE_SRV: name });
    t.strictSame(store.nodeLabels, [`localhost.:${first.port}`]);
    stub.setSrv(name, [
      { target: "localhost", port: first.port },
      { target: "localhost", port: second.port },
    ]);
    await store.refreshNodes();
    t.strictSame(store.nodeLabels, [`localhost.:${first.port}`, `localhost.:${second.port}`]);
    t.equal(
      logs.at(-1),
      `info: memcache nodes from SRV ${name}: localhost.:${first.port},localhost.:${second.port}`,
    );
    t.strictSame(await store.increment([inc("alpha", 1), inc("bravo", 1)]), [1, 1]);
    await store.settle();
    t.strictSame(await second.keys(), ["bravo"], "the new node is used");
    stub.setSrv(name, []);
    await t.rejects(store.refreshNodes(), { code: "ENODATA" });
    t.strictSame(store.nodeLabels, [`localhost.:${first.port}`, `localhost.:${second.port}`], "kept");
  });

  t.test("MEMCACHE_SRV_REFRESH looks the name up again periodically", async (t) => {
    const server = await startMemcached(t);
    const name = "_mc._tcp.periodic.ratelimit.test";
    stub.setSrv(name, [{ target: "localhost", port: server.port }]);
    const { store } = await memcachedStoreFrom(t, { MEMCACHE_SRV: name, MEMCACHE_SRV_REFRESH: "50ms" });
    const startQueries = stub.queries(name);
    await pollUntil(
      "two more lookups",
      async () => (stub.queries(name) >= startQueries + 2 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    t.strictSame(store.nodeLabels, [`localhost.:${server.port}`]);
    await store.close();
    const afterClose = stub.queries(name);
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.equal(stub.queries(name), afterClose, "no lookups once closed");
  });

  t.test("start-up retries an SRV name that does not resolve yet", async (t) => {
    const server = await startMemcached(t);
    const name = "_mc._tcp.late.ratelimit.test";
    const { store, logs } = await memcachedStoreFrom(t, { MEMCACHE_SRV: name }, { start: false });
    const starting = store.start();
    await pollUntil("a retry logged", async () => (logs.length > 0 ? true : undefined), { timeoutMs: 5000 });
    t.match(
      logs[0],
      new RegExp(
        `^warning: Retrying memcache connection to SRV ${name.replaceAll(".", "\\.")} \\(\\) in \\d+ms \\(elapsed: \\d+ms\\): .*ENOTFOUND`,
      ),
    );
    stub.setSrv(name, [{ target: "localhost", port: server.port }]);
    await starting;
    t.strictSame(await store.increment([inc("late", 1)]), [1]);
  });
}
