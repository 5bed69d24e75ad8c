/**
 * Where memcached nodes are: MEMCACHE_HOST_PORT items (`host:port`, `[ipv6]:port`, or a unix socket path,
 * as gomemcache's `ServerList` accepts them; parsed by the settings) and MEMCACHE_SRV answers.
 */

/** One node: its label as listed (the identity used for sharding and logs) and how to reach it. */
export interface MemcachedEndpoint {
  readonly label: string;
  readonly target: { readonly host: string; readonly port: number } | { readonly path: string };
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
