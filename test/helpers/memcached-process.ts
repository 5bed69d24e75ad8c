import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { freePort } from "./free-port.js";
import {
  makeTempDir,
  pollUntil,
  removeTempDir,
  spawnTracked,
  type TestHooks,
  type TrackedProcess,
} from "./redis-process.js";
import type { TlsCertificates } from "./tls-certificates.js";

export { requireBinaries } from "./redis-process.js";

/** A `memcached` process owned by one test; killed and its directory deleted at the test's teardown. */
export interface MemcachedServer {
  readonly host: "127.0.0.1";
  readonly port: number;
  /** `127.0.0.1:<port>`: a MEMCACHE_HOST_PORT item (the socket path when started with `unixSocket`). */
  readonly url: string;
  /**
   * Sends one text-protocol command (without its CRLF) on a fresh connection and resolves with the reply
   * once `complete` says it is whole (default: one line).
   */
  command(line: string, complete?: (reply: string) => boolean): Promise<string>;
  /** The value stored under `key` (`mg key v`), undefined when absent. */
  valueOf(key: string): Promise<string | undefined>;
  /** Seconds `key` has left (`mg key t`): -2 when absent, -1 when it never expires. */
  ttlOf(key: string): Promise<number>;
  /** Every key it holds (`lru_crawler metadump all`), decoded. */
  keys(): Promise<string[]>;
  /** `stats`: general-purpose counters by name. */
  stats(): Promise<Record<string, number>>;
  /** What it logged so far. */
  log(): string;
  /** SIGKILL, for "memcached died mid-test"; resolves on exit. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing is answered (a hung node). */
  pause(): void;
  /** SIGCONT after {@link pause}. */
  resume(): void;
  /** Starts it again (empty) on the same port; resolves when it answers. */
  restart(): Promise<void>;
}

/** Options of {@link startMemcached}. */
export interface MemcachedOptions {
  /** TLS only, with the server certificate from `certificates`; client certificates required or not. */
  readonly tls?: { readonly certificates: TlsCertificates; readonly requireClientCert: boolean };
  /** Listen on `<dir>/memcached.sock` instead of TCP. */
  readonly unixSocket?: boolean;
  /** This port rather than a free one (a store already waiting for it); not retried elsewhere. */
  readonly port?: number;
}

const READY_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 5_000;

/**
 * Starts `memcached` on a free loopback port (64 MiB, no UDP, own temp dir, output captured) and resolves
 * once it answers `version`. A port taken meanwhile is retried on a fresh one.
 */
export async function startMemcached(t: TestHooks, options: MemcachedOptions = {}): Promise<MemcachedServer> {
  const dir = makeTempDir("memcached");
  const socketPath = options.unixSocket ? join(dir, "memcached.sock") : undefined;
  let proc: TrackedProcess | undefined;
  t.teardown(async () => {
    if (proc && !t.passing()) t.comment(`memcached log (${dir}):\n${proc.log().slice(-4000)}`);
    if (proc?.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc?.exited;
    removeTempDir(dir);
  });
  const open = (port: number) => () => openSocket(port, socketPath, options.tls);
  const run = async (port: number) => {
    const current = spawnTracked("memcached", memcachedArgs(port, socketPath, options), dir);
    proc = current;
    await pollUntil(
      `memcached on ${socketPath ?? `127.0.0.1:${port}`}`,
      // The port was free when chosen, but another test process may have bound it since: the memcached
      // that answers must be the one just started (its pid), or this one is about to exit "in use".
      async () => {
        const stats = await request(open(port), "stats", (reply) => reply.endsWith("END\r\n"));
        return `\r\n${stats}`.includes(`\r\nSTAT pid ${current.child.pid}\r\n`) ? true : undefined;
      },
      {
        timeoutMs: READY_TIMEOUT_MS,
        giveUp: () => (current.child.exitCode !== null ? `exited; its log:\n${current.log()}` : undefined),
      },
    ).catch(async (error: Error) => {
      current.child.kill("SIGKILL");
      await current.exited;
      throw Object.assign(error, { addressInUse: current.log().includes("Address already in use") });
    });
  };
  for (let attempt = 1; ; attempt++) {
    const port = socketPath ? 0 : (options.port ?? (await freePort()));
    try {
      await run(port);
      return handle(port, socketPath, open(port), run, () => proc!);
    } catch (error) {
      const inUse = (error as { addressInUse?: boolean }).addressInUse;
      if (attempt >= 3 || !inUse || options.port !== undefined) throw error;
    }
  }
}

function memcachedArgs(port: number, socketPath: string | undefined, options: MemcachedOptions): string[] {
  const args = ["-U", "0", "-m", "64", "-u", "root", "-t", "2"];
  if (socketPath) args.push("-s", socketPath, "-a", "0700");
  else args.push("-l", "127.0.0.1", "-p", String(port));
  const tls = options.tls;
  if (tls) {
    const files = tls.certificates;
    const verify = tls.requireClientCert ? 2 : 0;
    args.push("-Z", "-o", `ssl_chain_cert=${files.serverCert},ssl_key=${files.serverKey}`);
    args.push("-o", `ssl_ca_cert=${files.caCert},ssl_verify_mode=${verify}`);
  }
  return args;
}

function handle(
  port: number,
  socketPath: string | undefined,
  open: () => Socket,
  run: (port: number) => Promise<void>,
  current: () => TrackedProcess,
): MemcachedServer {
  const running = () => current().child.exitCode === null && current().child.signalCode === null;
  const kill = async () => {
    if (!running()) return;
    current().child.kill("SIGKILL");
    await current().exited;
  };
  const command = (line: string, complete?: (reply: string) => boolean) => request(open, line, complete);
  return {
    host: "127.0.0.1",
    port,
    url: socketPath ?? `127.0.0.1:${port}`,
    command,
    valueOf: async (key) => {
      const reply = await command(`mg ${key} v`, (r) => r === "EN\r\n" || valueLine(r) !== undefined);
      return reply === "EN\r\n" ? undefined : valueLine(reply);
    },
    ttlOf: async (key) => {
      const reply = await command(`mg ${key} t`);
      if (reply === "EN\r\n") return -2;
      const ttl = /^HD t(-?\d+)\r\n$/.exec(reply)?.[1];
      if (ttl === undefined) throw new Error(`mg ${key} t: unexpected reply ${JSON.stringify(reply)}`);
      return Number(ttl);
    },
    keys: async () => {
      // A crawl still running (the previous dump's) answers BUSY: ask again.
      const reply = await pollUntil(
        "lru_crawler metadump",
        async () => {
          const r = await command(
            "lru_crawler metadump all",
            (r) => r.endsWith("END\r\n") || r.startsWith("BUSY"),
          );
          return r.startsWith("BUSY") ? undefined : r;
        },
        { timeoutMs: COMMAND_TIMEOUT_MS, intervalMs: 20 },
      );
      return [...reply.matchAll(/^key=(\S+)/gm)].map((m) => decodeURIComponent(m[1]!));
    },
    stats: async () => {
      const reply = await command("stats", (r) => r.endsWith("END\r\n"));
      return Object.fromEntries(
        [...reply.matchAll(/^STAT (\S+) (\S+)\r$/gm)].map((m) => [m[1]!, Number(m[2])]),
      );
    },
    log: () => current().log(),
    kill,
    pause: () => current().child.kill("SIGSTOP"),
    resume: () => current().child.kill("SIGCONT"),
    restart: async () => {
      await kill();
      await run(port);
    },
  };
}

/** The data of a complete `VA <size> …` reply, or undefined while incomplete. */
function valueLine(reply: string): string | undefined {
  const header = /^VA (\d+)[^\r]*\r\n/.exec(reply);
  if (header === null) return undefined;
  const start = header[0].length;
  const size = Number(header[1]);
  return reply.length >= start + size + 2 ? reply.slice(start, start + size) : undefined;
}

function openSocket(port: number, socketPath: string | undefined, tls: MemcachedOptions["tls"]): Socket {
  const where = socketPath ? { path: socketPath } : { host: "127.0.0.1", port };
  if (!tls) return netConnect(where);
  const files = tls.certificates;
  return tlsConnect({
    ...where,
    ca: readFileSync(files.caCert),
    cert: readFileSync(files.clientCert),
    key: readFileSync(files.clientKey),
    servername: "localhost",
  });
}

/** One command on a fresh connection; the reply once complete (default: the first line). */
function request(
  open: () => Socket,
  line: string,
  complete: (reply: string) => boolean = (r) => r.endsWith("\r\n"),
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = open();
    let reply = "";
    const timer = setTimeout(
      () => finish(new Error(`${line}: no complete reply in ${COMMAND_TIMEOUT_MS} ms`)),
      COMMAND_TIMEOUT_MS,
    );
    const finish = (error?: Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(reply);
    };
    socket.on("error", finish);
    socket.on("close", () => finish(new Error(`${line}: connection closed before a complete reply`)));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString("latin1");
      if (complete(reply)) finish();
    });
    socket.write(`${line}\r\n`);
  });
}
