// Redis going away and coming back (docs/backends.md "Redis"): fast errors, no queue, recovery without a
// restart, start-up retry and give-up, health, masked credentials; and round trips per request.
import t from "tap";
import type { CounterIncrement } from "../../../src/engine/counter-store.js";
import { BackendError } from "../../../src/errors.js";
import { freePort } from "../../helpers/free-port.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { startRoundTripProxy } from "../../helpers/round-trip-proxy.js";

const inc = (key: string, hits = 1): CounterIncrement => ({ key, hits, ttlSeconds: 60, perSecond: false });
const within = async (ms: number, work: () => unknown) => {
  const started = performance.now();
  const outcome = await Promise.resolve()
    .then(work)
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  return { ...outcome, elapsedMs: performance.now() - started, fast: performance.now() - started < ms };
};

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "Redis killed: every call fails at once, nothing queues, and service resumes after a restart",
    async (t) => {
      const server = await startRedis(t);
      const { store, stats } = await redisStoreFrom(t, { REDIS_URL: server.url, REDIS_TIMEOUT: "2s" });
      t.strictSame(await store.increment([inc("k")]), [1]);
      await server.kill();
      const first = await within(500, () => store.increment([inc("k")]));
      t.ok(first.fast, `failed in ${first.elapsedMs.toFixed(1)} ms`);
      t.type((first as { error: unknown }).error, BackendError);
      t.match(
        (first as { error: Error }).error.message,
        new RegExp(`^redis ${server.url.replaceAll(".", "\\.")}: `),
      );
      const burst = await within(2000, () =>
        Promise.allSettled(Array.from({ length: 2000 }, () => store.increment([inc("k")]))),
      );
      const settled = (burst as { value: PromiseSettledResult<number[]>[] }).value;
      t.equal(settled.filter((r) => r.status === "rejected").length, 2000, "2000 calls rejected");
      t.ok(burst.fast, `all within ${burst.elapsedMs.toFixed(0)} ms: nothing waited in a queue`);
      await server.restart();
      const deadline = Date.now() + 10_000;
      let value: number[] | undefined;
      while (!value && Date.now() < deadline) {
        value = await Promise.resolve(store.increment([inc("k")])).catch(() => undefined);
        if (!value) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      t.strictSame(value, [1], "serving again (the restarted Redis kept no data)");
      // The pool's second connection may still be waiting for its next reconnect attempt.
      const active = /^ratelimit\.redis_pool\.cx_active: 2$/m;
      while (!active.test(stats.snapshotLines().join("\n")) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      t.match(stats.snapshotLines().join("\n"), active);
    },
  );

  t.test("closing while Redis is away ends at once, never waits for a reconnect", async (t) => {
    const server = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: server.url });
    await server.kill();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closed = await within(500, () => store.close());
    t.equal((closed as { error?: unknown }).error, undefined);
    t.ok(closed.fast, `closed in ${closed.elapsedMs.toFixed(0)} ms`);
  });

  t.test("a Redis that stops answering: the call fails after REDIS_TIMEOUT", async (t) => {
    const server = await startRedis(t);
    const { store } = await redisStoreFrom(t, {
      REDIS_URL: server.url,
      REDIS_TIMEOUT: "300ms",
      REDIS_POOL_SIZE: "1",
    });
    await store.increment([inc("slow")]);
    await server.cli("CLIENT", "PAUSE", "1500", "ALL");
    const paused = await within(1000, () => store.increment([inc("slow")]));
    t.match((paused as { error: Error }).error, { message: `redis ${server.url}: no answer within 300 ms` });
    t.ok(
      paused.elapsedMs >= 280 && paused.elapsedMs < 1000,
      `failed after ${paused.elapsedMs.toFixed(0)} ms`,
    );
  });

  t.test("start-up: retries with backoff until Redis is up, then healthy", async (t) => {
    const server = await startRedis(t);
    await server.kill();
    const { store, logs } = await redisStoreFrom(
      t,
      { REDIS_URL: server.url, REDIS_STARTUP_INITIAL_INTERVAL: "100ms", REDIS_STARTUP_MAX_INTERVAL: "200ms" },
      { start: false },
    );
    let healthy: boolean | undefined;
    store.onHealthChange((h) => (healthy = h));
    const starting = store.start();
    await new Promise((resolve) => setTimeout(resolve, 600));
    t.equal(healthy, false, "unhealthy while waiting");
    t.match(
      logs.join("\n"),
      new RegExp(
        `Retrying Redis connection to ${server.url.replaceAll(".", "\\.")} in \\d+ms \\(elapsed: \\d+ms\\): .*ECONNREFUSED`,
      ),
    );
    t.equal(
      logs.filter((line) => line.includes("is not answering yet")).join("\n"),
      `warning: redis ${server.url} is not answering yet: start-up waits for it before the daemon listens, for ever (REDIS_STARTUP_MAX_ELAPSED_TIME=0; set a duration such as 30s to give up instead); to run without Redis, set BACKEND_TYPE=memory (counters in the daemon's memory, one replica)`,
      "the first failure says how long start-up waits and how to run without Redis, once",
    );
    await server.restart();
    await starting;
    t.equal(healthy, true, "healthy after the first PING");
  });

  t.test(
    "start-up gives up after REDIS_STARTUP_MAX_ELAPSED_TIME; credentials never reach the logs",
    async (t) => {
      const port = await freePort();
      const { store, logs } = await redisStoreFrom(
        t,
        {
          REDIS_URL: `redis://admin:hunter2@127.0.0.1:${port}`,
          REDIS_STARTUP_MAX_ELAPSED_TIME: "300ms",
          REDIS_STARTUP_INITIAL_INTERVAL: "50ms",
        },
        { start: false },
      );
      await t.rejects(store.start(), {
        message: new RegExp(
          `^timed out waiting for Redis connection to redis://\\*\\*\\*\\*\\*@127\\.0\\.0\\.1:${port} after \\d+ms: .*ECONNREFUSED`,
        ),
      });
      t.match(logs[0], `connecting to redis on redis://*****@127.0.0.1:${port} with pool size 2`);
      t.equal(
        logs.filter((line) => line.includes("is not answering yet")).join("\n"),
        `warning: redis redis://*****@127.0.0.1:${port} is not answering yet: start-up waits for it before the daemon listens, for at most 0.3 s (REDIS_STARTUP_MAX_ELAPSED_TIME); to run without Redis, set BACKEND_TYPE=memory (counters in the daemon's memory, one replica)`,
      );
      t.notMatch(logs.join("\n"), "hunter2");
    },
  );

  t.test("REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: unhealthy while no connection is up", async (t) => {
    const server = await startRedis(t);
    const checked = await redisStoreFrom(t, {
      REDIS_URL: server.url,
      REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: "true",
    });
    const plain = await redisStoreFrom(t, { REDIS_URL: server.url });
    const states: Record<string, boolean[]> = { checked: [], plain: [] };
    checked.store.onHealthChange((h) => states.checked!.push(h));
    plain.store.onHealthChange((h) => states.plain!.push(h));
    await server.kill();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await server.restart();
    const deadline = Date.now() + 10_000;
    while (states.checked!.at(-1) !== true && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    t.strictSame(states.checked, [true, false, true]);
    t.strictSame(states.plain, [true], "without the setting, health ignores connections");
  });

  t.test("one round trip per request; STOP_CACHE_KEY_INCREMENT reads first (two)", async (t) => {
    const server = await startRedis(t);
    const proxy = await startRoundTripProxy(t, server);
    const { store } = await redisStoreFrom(t, { REDIS_URL: proxy.url, REDIS_POOL_SIZE: "1" });
    proxy.reset();
    for (let i = 0; i < 10; i++) await store.increment([inc("rt_a"), inc("rt_b", 2), inc("rt_c", 3)]);
    t.equal(proxy.roundTrips(), 10, "10 requests of 3 counters: 10 round trips");
    t.match(await server.cli("INFO", "commandstats"), /cmdstat_incrby:calls=30,/);
    proxy.reset();
    await store.read([inc("rt_a"), inc("rt_b")]);
    await store.increment([inc("rt_a"), inc("rt_b")]);
    t.equal(proxy.roundTrips(), 2);
  });

  t.test("requests of one event-loop turn leave in one write, each with its own answers", async (t) => {
    const server = await startRedis(t);
    const proxy = await startRoundTripProxy(t, server);
    const { store } = await redisStoreFrom(t, { REDIS_URL: proxy.url, REDIS_POOL_SIZE: "3" });
    proxy.reset();
    const values = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.increment([inc(`turn_${i % 4}`, i + 1), inc("turn_all")])),
    );
    t.equal(proxy.roundTrips(), 1, "20 requests in one turn: one write, one round trip");
    t.strictSame(
      values.map(([, all]) => all),
      Array.from({ length: 20 }, (_, i) => i + 1),
      "answers matched in order",
    );
    t.strictSame(
      values.map(([own]) => own),
      [1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21, 24, 28, 32, 36, 40, 45, 50, 55, 60],
    );
    proxy.reset();
    for (let i = 0; i < 3; i++) await store.increment([inc("turn_next")]);
    t.equal(proxy.roundTrips(), 3, "a request of a later turn is not held back");
  });

  t.test("REDIS_PIPELINE_WINDOW / _LIMIT send concurrent requests together", async (t) => {
    const server = await startRedis(t);
    const proxy = await startRoundTripProxy(t, server);
    const windowed = await redisStoreFrom(t, {
      REDIS_URL: proxy.url,
      REDIS_POOL_SIZE: "1",
      REDIS_PIPELINE_WINDOW: "20ms",
    });
    proxy.reset();
    const values = await Promise.all(
      Array.from({ length: 50 }, () => windowed.store.increment([inc("batched")])),
    );
    t.strictSame(
      values.map(([v]) => v).sort((a, b) => a! - b!),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    t.equal(proxy.roundTrips(), 1, "50 requests in one window: one round trip");
    const limited = await redisStoreFrom(t, {
      REDIS_URL: proxy.url,
      REDIS_POOL_SIZE: "1",
      REDIS_PIPELINE_WINDOW: "5s",
      REDIS_PIPELINE_LIMIT: "10",
    });
    proxy.reset();
    const started = performance.now();
    await Promise.all(Array.from({ length: 50 }, () => limited.store.increment([inc("limited")])));
    // Ten flushes; back-to-back pipelines may share one turn of the connection, so at most ten round trips.
    t.ok(
      proxy.roundTrips() >= 1 && proxy.roundTrips() <= 10,
      `${proxy.roundTrips()} round trips for 10 flushes`,
    );
    t.ok(performance.now() - started < 2000, "the limit flushed before the window");
  });

  t.test("pool stats: connections opened, up, and closed locally", async (t) => {
    const server = await startRedis(t);
    const { store, stats } = await redisStoreFrom(t, { REDIS_URL: server.url, REDIS_POOL_SIZE: "3" });
    await store.increment([inc("pool")]);
    const deadline = Date.now() + 5000;
    const line = (name: string) =>
      stats.snapshotLines().find((l) => l.startsWith(`ratelimit.redis_pool.${name}: `));
    while (line("cx_active") !== "ratelimit.redis_pool.cx_active: 3" && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    t.equal(line("cx_total"), "ratelimit.redis_pool.cx_total: 3");
    t.equal(line("cx_active"), "ratelimit.redis_pool.cx_active: 3");
    await store.close();
    t.equal(line("cx_local_close"), "ratelimit.redis_pool.cx_local_close: 3");
    t.equal(line("cx_active"), "ratelimit.redis_pool.cx_active: 0");
  });
}
