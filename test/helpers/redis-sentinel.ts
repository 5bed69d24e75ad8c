import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir, pollUntil, type TestHooks } from "./redis-process.js";
import { launchRedisServer, type RedisServer, startRedis } from "./redis-servers.js";

/** Options of {@link startSentinelGroup}. */
export interface SentinelGroupOptions {
  /** requirepass of the primary and the replica (also their masterauth and the sentinels' auth-pass). */
  readonly password?: string;
  /** requirepass of the sentinels themselves (REDIS_SENTINEL_AUTH). */
  readonly sentinelPassword?: string;
}

/** A primary, one replica and three sentinels watching them; see {@link startSentinelGroup}. */
export interface SentinelGroup {
  readonly masterName: string;
  /** The three sentinels (quorum 2); each is a full {@link RedisServer} handle. */
  readonly sentinels: readonly RedisServer[];
  /** `mymaster,127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`: the REDIS_URL of REDIS_TYPE=sentinel. */
  readonly sentinelUrl: string;
  /** The servers as started; after {@link failover} `replica` is the primary. */
  readonly primary: RedisServer;
  readonly replica: RedisServer;
  /**
   * SIGKILLs the current primary and resolves with the new primary's address once a sentinel reports the
   * switch and the promoted server answers ROLE as master (usually 3–6 s). Works once per group: the killed
   * server stays down unless the test restarts it (sentinels then make it a replica).
   */
  failover(): Promise<{ host: string; port: number }>;
}

const MASTER_NAME = "mymaster";
const FAILOVER_TIMEOUT_MS = 20_000;

/**
 * Starts a replicated primary and three sentinels (`down-after-milliseconds 1000`, `failover-timeout 5000`)
 * and resolves when every sentinel sees the primary, the in-sync replica and the two other sentinels
 * (without the latter a failover cannot elect a leader).
 */
export async function startSentinelGroup(
  t: TestHooks,
  options: SentinelGroupOptions = {},
): Promise<SentinelGroup> {
  const password = options.password;
  const masterAuth = password ? ["--masterauth", password] : [];
  const primary = await startRedis(t, { ...(password ? { password } : {}), extraArgs: masterAuth });
  const replica = await startRedis(t, {
    ...(password ? { password } : {}),
    replicaOf: { host: primary.host, port: primary.port, ...(password ? { password } : {}) },
  });
  const sentinels = await Promise.all([1, 2, 3].map(() => startSentinel(t, primary.port, options)));
  await Promise.all(sentinels.map((sentinel) => waitUntilSeesGroup(sentinel)));
  const masterAddress = async () => {
    for (const sentinel of sentinels) {
      const reply = await sentinel.cli("SENTINEL", "get-master-addr-by-name", MASTER_NAME).catch(() => "");
      const [host, port] = reply.split("\n");
      if (host && port) return { host, port: Number(port) };
    }
    return undefined;
  };
  return {
    masterName: MASTER_NAME,
    sentinels,
    sentinelUrl: [MASTER_NAME, ...sentinels.map((sentinel) => sentinel.url)].join(","),
    primary,
    replica,
    failover: async () => {
      const before = await pollUntil("sentinel master address", masterAddress, { timeoutMs: 5000 });
      const servers = [primary, replica];
      await servers.find((server) => server.port === before.port)?.kill();
      const after = await pollUntil(
        `failover away from ${before.host}:${before.port}`,
        async () => {
          const now = await masterAddress();
          return now && now.port !== before.port ? now : undefined;
        },
        { timeoutMs: FAILOVER_TIMEOUT_MS, intervalMs: 200 },
      );
      const promoted = servers.find((server) => server.port === after.port);
      if (promoted) {
        await pollUntil(
          `${promoted.url} reporting role master`,
          async () => ((await promoted.cli("ROLE")).startsWith("master") ? true : undefined),
          { timeoutMs: 5000, intervalMs: 100 },
        );
      }
      return after;
    },
  };
}

async function startSentinel(t: TestHooks, primaryPort: number, options: SentinelGroupOptions) {
  const dir = makeTempDir("sentinel");
  const configFile = join(dir, "sentinel.conf");
  return launchRedisServer(t, { name: "redis-sentinel", dir }, async (port) => {
    const lines = [
      `port ${port}`,
      "bind 127.0.0.1",
      "daemonize no",
      `dir ${dir}`,
      'logfile ""',
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
      `sentinel failover-timeout ${MASTER_NAME} 5000`,
      `sentinel parallel-syncs ${MASTER_NAME} 1`,
    ];
    if (options.password) lines.push(`sentinel auth-pass ${MASTER_NAME} ${options.password}`);
    if (options.sentinelPassword) lines.push(`requirepass ${options.sentinelPassword}`);
    // Sentinel rewrites this file with what it learns, so each one needs its own writable copy.
    await writeFile(configFile, `${lines.join("\n")}\n`);
    const cliArgs = ["-h", "127.0.0.1", "-p", String(port), "--no-auth-warning"];
    if (options.sentinelPassword) cliArgs.push("-a", options.sentinelPassword);
    return { args: [configFile, "--sentinel"], cliArgs };
  });
}

/** Resolves when `sentinel` reports the primary as healthy with one in-sync replica and two peers. */
async function waitUntilSeesGroup(sentinel: RedisServer): Promise<void> {
  await pollUntil(
    `sentinel ${sentinel.url} discovering the group`,
    async () => {
      const master = fields(await sentinel.cli("SENTINEL", "master", MASTER_NAME));
      const replica = fields(await sentinel.cli("SENTINEL", "replicas", MASTER_NAME));
      const ready =
        master.get("flags") === "master" &&
        master.get("num-slaves") === "1" &&
        master.get("num-other-sentinels") === "2" &&
        replica.get("flags") === "slave" &&
        replica.get("master-link-status") === "ok";
      return ready ? true : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
}

/** Parses redis-cli's raw output of a flat field/value array (one replica at most, as here). */
function fields(raw: string): Map<string, string> {
  const lines = raw.split("\n");
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < lines.length; i += 2) map.set(lines[i]!, lines[i + 1]!);
  return map;
}
