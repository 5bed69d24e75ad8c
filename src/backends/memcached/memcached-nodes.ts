import { crc32 } from "node:zlib";
import type { MemcachedEndpoint } from "./memcached-address.js";
import type { MemcachedConnection } from "./memcached-connection.js";

/** A node of the list and its connections. */
export interface MemcachedNode {
  readonly label: string;
  readonly connections: readonly MemcachedConnection[];
}

/** How the node list is built. */
export interface MemcachedNodesOptions {
  /** MEMCACHE_MAX_IDLE_CONNS: connections kept to each node (below 1: gomemcache's default, 2). */
  readonly connectionsPerNode: number;
  /** Opens (lazily) one connection to a node. */
  readonly connect: (endpoint: MemcachedEndpoint) => MemcachedConnection;
}

/** gomemcache's `DefaultMaxIdleConns`. */
const DEFAULT_CONNECTIONS_PER_NODE = 2;

/**
 * The ordered node list and which connection serves a key. The node is gomemcache's `ServerList` choice,
 * `crc32(key) mod n` over the list in its given order, so that ratelimitd and reference replicas given the
 * same list share every counter (a fleet can move over replica by replica). It is not a hash ring: changing
 * the list moves most keys, which costs at most the current windows' counts. Within a node, a key always
 * uses the same connection (`floor(crc32 / n) mod connections`), so one replica's operations on a key reach
 * memcached in the order they were sent.
 */
export class MemcachedNodes {
  readonly #options: MemcachedNodesOptions;
  readonly #perNode: number;
  #nodes: MemcachedNode[] = [];

  constructor(options: MemcachedNodesOptions) {
    this.#options = options;
    this.#perNode =
      options.connectionsPerNode >= 1 ? options.connectionsPerNode : DEFAULT_CONNECTIONS_PER_NODE;
  }

  /** The nodes, in sharding order. */
  get list(): readonly MemcachedNode[] {
    return this.#nodes;
  }

  /**
   * Replaces the list (an SRV refresh), keeping the connections of nodes still listed and closing the
   * others once their operations in flight are answered. Returns whether the list changed.
   */
  replace(endpoints: readonly MemcachedEndpoint[]): boolean {
    const labels = (nodes: readonly { label: string }[]) => nodes.map((n) => n.label).join(",");
    if (labels(endpoints) === labels(this.#nodes)) return false;
    const spare = new Map<string, MemcachedNode[]>();
    for (const node of this.#nodes) spare.set(node.label, [...(spare.get(node.label) ?? []), node]);
    this.#nodes = endpoints.map(
      (endpoint) =>
        spare.get(endpoint.label)?.shift() ?? {
          label: endpoint.label,
          connections: Array.from({ length: this.#perNode }, () => this.#options.connect(endpoint)),
        },
    );
    for (const nodes of spare.values()) for (const node of nodes) closeNode(node);
    return true;
  }

  /** The connection for `key`, or undefined when the list is empty. */
  connectionFor(key: string): MemcachedConnection | undefined {
    const nodes = this.#nodes;
    if (nodes.length === 0) return undefined;
    const checksum = crc32(key);
    const node = nodes[checksum % nodes.length]!;
    return node.connections[Math.floor(checksum / nodes.length) % node.connections.length];
  }

  /** Closes every connection (after what is in flight); operations after this fail at once. */
  close(): void {
    for (const node of this.#nodes) closeNode(node);
  }
}

function closeNode(node: MemcachedNode): void {
  for (const connection of node.connections) connection.close();
}
