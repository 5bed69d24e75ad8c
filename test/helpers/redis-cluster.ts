import { freePort } from "./free-port.js";
import { pollUntil, redisCli, type TestHooks } from "./redis-process.js";
import { type RedisServer, startRedis } from "./redis-servers.js";

/** Three cluster primaries owning all 16384 slots; see {@link startCluster}. */
export interface RedisCluster {
  /** The nodes in start order; each is a full {@link RedisServer} handle. */
  readonly nodes: readonly RedisServer[];
  /** `127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`: the REDIS_URL of REDIS_TYPE=cluster. */
  readonly url: string;
  /** `cli()` of the node listening on `port` (not cluster-aware: add `-c` first to follow MOVED). */
  cli(port: number, ...args: string[]): Promise<string>;
}

/**
 * Starts three `--cluster-enabled` nodes (node timeout 2 s, bus ports picked freely via `cluster-port`),
 * joins them with `redis-cli --cluster create … --cluster-replicas 0`, and resolves when every node reports
 * `cluster_state:ok` and knows the other two. With `password`, every node requires it (and uses it as
 * masterauth).
 */
export async function startCluster(t: TestHooks, options: { password?: string } = {}): Promise<RedisCluster> {
  const password = options.password;
  const nodes = await Promise.all(
    [1, 2, 3].map(async () => {
      const clusterArgs = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"];
      clusterArgs.push("--cluster-node-timeout", "2000", "--cluster-port", String(await freePort()));
      if (password) clusterArgs.push("--masterauth", password);
      return startRedis(t, { ...(password ? { password } : {}), extraArgs: clusterArgs });
    }),
  );
  const auth = password ? ["-a", password, "--no-auth-warning"] : [];
  const create = await redisCli(
    [
      "--cluster",
      "create",
      ...nodes.map((node) => node.url),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
      ...auth,
    ],
    30_000,
  );
  if (create.code !== 0 || !create.stdout.includes("[OK] All 16384 slots covered.")) {
    throw new Error(
      `redis-cli --cluster create failed (exit ${create.code}):\n${create.stdout}\n${create.stderr}`,
    );
  }
  await Promise.all(
    nodes.map((node) =>
      pollUntil(
        `cluster node ${node.url} reaching cluster_state:ok`,
        async () => {
          const info = await node.cli("CLUSTER", "INFO");
          return /^cluster_state:ok$/m.test(info) && /^cluster_known_nodes:3$/m.test(info) ? true : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      ),
    ),
  );
  return {
    nodes,
    url: nodes.map((node) => node.url).join(","),
    cli: async (port, ...args) => {
      const node = nodes.find((candidate) => candidate.port === port);
      if (!node)
        throw new Error(`no cluster node on port ${port} (nodes: ${nodes.map((n) => n.port).join(", ")})`);
      return node.cli(...args);
    },
  };
}
