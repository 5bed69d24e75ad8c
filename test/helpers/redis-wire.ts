import { connect, createServer, type Socket } from "node:net";

/**
 * What clients sent to Redis, read back as commands. Two ways to watch: a recording proxy in front of one
 * server (the exact bytes, per connection), and MONITOR on a server (what it executed, from every client;
 * used for cluster nodes, whose addresses the client learns from the cluster itself).
 */

/** A TCP proxy that forwards to `target` and keeps every byte clients sent; see {@link startRecordingProxy}. */
export interface RecordingProxy {
  /** `127.0.0.1:<port>`, to use in place of the target's address. */
  readonly url: string;
  /** Every client→server chunk since start or the last {@link clear}, per connection, in order. */
  sent(): Buffer[][];
  /** Forgets what was recorded (connections stay open). */
  clear(): void;
}

/** Listens on a free loopback port and forwards each connection to `target`, recording what clients send. */
export async function startRecordingProxy(
  t: { teardown(fn: () => unknown): void },
  target: { host: string; port: number },
): Promise<RecordingProxy> {
  const sockets = new Set<Socket>();
  let recorded: Buffer[][] = [];
  const server = createServer((client) => {
    const chunks: Buffer[] = [];
    recorded.push(chunks);
    let current = chunks;
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk: Buffer) => {
      // After clear(), a connection's next bytes start a new list.
      if (!recorded.includes(current)) {
        current = [];
        recorded.push(current);
      }
      current.push(Buffer.from(chunk));
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as { port: number };
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    url: `127.0.0.1:${port}`,
    sent: () => recorded.filter((chunks) => chunks.length > 0),
    clear: () => {
      recorded = [];
    },
  };
}

/**
 * Splits RESP request bytes into commands (arrays of bulk strings, as clients send them); throws on bytes
 * that are not exactly that, or on a trailing partial command.
 */
export function parseCommands(bytes: Buffer): string[][] {
  const commands: string[][] = [];
  let at = 0;
  const line = (): string => {
    const end = bytes.indexOf("\r\n", at);
    if (end < 0) throw new Error(`unterminated line at byte ${at}`);
    const text = bytes.toString("latin1", at, end);
    at = end + 2;
    return text;
  };
  while (at < bytes.length) {
    const header = line();
    if (!/^\*[1-9]\d*$/.test(header))
      throw new Error(`expected an array header, got ${JSON.stringify(header)}`);
    const args: string[] = [];
    for (let n = Number(header.slice(1)); n > 0; n--) {
      const size = line();
      if (!/^\$\d+$/.test(size))
        throw new Error(`expected a bulk string header, got ${JSON.stringify(size)}`);
      const length = Number(size.slice(1));
      if (bytes.toString("latin1", at + length, at + length + 2) !== "\r\n") {
        throw new Error(`bulk string of ${length} bytes not followed by CRLF at byte ${at}`);
      }
      args.push(bytes.toString("utf8", at, at + length));
      at += length + 2;
    }
    commands.push(args);
  }
  return commands;
}

/** A MONITOR session on one server; see {@link monitorRedis}. */
export interface RedisMonitor {
  /** The commands executed since start or the last {@link clear}, oldest first (MONITOR's own excluded). */
  commands(): string[][];
  clear(): void;
}

/** Sends MONITOR on a new connection to `target` (with `password`, after AUTH) and keeps what it reports. */
export async function monitorRedis(
  t: { teardown(fn: () => unknown): void },
  target: { host: string; port: number },
  password?: string,
): Promise<RedisMonitor> {
  const socket = connect(target.port, target.host);
  t.teardown(() => socket.destroy());
  let text = "";
  let commands: string[][] = [];
  // AUTH's +OK (when sent) comes first, then MONITOR's.
  let oksToWait = password === undefined ? 1 : 2;
  let started: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
    for (let end = text.indexOf("\r\n"); end >= 0; end = text.indexOf("\r\n")) {
      const line = text.slice(0, end);
      text = text.slice(end + 2);
      if (line === "+OK" && --oksToWait === 0) started();
      // +1700000000.123456 [0 127.0.0.1:40000] "INCRBY" "key" "1"
      const match = /^\+\d+\.\d+ \[\d+ [^\]]+\] (.*)$/.exec(line);
      if (match) commands.push(monitorArgs(match[1]!));
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  if (password !== undefined) socket.write(`*2\r\n$4\r\nAUTH\r\n$${password.length}\r\n${password}\r\n`);
  socket.write("*1\r\n$7\r\nMONITOR\r\n");
  await ready;
  return {
    commands: () => commands,
    clear: () => {
      commands = [];
    },
  };
}

/** MONITOR's `"a" "b\"c"` as `["a", "b\"c"]` (the keys and numbers these tests send need no other escape). */
function monitorArgs(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, "$1"));
}
