// The commands a decision sends to Redis, read off the wire: INCRBY + EXPIRE per descriptor, with the
// reference's keys (domain_key_value_..._<window start>) and TTLs (the unit, jitter off), in descriptor order,
// on a single Redis (exact bytes, through a recording proxy), with REDIS_PERSECOND (SECOND-unit limits on their
// own instance), with REDIS_PIPELINE_WINDOW, and on a cluster (MONITOR on each node). Whatever the RESP client
// does inside, what Redis sees must stay this (docs/backends.md, "Redis").
import t, { type Test } from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { startCluster } from "../helpers/redis-cluster.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { monitorRedis, parseCommands, startRecordingProxy } from "../helpers/redis-wire.js";

const RULES = `domain: wire
descriptors:
  - key: a
    rate_limit: { unit: hour, requests_per_unit: 1000000 }
  - key: b
    rate_limit: { unit: minute, requests_per_unit: 1000000 }
  - key: c
    rate_limit: { unit: second, requests_per_unit: 1000000 }
  - key: d
    rate_limit: { unit: day, requests_per_unit: 1000000 }
  - key: e
    descriptors:
      - key: f
        rate_limit: { unit: hour, requests_per_unit: 1000000 }
`;

const UNIT_SECONDS: Record<string, number> = { a: 3600, b: 60, c: 1, d: 86400, e: 3600 };
const ONE = [{ entries: [{ key: "a", value: "x" }] }];
const FIVE = [
  { entries: [{ key: "a", value: "x" }] },
  { entries: [{ key: "b", value: "x" }] },
  { entries: [{ key: "c", value: "x" }] },
  { entries: [{ key: "d", value: "x" }] },
  {
    entries: [
      { key: "e", value: "x" },
      { key: "f", value: "y" },
    ],
  },
];

/** The commands the reference sends for `descriptors` (keys with `<W>` for the window start), in order. */
function expectedCommands(descriptors: typeof FIVE, hits: number, keep = (_key: string) => true): string[][] {
  return descriptors
    .map((d) => `wire_${d.entries.map((e) => `${e.key}_${e.value}_`).join("")}<W>`)
    .filter(keep)
    .flatMap((key) => [
      ["INCRBY", key, String(hits)],
      ["EXPIRE", key, String(UNIT_SECONDS[key[5]!])],
    ]);
}

/**
 * Replaces each key's window start by `<W>` after checking it: a multiple of the descriptor's unit, between
 * the window that held `fromMs` and `toMs`.
 */
function normalized(t: Test, commands: string[][], fromMs: number, toMs: number): string[][] {
  return commands.map(([name, key, ...rest]) => {
    const match = /^(wire_([a-z])_.*_)(\d+)$/.exec(key ?? "");
    if (!match) return [name!, key!, ...rest];
    const unit = UNIT_SECONDS[match[2]!]!;
    const start = Number(match[3]);
    const earliest = Math.floor(fromMs / 1000 / unit) * unit;
    t.ok(
      start % unit === 0 && start >= earliest && start <= toMs / 1000,
      `${key}: a window start of its ${unit} s unit, at the time of the request`,
    );
    return [name!, `${match[1]}<W>`, ...rest];
  });
}

const baseEnv = {
  BACKEND_TYPE: "redis",
  REDIS_SOCKET_TYPE: "tcp",
  EXPIRATION_JITTER_MAX_SECONDS: "0",
};

async function daemonWith(t: Test, env: Record<string, string>) {
  const daemon = await startDaemon({
    ...baseEnv,
    ...env,
    RUNTIME_ROOT: t.testdir({ config: { "wire.yaml": RULES } }),
  });
  t.teardown(() => daemon.stop());
  const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => client.close());
  return {
    ask: async (descriptors: typeof FIVE, hits?: number) => {
      const request = { domain: "wire", descriptors, ...(hits ? { hits_addend: hits } : {}) };
      t.equal((await client.shouldRateLimit(request)).overall_code, "OK");
    },
  };
}

const commandsOf = (chunks: readonly Buffer[]) => parseCommands(Buffer.concat(chunks));

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("single Redis: the exact commands of 1 and 5 descriptors, one request after another", async (t) => {
    const server = await startRedis(t);
    const proxy = await startRecordingProxy(t, server);
    const { ask } = await daemonWith(t, { REDIS_URL: proxy.url, REDIS_POOL_SIZE: "1" });
    for (const [descriptors, hits] of [
      [ONE, 1],
      [ONE, 3],
      [FIVE, 1],
      [FIVE, 2],
    ] as const) {
      proxy.clear();
      const from = Date.now();
      await ask(descriptors, hits === 1 ? undefined : hits);
      const sent = proxy.sent();
      t.equal(sent.length, 1, "one connection");
      t.strictSame(
        normalized(t, commandsOf(sent[0]!), from, Date.now()),
        expectedCommands(descriptors, hits),
        `${descriptors.length} descriptor(s), hits ${hits}`,
      );
    }
  });

  t.test("single Redis, pool of 2: concurrent requests keep each request's commands together", async (t) => {
    const server = await startRedis(t);
    const proxy = await startRecordingProxy(t, server);
    // The window, and the limit that flushes a batch early (6 commands: a 5-descriptor request alone fills it).
    for (const [window, limit] of [
      ["0", "0"],
      ["100us", "0"],
      ["2ms", "0"],
      ["2ms", "6"],
    ]) {
      const { ask } = await daemonWith(t, {
        REDIS_URL: proxy.url,
        REDIS_POOL_SIZE: "2",
        REDIS_PIPELINE_WINDOW: window!,
        REDIS_PIPELINE_LIMIT: limit!,
      });
      proxy.clear();
      const from = Date.now();
      await Promise.all([ask(FIVE), ask(ONE, 2), ask(FIVE, 3), ask(ONE)]);
      const to = Date.now();
      const perConnection = proxy.sent().map((chunks) => normalized(t, commandsOf(chunks), from, to));
      // Each connection's commands, cut into the requests they came from, must be whole requests.
      const requests = [expectedCommands(FIVE, 1), expectedCommands(ONE, 2), expectedCommands(FIVE, 3)];
      requests.push(expectedCommands(ONE, 1));
      const found: string[] = [];
      for (const commands of perConnection) {
        let at = 0;
        while (at < commands.length) {
          const match = requests.findIndex(
            (request, n) =>
              !found.includes(String(n)) &&
              JSON.stringify(commands.slice(at, at + request.length)) === JSON.stringify(request),
          );
          if (match < 0) {
            t.fail(
              `window ${window}, limit ${limit}: commands from ${at} are no request's: ${JSON.stringify(commands.slice(at))}`,
            );
            break;
          }
          found.push(String(match));
          at += requests[match]!.length;
        }
      }
      t.strictSame(
        found.sort(),
        ["0", "1", "2", "3"],
        `window ${window}, limit ${limit}: every request's commands, once`,
      );
    }
  });

  t.test("REDIS_PERSECOND: SECOND-unit keys on their own instance, the rest on the main one", async (t) => {
    const main = await startRedis(t);
    const perSecond = await startRedis(t);
    const mainProxy = await startRecordingProxy(t, main);
    const perSecondProxy = await startRecordingProxy(t, perSecond);
    const { ask } = await daemonWith(t, {
      REDIS_URL: mainProxy.url,
      REDIS_POOL_SIZE: "1",
      REDIS_PERSECOND: "true",
      REDIS_PERSECOND_SOCKET_TYPE: "tcp",
      REDIS_PERSECOND_URL: perSecondProxy.url,
      REDIS_PERSECOND_POOL_SIZE: "1",
    });
    for (const [descriptors, hits] of [
      [ONE, 1],
      [FIVE, 1],
      [FIVE, 4],
    ] as const) {
      mainProxy.clear();
      perSecondProxy.clear();
      const from = Date.now();
      await ask(descriptors, hits === 1 ? undefined : hits);
      const to = Date.now();
      const onMain = mainProxy.sent().flatMap((chunks) => normalized(t, commandsOf(chunks), from, to));
      const onPerSecond = perSecondProxy
        .sent()
        .flatMap((chunks) => normalized(t, commandsOf(chunks), from, to));
      const perSecondKey = (key: string) => key.startsWith("wire_c_");
      t.strictSame(
        onMain,
        expectedCommands(descriptors, hits, (key) => !perSecondKey(key)),
        "main",
      );
      t.strictSame(onPerSecond, expectedCommands(descriptors, hits, perSecondKey), "per-second");
    }
  });

  t.test("cluster: each key's INCRBY + EXPIRE on the node owning its slot, in request order", async (t) => {
    const cluster = await startCluster(t);
    const monitors = await Promise.all(cluster.nodes.map((node) => monitorRedis(t, node)));
    const { ask } = await daemonWith(t, { REDIS_TYPE: "cluster", REDIS_URL: cluster.url });
    // The cluster client's own housekeeping is not a decision's.
    const housekeeping = new Set([
      "CLUSTER",
      "INFO",
      "PING",
      "COMMAND",
      "READONLY",
      "CLIENT",
      "HELLO",
      "SELECT",
    ]);
    for (const [descriptors, hits] of [
      [ONE, 1],
      [FIVE, 1],
      [FIVE, 2],
    ] as const) {
      for (const monitor of monitors) monitor.clear();
      const from = Date.now();
      await ask(descriptors, hits === 1 ? undefined : hits);
      // MONITOR reports a command once it ran; the reply to the decision may overtake the report.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const to = Date.now();
      const expected = expectedCommands(descriptors, hits);
      const seen = new Set<string>();
      for (const [n, monitor] of monitors.entries()) {
        const commands = normalized(
          t,
          // ioredis writes command names in lower case; Redis reads them without regard to case.
          monitor
            .commands()
            .map(([name, ...args]) => [name!.toUpperCase(), ...args])
            .filter(([name]) => !housekeeping.has(name!)),
          from,
          to,
        );
        const keys = new Set(commands.map((command) => command[1]!));
        for (const key of keys) {
          t.notOk(seen.has(key), `${key} on one node only`);
          seen.add(key);
        }
        t.strictSame(
          commands,
          expected.filter((command) => keys.has(command[1]!)),
          `node ${n + 1}`,
        );
      }
      t.strictSame(
        [...seen].sort(),
        [...new Set(expected.map((command) => command[1]!))].sort(),
        "every key",
      );
    }
  });
}
