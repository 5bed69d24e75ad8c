/**
 * REDIS_URL in the reference's three shapes: `single` is `host:port`, a unix socket path, or a
 * `redis://[user:pass@]host:port` URL; `sentinel` is `master,host:port,…`; `cluster` is `host:port,…`.
 */

/** A TCP endpoint, with credentials when the URL carried them. */
export interface RedisHostPort {
  readonly host: string;
  readonly port: number;
  readonly username?: string;
  readonly password?: string;
}

export type RedisTopology =
  | { readonly type: "single"; readonly target: RedisHostPort | { readonly path: string } }
  | { readonly type: "sentinel"; readonly masterName: string; readonly sentinels: readonly RedisHostPort[] }
  | { readonly type: "cluster"; readonly nodes: readonly RedisHostPort[] };

/** Parses one `host:port`, `[ipv6]:port` or `redis://user:pass@host:port` item (port 6379 when absent). */
export function parseHostPort(text: string): RedisHostPort {
  const trimmed = text.trim();
  if (/^rediss?:\/\//.test(trimmed)) {
    const url = new URL(trimmed);
    return {
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port === "" ? 6379 : Number(url.port),
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    };
  }
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(trimmed);
  if (match === null) return { host: trimmed, port: 6379 };
  return { host: match[1] ?? match[2] ?? "", port: Number(match[3]) };
}

/** Interprets REDIS_URL for a REDIS_TYPE and REDIS_SOCKET_TYPE (validated by the settings module). */
export function parseRedisTopology(
  type: "single" | "sentinel" | "cluster",
  socketType: "tcp" | "unix",
  url: string,
) {
  const items = url.split(",");
  switch (type) {
    case "single":
      return {
        type,
        target: socketType === "unix" && !url.includes("://") ? { path: url } : parseHostPort(url),
      } as const;
    case "sentinel":
      return { type, masterName: items[0]!.trim(), sentinels: items.slice(1).map(parseHostPort) } as const;
    case "cluster":
      return { type, nodes: items.map(parseHostPort) } as const;
  }
}

/** `password` or `user:password`, split at the first colon (REDIS_AUTH, REDIS_SENTINEL_AUTH). */
export function parseRedisAuth(text: string): { username?: string; password?: string } {
  if (text === "") return {};
  const colon = text.indexOf(":");
  return colon < 0 ? { password: text } : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The URL for logs: each item's `user:password@` replaced by `*****@`, as the reference masks it. */
export function maskRedisUrl(url: string): string {
  return url
    .split(",")
    .map((item) => item.replace(/^(\w+:\/\/)[^@/]*@/, "$1*****@"))
    .join(",");
}
