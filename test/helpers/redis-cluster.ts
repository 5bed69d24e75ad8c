import { freePort } from "./free-port.js";
import { pollUntil, redisCli, type TestHooks } from "./redis-process.js";
import { type RedisServer, startRedis } from "./redis-servers.js";

/** Three cluster primaries owning all 16384 slots (with `replicas`, one replica each); see {@link startCluster}. */
export interface RedisCluster {
  /**
   * The nodes in start order; each is a full {@link RedisServer} handle. With `replicas`, the first three
   * are the primaries and node `i + 3` is the replica of node `i`.
   */
  readonly nodes: readonly RedisServer[];
  /** `127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`: the REDIS_URL of REDIS_TYPE=cluster (the primaries). */
  readonly url: string;
  /** `cli()` of the node listening on `port` (not cluster-aware: add `-c` first to follow MOVED). */
  cli(port: number, ...args: string[]): Promise<string>;
}

/**
 * Starts three `--cluster-enabled` nodes (node timeout 2 s, bus ports picked freely via `cluster-port`),
 * joins them with `redis-cli --cluster create … --cluster-replicas 0`, and resolves when every node reports
 * `cluster_state:ok` and knows the others. With `replicas`, six nodes and `--cluster-replicas 1`: node
 * `i + 3` replicates node `i`, and it resolves once every replica's link to its primary is up. With
 * `password`, every node requires it (and uses it as masterauth).
 */
export async function startCluster(
  t: TestHooks,
  options: { password?: string; replicas?: boolean } = {},
): Promise<RedisCluster> {
  const password = options.password;
  const count = options.replicas ? 6 : 3;
  const nodes = await Promise.all(
    Array.from({ length: count }, async () => {
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
      options.replicas ? "1" : "0",
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
          const known = new RegExp(`^cluster_known_nodes:${count}$`, "m");
          return /^cluster_state:ok$/m.test(info) && known.test(info) ? true : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      ),
    ),
  );
  if (options.replicas) {
    // redis-cli pairs primaries and replicas itself (avoiding same-host pairs, which all of ours are):
    // make node i + 3 the replica of node i, as the interface promises, then wait for the links.
    await Promise.all(
      nodes.slice(3).map(async (replica, i) => {
        const primaryId = await nodes[i]!.cli("CLUSTER", "MYID");
        await replica.cli("CLUSTER", "REPLICATE", primaryId);
      }),
    );
    await Promise.all(
      nodes.slice(3).map((replica, i) =>
        pollUntil(
          `replica ${replica.url} in sync with ${nodes[i]!.url}`,
          async () => {
            const info = await replica.cli("INFO", "replication");
            const linked =
              /^master_link_status:up$/m.test(info) && info.includes(`master_port:${nodes[i]!.port}`);
            return linked ? true : undefined;
          },
          { timeoutMs: 15_000, intervalMs: 100 },
        ),
      ),
    );
  }
  return {
    nodes,
    url: nodes
      .slice(0, 3)
      .map((node) => node.url)
      .join(","),
    cli: async (port, ...args) => {
      const node = nodes.find((candidate) => candidate.port === port);
      if (!node)
        throw new Error(`no cluster node on port ${port} (nodes: ${nodes.map((n) => n.port).join(", ")})`);
      return node.cli(...args);
    },
  };
}
