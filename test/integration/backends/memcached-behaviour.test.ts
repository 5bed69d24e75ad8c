// BACKEND_TYPE=memcache beyond the contract, on real memcached processes (docs/backends.md "Memcached"):
// sharding over several nodes as gomemcache shards, the reference's commands and stats, refused keys, failing
// open when a node dies or hangs, and expiry times past 30 days.
import t from "tap";
import { MemcachedStore } from "../../../src/backends/memcached/memcached-store.js";
import type { SettingsError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/observability/logger.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { ThrottledLog } from "../../../src/observability/throttled-log.js";
import { loadSettings } from "../../../src/settings/load-settings.js";
import { freePort } from "../../helpers/free-port.js";
import { type MemcachedServer, requireBinaries, startMemcached } from "../../helpers/memcached-process.js";
import { memcachedStoreFrom } from "../../helpers/memcached-store-fixture.js";
import { pollUntil } from "../../helpers/redis-process.js";

const inc = (key: string, hits: number, ttlSeconds = 60) => ({ key, hits, ttlSeconds, perSecond: false });
let unique = 0;
const fresh = (label: string) => `mc_${process.pid}_${Date.now()}_${++unique}_${label}`;

if (requireBinaries(t, ["memcached"])) {
  t.test(
    "two nodes: keys placed as gomemcache places them, and replicas given one list share counters",
    async (t) => {
      const [a, b] = [await startMemcached(t), await startMemcached(t)];
      const list = `${a.url},${b.url}`;
      const first = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: list });
      const second = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: list });
      // crc32 (IEEE) mod 2, computed independently: alpha 3504355690, bravo 161200265, charlie 1859863974,
      // delta 2521038553, echo 386150450, foxtrot 1127217560.
      const keys = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
      t.strictSame(await first.store.increment(keys.map((k) => inc(k, 1))), [1, 1, 1, 1, 1, 1]);
      await first.store.settle();
      t.strictSame(
        await second.store.increment(keys.map((k) => inc(k, 2))),
        [3, 3, 3, 3, 3, 3],
        "same counters",
      );
      await second.store.settle();
      const on = async (server: MemcachedServer) => (await server.keys()).sort();
      t.strictSame(await on(a), ["alpha", "charlie", "echo", "foxtrot"]);
      t.strictSame(await on(b), ["bravo", "delta"]);
      t.equal(await a.valueOf("alpha"), "3");
      t.equal(await b.valueOf("bravo"), "3");
      const reversed = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: `${b.url},${a.url}` });
      t.strictSame(
        await reversed.store.read([inc("alpha", 0), inc("bravo", 0)]),
        [0, 0],
        "another order, other nodes",
      );
    },
  );

  t.test("sequential requests to one replica are answered as Redis answers them", async (t) => {
    const server = await startMemcached(t);
    const { store } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url });
    const key = fresh("sequential");
    const answers: number[] = [];
    for (let i = 0; i < 20; i++) answers.push(...(await store.increment([inc(key, 1)])));
    t.strictSame(
      answers,
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    const other = fresh("twice");
    t.strictSame(
      await store.increment([inc(other, 2), inc(key, 1), inc(other, 3)]),
      [2, 21, 5],
      "one request",
    );
    await store.settle();
    t.equal(await server.valueOf(other), "5");
    t.equal(await server.valueOf(key), "21");
  });

  t.test("the reference's commands and stats: increment, add with the TTL on a miss", async (t) => {
    const server = await startMemcached(t);
    const { store, stat } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url });
    const key = fresh("commands");
    const before = await server.stats();
    t.strictSame(await store.increment([inc(key, 3, 120)]), [3]);
    await store.settle();
    const created = await server.stats();
    t.equal(created.cmd_get! - before.cmd_get!, 1, "one get");
    t.equal(created.incr_misses! - before.incr_misses!, 1, "increment missed");
    t.equal(created.cmd_set! - before.cmd_set!, 1, "then one add");
    t.equal(await server.valueOf(key), "3", "added with the hits");
    t.ok((await server.ttlOf(key)) > 115, "and the TTL");
    t.strictSame(await store.increment([inc(key, 2, 120), inc(key, 0, 120)]), [5, 5]);
    await store.settle();
    const counted = await server.stats();
    t.equal(counted.incr_hits! - created.incr_hits!, 2, "two increments, one per descriptor");
    t.equal(counted.cmd_set!, created.cmd_set!, "no add");
    t.equal(await server.valueOf(key), "5");
    t.strictSame(
      [stat("multiget", "success"), stat("multiget", "error"), stat("keys_requested"), stat("keys_found")],
      [2, 0, 3, 1],
    );
    t.strictSame(
      [stat("increment", "success"), stat("increment", "miss"), stat("increment", "error")],
      [2, 1, 0],
    );
    t.strictSame([stat("add", "success"), stat("add", "not_stored"), stat("add", "error")], [1, 0, 0]);
  });

  t.test("two replicas counting one new key at once never lose a hit once settled", async (t) => {
    const server = await startMemcached(t);
    const replicas = [
      await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url }),
      await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url }),
    ];
    const key = fresh("race");
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => replicas[i % 2]!.store.increment([inc(key, 1)])),
    );
    t.ok(
      answers.every(([v]) => v! >= 1 && v! <= 200),
      "each answer within 1…200",
    );
    await Promise.all(replicas.map((r) => r.store.settle()));
    t.equal(await server.valueOf(key), "200");
    const sum = (name: string, code: string) => replicas.reduce((n, r) => n + r.stat(name, code), 0);
    t.equal(sum("add", "success"), 1, "exactly one add created the key");
    t.equal(
      sum("add", "not_stored"),
      sum("increment", "miss") - 1,
      "every other add lost and incremented again",
    );
    t.equal(sum("increment", "error") + sum("add", "error"), 0);
  });

  t.test("keys memcached cannot take are refused with a clear error, never sent", async (t) => {
    const server = await startMemcached(t);
    const { store } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url });
    const before = await server.stats();
    const refused: [string, string][] = [
      [
        "k".repeat(251),
        `cache key "${"k".repeat(80)}…" is 251 bytes long; memcached keys are at most 250 bytes`,
      ],
      [
        "é".repeat(126),
        `cache key "${"é".repeat(80)}…" is 252 bytes long; memcached keys are at most 250 bytes`,
      ],
      [
        "has space",
        'cache key "has space" contains a space at offset 3, which memcached keys cannot contain',
      ],
      [
        "line\nbreak",
        'cache key "line\\nbreak" contains control character 0x0a at offset 4, which memcached keys cannot contain',
      ],
      [
        "del\u007f",
        'cache key "del\u007f" contains control character 0x7f at offset 3, which memcached keys cannot contain',
      ],
    ];
    for (const [key, message] of refused) {
      await t.rejects(store.increment([inc("fine", 1), inc(key, 1)]), {
        name: "InvalidArgumentError",
        code: "invalid_argument",
        message,
      });
      await t.rejects(store.read([inc(key, 1)]), { message });
    }
    await store.settle();
    const after = await server.stats();
    t.equal(after.cmd_get, before.cmd_get, "nothing read");
    t.equal(after.curr_items, 0, "nothing written, not even the request's valid key");
    const longest = "k".repeat(250);
    const utf8 = "é".repeat(125);
    t.strictSame(await store.increment([inc(longest, 1), inc(utf8, 2)]), [1, 2], "250 bytes are fine");
    await store.settle();
    t.equal(await server.valueOf(longest), "1");
  });

  t.test("a value that is not a number reads as 0, as in the reference, and is logged", async (t) => {
    const server = await startMemcached(t);
    const { store, logs, stat } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url });
    t.equal(await server.command("set garbage 0 60 3\r\nabc"), "STORED\r\n");
    t.strictSame(await store.increment([inc("garbage", 1)]), [1]);
    await store.settle();
    t.strictSame(logs, [
      'error: Unexpected non-numeric value in memcached: "abc"',
      `error: Failed to increment key garbage: memcache ${server.url}: increment failed: incr/decr on a non-numeric value`,
    ]);
    t.equal(stat("increment", "error"), 1);
  });

  t.test(
    "a node killed mid-test: its keys fail open at once, the other node counts on, then it is back",
    async (t) => {
      const [a, b] = [await startMemcached(t), await startMemcached(t)];
      const { store, logs, stat } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: `${a.url},${b.url}` });
      // alpha lives on a, bravo on b (see the placement test).
      t.strictSame(await store.increment([inc("alpha", 1), inc("bravo", 1)]), [1, 1]);
      await store.settle();
      await b.kill();
      const started = performance.now();
      const during: number[][] = [];
      for (let i = 0; i < 50; i++) during.push(await store.increment([inc("alpha", 1), inc("bravo", 1)]));
      t.ok(performance.now() - started < 2000, "50 decisions without waiting on the dead node");
      t.strictSame(
        during.map(([alpha]) => alpha),
        Array.from({ length: 50 }, (_, i) => i + 2),
        "alpha exact",
      );
      t.ok(
        during.every(([, bravo]) => bravo === 1),
        "bravo reads as 0: fail open",
      );
      t.equal(stat("multiget", "error"), 50);
      const multigetLines = logs.filter((l) =>
        l.startsWith("error: Error multi-getting memcache keys ([alpha bravo]): "),
      );
      t.ok(multigetLines.length >= 1 && multigetLines.length <= 3, `${multigetLines.length} lines, not 50`);
      t.match(
        multigetLines[0],
        new RegExp(
          `^error: Error multi-getting memcache keys \\(\\[alpha bravo\\]\\): memcache ${b.url.replaceAll(".", "\\.")}: `,
        ),
      );
      await b.restart();
      const back = await pollUntil(
        "bravo counted again",
        async () => {
          const [, bravo] = await store.increment([inc("alpha", 0), inc("bravo", 1)]);
          await store.settle();
          return (await b.valueOf("bravo")) === undefined ? undefined : bravo;
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      t.equal(back, 1, "an empty node starts from 1");
      t.strictSame(await store.increment([inc("alpha", 0), inc("bravo", 1)]), [51, 2]);
    },
  );

  t.test("a hung node (SIGSTOP): decisions fail open within the 100 ms timeout", async (t) => {
    const server = await startMemcached(t);
    const { store, stat } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url });
    const key = fresh("hung");
    t.strictSame(await store.increment([inc(key, 5)]), [5]);
    await store.settle();
    server.pause();
    t.teardown(() => server.resume());
    const started = performance.now();
    t.strictSame(await store.increment([inc(key, 1)]), [1], "read as 0");
    const elapsed = performance.now() - started;
    t.ok(elapsed < 1000, `answered after ${elapsed.toFixed(0)} ms`);
    await store.settle();
    t.equal(stat("multiget", "error"), 1);
    t.equal(stat("increment", "error"), 1, "the background increment failed too");
    server.resume();
    const resumed = await pollUntil(
      "answers again",
      async () => {
        const [value] = await store.increment([inc(key, 0)]);
        return value === 5 ? value : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    t.equal(resumed, 5, "the hit counted while hung was lost, as in the reference");
  });

  t.test(
    "expiry past 30 days is sent as an absolute time (memcached would drop the key at once)",
    async (t) => {
      const server = await startMemcached(t);
      t.equal(await server.command("set quirk 0 31536000 1\r\n1"), "STORED\r\n");
      t.equal(
        await server.valueOf("quirk"),
        undefined,
        "the reference's bug: a YEAR TTL as sent expires at once",
      );
      const { store } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url });
      const [year, month, monthJitter] = [fresh("year"), fresh("month"), fresh("month_jitter")];
      await store.increment([
        inc(year, 1, 31_536_000),
        inc(month, 1, 2_592_000),
        inc(monthJitter, 1, 2_592_299),
      ]);
      await store.settle();
      t.equal(await server.valueOf(year), "1");
      const near = (actual: number, expected: number) =>
        t.ok(Math.abs(actual - expected) <= 3, `${actual} ≈ ${expected}`);
      near(await server.ttlOf(year), 31_536_000);
      near(await server.ttlOf(month), 2_592_000);
      near(await server.ttlOf(monthJitter), 2_592_299);
      const stats = new StatsRegistry({ maxDynamicKeys: 10 });
      const counter = () => stats.counter("unused");
      const clocked = new MemcachedStore({
        servers: { endpoints: [{ label: server.url, target: { host: "127.0.0.1", port: server.port } }] },
        connectionsPerNode: 1,
        tls: undefined,
        timeoutMs: 1000,
        startup: { initialIntervalMs: 100, maxIntervalMs: 100 },
        stats: {
          multigetSuccess: counter(),
          multigetError: counter(),
          incrementSuccess: counter(),
          incrementMiss: counter(),
          incrementError: counter(),
          addSuccess: counter(),
          addError: counter(),
          addNotStored: counter(),
          keysRequested: counter(),
          keysFound: counter(),
        },
        log: silentLogger,
        throttledLog: new ThrottledLog({ logger: silentLogger }),
        nowMs: () => Date.now() - 1_000_000,
      });
      t.teardown(() => clocked.close());
      await clocked.start();
      const injected = fresh("injected_clock");
      await clocked.increment([inc(injected, 1, 31_536_000)]);
      await clocked.settle();
      near(await server.ttlOf(injected), 31_536_000 - 1000);
    },
  );

  t.test("start-up waits for memcached (unhealthy meanwhile) and can be stopped", async (t) => {
    const port = await freePort();
    const { store, logs } = await memcachedStoreFrom(
      t,
      { MEMCACHE_HOST_PORT: `127.0.0.1:${port}` },
      { start: false },
    );
    let healthy: boolean | undefined;
    store.onHealthChange((h) => (healthy = h));
    let started = false;
    const starting = store.start().then(() => (started = true));
    await pollUntil("a retry logged", async () => (logs.length > 0 ? true : undefined), { timeoutMs: 5000 });
    t.match(
      logs[0],
      new RegExp(
        `^warning: Retrying memcache connection to 127\\.0\\.0\\.1:${port} in \\d+ms \\(elapsed: \\d+ms\\): memcache 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`,
      ),
    );
    t.equal(started, false);
    t.equal(healthy, false);
    const server = await startMemcached(t, { port });
    await starting;
    t.equal(healthy, true, "healthy once connected (docs/compatibility.md)");
    t.strictSame(await store.increment([inc("after_start", 1)]), [1]);
    await store.settle();
    t.equal(await server.valueOf("after_start"), "1");

    const never = await memcachedStoreFrom(
      t,
      { MEMCACHE_HOST_PORT: `127.0.0.1:${await freePort()}` },
      { start: false },
    );
    const stopped = never.store.start();
    await never.store.close();
    await t.rejects(stopped, {
      message: /^stopped while waiting for memcache connection to 127\.0\.0\.1:\d+$/,
    });
  });

  t.test("settings: a node list or an SRV name, and items gomemcache accepts", async (t) => {
    await t.rejects(memcachedStoreFrom(t, {}, { start: false }), {
      name: "SettingsError",
      message: "BACKEND_TYPE=memcache needs MEMCACHE_HOST_PORT or MEMCACHE_SRV",
    });
    const problems = (env: Record<string, string>) => {
      try {
        loadSettings(env);
        return [];
      } catch (error) {
        return (error as SettingsError).problems;
      }
    };
    t.strictSame(problems({ BACKEND_TYPE: "memcache", MEMCACHE_HOST_PORT: "m1:11211,m2" }), [
      'invalid setting MEMCACHE_HOST_PORT: "m2" is not host:port, [ipv6]:port or a socket path',
    ]);
    t.strictSame(problems({ BACKEND_TYPE: "altcache", ALTCACHE_HOST_PORT: "[::1]:11211,m:99999" }), [
      'invalid setting ALTCACHE_HOST_PORT: "m:99999" is not host:port, [ipv6]:port or a socket path',
    ]);
    t.strictSame(problems({ BACKEND_TYPE: "memcache", MEMCACHE_HOST_PORT: "[::1]:11211,/run/mc.sock" }), []);
    t.strictSame(
      problems({ BACKEND_TYPE: "redis", MEMCACHE_HOST_PORT: "m2" }),
      [],
      "not checked unless used",
    );
  });
}
