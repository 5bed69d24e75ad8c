/**
 * Where memcached nodes are: MEMCACHE_HOST_PORT items (`host:port`, `[ipv6]:port`, or a unix socket path,
 * as gomemcache's `ServerList` accepts them) and MEMCACHE_SRV answers.
 */

/** One node: its label as listed (the identity used for sharding and logs) and how to reach it. */
export interface MemcachedEndpoint {
  readonly label: string;
  readonly target: { readonly host: string; readonly port: number } | { readonly path: string };
}

/** Outcome of parsing one MEMCACHE_HOST_PORT item. */
export type EndpointParse =
  | { readonly ok: true; readonly endpoint: MemcachedEndpoint }
  | { readonly ok: false; readonly reason: string };

/**
 * Parses one item. As gomemcache, an item containing `/` is a unix socket path; anything else needs a port
 * (gomemcache resolves it with `net.ResolveTCPAddr`, which refuses a missing port).
 */
export function parseMemcachedEndpoint(item: string): EndpointParse {
  const label = item.trim();
  if (label.includes("/")) return { ok: true, endpoint: { label, target: { path: label } } };
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(label);
  const port = Number(match?.[3]);
  if (match === null || port < 1 || port > 65535) {
    return { ok: false, reason: `${JSON.stringify(label)} is not host:port, [ipv6]:port or a socket path` };
  }
  return { ok: true, endpoint: { label, target: { host: match[1] ?? match[2] ?? "", port } } };
}

/** Parses every item, throwing with the first problem (items are validated by the settings module). */
export function memcachedEndpoints(items: readonly string[]): MemcachedEndpoint[] {
  return items.map((item) => {
    const parsed = parseMemcachedEndpoint(item);
    if (!parsed.ok) throw new Error(`invalid memcache node: ${parsed.reason}`);
    return parsed.endpoint;
  });
}

/** One SRV answer (as `dns.resolveSrv` gives it). */
export interface SrvRecord {
  readonly name: string;
  readonly port: number;
}

/**
 * Nodes from SRV answers, ordered as the reference orders them: by the string `target:port` where target
 * is Go's absolute name (with its trailing dot), so that every replica, Go or ours, shards alike.
 */
export function endpointsFromSrv(records: readonly SrvRecord[]): MemcachedEndpoint[] {
  return records
    .map(({ name, port }) => {
      const host = name.replace(/\.$/, "");
      return { label: `${host}.:${port}`, target: { host, port } };
    })
    .sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}
