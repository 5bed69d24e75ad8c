// Every backend logs, at warn, a deployment (or memcached node) losing its last connection and getting one
// back, naming it (credentials masked) and saying how long it was down; and its failures carry two texts:
// the details for the log, a short reason without any address for clients.
import t from "tap";
import type { CounterIncrement } from "../../../src/engine/counter-store.js";
import { BackendError } from "../../../src/errors.js";
import { freePort } from "../../helpers/free-port.js";
import { requireBinaries as requireMemcached, startMemcached } from "../../helpers/memcached-process.js";
import { memcachedStoreFrom } from "../../helpers/memcached-store-fixture.js";
import { startCluster } from "../../helpers/redis-cluster.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { startSentinelGroup } from "../../helpers/redis-sentinel.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";

const inc = (key: string, perSecond = false): CounterIncrement => ({
  key,
  hits: 1,
  ttlSeconds: 60,
  perSecond,
});
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const connectionLines = (logs: readonly string[]) =>
  logs.filter((line) => /: (connection lost|(re)?connected after)\b/.test(line));

/** Polls until `logs` holds `count` loss/recovery lines, and returns them. */
const waitForConnectionLines = (logs: readonly string[], count: number, timeoutMs = 15_000) =>
  pollUntil(
    `${count} connection line(s)`,
    async () => (connectionLines(logs).length >= count ? connectionLines(logs) : undefined),
    { timeoutMs, intervalMs: 50 },
  );

/** The failure of one call, which must fail. */
async function failureOf(work: () => unknown): Promise<BackendError> {
  const outcome = await Promise.resolve()
    .then(work)
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  if (!(outcome instanceof BackendError)) throw new Error(`expected a BackendError, got ${String(outcome)}`);
  return outcome;
}

/** Retries `work` until it succeeds (the backend is back), and returns its value. */
const once = <T>(what: string, work: () => T | Promise<T>) =>
  pollUntil(
    what,
    async () =>
      Promise.resolve()
        .then(work)
        .catch(() => undefined),
    {
      timeoutMs: 20_000,
      intervalMs: 100,
    },
  );

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "single Redis: one loss and one recovery line for the whole pool; short texts for clients",
    async (t) => {
      const server = await startRedis(t, { password: "pool-secret" });
      const { store, logs } = await redisStoreFrom(t, {
        REDIS_URL: `redis://:pool-secret@${server.url}`,
        REDIS_POOL_SIZE: "3",
      });
      const name = `redis redis://*****@${server.url}`;
      t.strictSame(await store.increment([inc("a")]), [1]);
      await server.kill();
      t.strictSame(await waitForConnectionLines(logs, 1), [
        `warning: ${name}: connection lost: connection closed by Redis`,
      ]);
      // The first reconnect attempt is refused within 100 ms; until then the reason is the lost connection's.
      const refused = await pollUntil(
        "a refusal",
        async () => {
          const error = await failureOf(() => store.increment([inc("a")]));
          return error.clientMessage === "redis: connection refused" ? error : undefined;
        },
        { timeoutMs: 5000 },
      );
      t.equal(refused.message, `${name}: no connection is up: connect ECONNREFUSED ${server.url}`);
      await server.restart();
      t.strictSame(await once("counting again", () => store.increment([inc("a")])), [1]);
      const [lost, back, ...more] = await waitForConnectionLines(logs, 2);
      t.equal(lost, `warning: ${name}: connection lost: connection closed by Redis`);
      t.match(back, new RegExp(`^warning: ${escaped(name)}: reconnected after \\d+\\.\\d s$`));
      t.strictSame(more, [], "one line each, not one per connection");
      t.notMatch(logs.join("\n"), "pool-secret");
    },
  );

  t.test("a Redis that stops answering: the client text is the timeout, without the address", async (t) => {
    const server = await startRedis(t);
    const { store } = await redisStoreFrom(t, {
      REDIS_URL: server.url,
      REDIS_TIMEOUT: "300ms",
      REDIS_POOL_SIZE: "1",
    });
    await store.increment([inc("slow")]);
    await server.cli("CLIENT", "PAUSE", "1500", "ALL");
    const error = await failureOf(() => store.increment([inc("slow")]));
    t.strictSame(
      { message: error.message, clientMessage: error.clientMessage },
      {
        message: `redis ${server.url}: no answer within 300 ms`,
        clientMessage: "redis: no answer within 300 ms",
      },
    );
  });

  t.test("an error reply reaches clients as Redis wrote it (it names no address)", async (t) => {
    const server = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: server.url });
    await server.cli("SET", "not_a_counter", "abc");
    const error = await failureOf(() => store.increment([inc("not_a_counter")]));
    t.strictSame(
      { message: error.message, clientMessage: error.clientMessage },
      {
        message: `redis ${server.url}: ERR value is not an integer or out of range`,
        clientMessage: "redis: ERR value is not an integer or out of range",
      },
    );
  });

  t.test("REDIS_PERSECOND: the per-second deployment's lines and errors name it", async (t) => {
    const [main, perSecond] = [await startRedis(t), await startRedis(t)];
    const { store, logs } = await redisStoreFrom(t, {
      REDIS_URL: main.url,
      REDIS_PERSECOND: "true",
      REDIS_PERSECOND_SOCKET_TYPE: "tcp",
      REDIS_PERSECOND_URL: perSecond.url,
    });
    const name = `redis per-second ${perSecond.url}`;
    t.strictSame(await store.increment([inc("m"), inc("s", true)]), [1, 1]);
    await perSecond.kill();
    t.strictSame(await waitForConnectionLines(logs, 1), [
      `warning: ${name}: connection lost: connection closed by Redis`,
    ]);
    t.strictSame(await store.increment([inc("m")]), [2], "the main deployment serves on");
    const error = await failureOf(() => store.increment([inc("s", true)]));
    t.match(error.message, new RegExp(`^${escaped(name)}: no connection is up: `));
    t.match(error.clientMessage, /^redis: connection (closed|refused)$/);
    await perSecond.restart();
    t.strictSame(await once("per-second again", () => store.increment([inc("s", true)])), [1]);
    const lines = await waitForConnectionLines(logs, 2);
    t.equal(lines.length, 2);
    t.match(lines[1], new RegExp(`^warning: ${escaped(name)}: reconnected after \\d+\\.\\d s$`));
  });

  t.test("sentinel: the primary's loss, then the new primary after the failover", async (t) => {
    const group = await startSentinelGroup(t);
    const { store, logs } = await redisStoreFrom(t, {
      REDIS_TYPE: "sentinel",
      REDIS_URL: group.sentinelUrl,
      REDIS_TIMEOUT: "1s",
    });
    t.strictSame(await store.increment([inc("f")]), [1]);
    const primary = await group.failover();
    await once("counting on the new primary", () => store.increment([inc("f")]));
    const [lost, back, ...more] = await waitForConnectionLines(logs, 2);
    t.equal(lost, `warning: redis ${group.sentinelUrl}: connection lost: connection closed by Redis`);
    t.match(
      back,
      new RegExp(
        `^warning: redis ${escaped(group.sentinelUrl)}: reconnected after \\d+\\.\\d s \\(primary ${escaped(`${primary.host}:${primary.port}`)}\\)$`,
      ),
    );
    t.strictSame(more, []);
  });

  t.test("cluster: every node down, then back", async (t) => {
    const cluster = await startCluster(t);
    const { store, logs } = await redisStoreFrom(t, { REDIS_TYPE: "cluster", REDIS_URL: cluster.url });
    t.strictSame(await store.increment([inc("{c}k")]), [1]);
    await Promise.all(cluster.nodes.map((node) => node.kill()));
    // ioredis notices a node it has not used yet is gone only when a request needs it.
    const errors: BackendError[] = [];
    const [lost] = await pollUntil(
      "the loss logged",
      async () => {
        errors.push(await failureOf(() => store.increment([inc(`{c${errors.length}}k`)])));
        return connectionLines(logs).length > 0 ? connectionLines(logs) : undefined;
      },
      { timeoutMs: 15_000 },
    );
    t.match(
      lost,
      new RegExp(
        `^warning: redis ${escaped(cluster.url)}: connection lost: (Connection is closed\\.|connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+)$`,
      ),
    );
    for (const error of errors) {
      t.match(
        error.message,
        new RegExp(`^redis ${escaped(cluster.url)}: `),
        "the log's text names the cluster",
      );
      t.match(
        error.clientMessage,
        /^redis: (connection closed|connection refused|not connected)$/,
        "clients' does not",
      );
    }
    await Promise.all(cluster.nodes.map((node) => node.restart()));
    await once("counting again", () => store.increment([inc("{c}k")]));
    const [, back, ...more] = await waitForConnectionLines(logs, 2);
    t.match(back, new RegExp(`^warning: redis ${escaped(cluster.url)}: reconnected after \\d+\\.\\d s$`));
    t.strictSame(more, []);
  });
}

if (requireMemcached(t, ["memcached"])) {
  t.test(
    "memcached: a node's loss and recovery, and its failures one line a second with counts",
    async (t) => {
      const server = await startMemcached(t);
      const { store, logs, stat } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: server.url });
      const name = `memcache ${server.url}`;
      t.strictSame(await store.increment([inc("m")]), [1]);
      await store.settle();
      await server.kill();
      t.strictSame(await waitForConnectionLines(logs, 1), [
        `warning: ${name}: connection lost: connection closed by the server`,
      ]);
      for (let i = 0; i < 40; i++) t.strictSame(await store.increment([inc("m")]), [1], "fails open");
      const failed = stat("multiget", "error");
      t.equal(failed, 40);
      const counted = () =>
        logs
          .filter((line) => line.startsWith("error: Error multi-getting memcache keys ([m]): "))
          .reduce(
            (sum, line) =>
              sum + 1 + Number(/ \(and (\d+) more in the last \d+\.\d s\)$/.exec(line)?.[1] ?? 0),
            0,
          );
      await pollUntil("every failed read counted", async () => (counted() === failed ? true : undefined), {
        timeoutMs: 5000,
      });
      t.ok(
        logs.filter((line) => line.startsWith("error: Error multi-getting")).length < failed,
        "fewer lines than failures",
      );
      await server.restart();
      await once("counting again", async () => {
        const [value] = await store.increment([inc("m")]);
        await store.settle();
        return (await server.valueOf("m")) === undefined ? undefined : value;
      });
      const [, back, ...more] = await waitForConnectionLines(logs, 2);
      t.match(back, new RegExp(`^warning: ${escaped(name)}: reconnected after \\d+\\.\\d s$`));
      t.strictSame(more, []);
    },
  );

  t.test("memcached: a node down at start-up is logged as connected when it first answers", async (t) => {
    const a = await startMemcached(t);
    const bPort = await freePort();
    const bUrl = `127.0.0.1:${bPort}`;
    const { store, logs } = await memcachedStoreFrom(t, { MEMCACHE_HOST_PORT: `${a.url},${bUrl}` });
    t.ok(
      logs.some((line) => line.startsWith(`warning: memcache node not answering yet: memcache ${bUrl}: `)),
    );
    await startMemcached(t, { port: bPort });
    // bravo lives on the second node (see the placement test in memcached-behaviour.test.ts).
    await once("the second node answering", async () => {
      await store.increment([inc("bravo")]);
      await store.settle();
      return connectionLines(logs).length > 0 ? true : undefined;
    });
    const [connected, ...more] = connectionLines(logs);
    t.match(connected, new RegExp(`^warning: memcache ${escaped(bUrl)}: connected after \\d+\\.\\d s$`));
    t.strictSame(more, []);
  });
}
