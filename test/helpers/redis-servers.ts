import { join } from "node:path";
import { freePort } from "./free-port.js";
import {
  makeTempDir,
  pollUntil,
  redisCli,
  removeTempDir,
  spawnTracked,
  type TestHooks,
  type TrackedProcess,
} from "./redis-process.js";
import type { TlsCertificates } from "./tls-certificates.js";

export { type CliResult, redisCli, requireBinaries, type TestHooks } from "./redis-process.js";

/** A `redis-server` (or sentinel) process owned by one test; stopped and deleted at the test's teardown. */
export interface RedisServer {
  readonly host: "127.0.0.1";
  /** The port clients use: the TLS port when TLS is on (the plain port is then disabled). */
  readonly port: number;
  /** `127.0.0.1:<port>`: the REDIS_URL of REDIS_TYPE=single. */
  readonly url: string;
  /** The unix socket (mode 700) when started with `unixSocket: true`. */
  readonly socketPath?: string;
  /** Its private working directory (`--dir`). */
  readonly dir: string;
  /** redis-cli connection arguments: host, port, auth and TLS files. */
  readonly cliArgs: readonly string[];
  /**
   * Runs `redis-cli <cliArgs> args…` and resolves with stdout trimmed (`--raw` style output). Rejects when
   * redis-cli fails, prints on stderr (connection or AUTH failure), or the reply is a Redis error
   * (`ERR …`, `NOAUTH …`, `MOVED …`…); use {@link redisCli} to look at failures.
   */
  cli(...args: string[]): Promise<string>;
  /** What the server logged so far. */
  log(): string;
  /** Graceful stop (SIGTERM: shutdown without saving, without waiting for replicas); resolves on exit. */
  stop(): Promise<void>;
  /** SIGKILL, for "Redis died mid-test"; resolves on exit. */
  kill(): Promise<void>;
  /** Stops it if running, then starts it again with the same port and arguments; resolves when ready. */
  restart(): Promise<void>;
}

/** Options of {@link startRedis}. Passwords must not contain spaces or quotes (they go through argv). */
export interface RedisOptions {
  /** `requirepass`: the default user's password. */
  readonly password?: string;
  /**
   * An ACL user with `on >password ~* &* +@all`; `cli()` then authenticates as this user. The default
   * user is disabled, unless `password` is also given: then it stays enabled with that password.
   */
  readonly aclUser?: { readonly name: string; readonly password: string };
  /** Also listen on `<dir>/redis.sock` with permissions 700. */
  readonly unixSocket?: boolean;
  /** TLS only (`--port 0`): server certificate from `certificates`; client certificates required or not. */
  readonly tls?: { readonly certificates: TlsCertificates; readonly requireClientCert: boolean };
  /** Start as a replica of this server; start resolves once the replication link is up. */
  readonly replicaOf?: { readonly host: string; readonly port: number; readonly password?: string };
  /** Appended last, so they override the defaults. */
  readonly extraArgs?: readonly string[];
}

/** How to run one server on a given port; see {@link launchRedisServer}. */
export interface LaunchPlan {
  readonly args: readonly string[];
  readonly cliArgs: readonly string[];
}

const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;
const REDIS_ERROR =
  /^(ERR|WRONGTYPE|NOAUTH|WRONGPASS|NOPERM|MOVED|ASK|TRYAGAIN|CROSSSLOT|CLUSTERDOWN|READONLY|LOADING|BUSY|NOSCRIPT|MASTERDOWN|NOREPLICAS|EXECABORT|OOM|MISCONF|NOPROTO|UNBLOCKED|NOTBUSY|UNKILLABLE)\b/;

/**
 * Starts `redis-server` on a free loopback port (persistence off, own temp dir, log captured) and resolves
 * when it answers PING. Stopped with SIGKILL and its directory deleted at `t`'s teardown; the log is printed
 * as a comment when the test failed.
 */
export async function startRedis(t: TestHooks, options: RedisOptions = {}): Promise<RedisServer> {
  const dir = makeTempDir("redis");
  const socketPath = options.unixSocket ? join(dir, "redis.sock") : undefined;
  const server = await launchRedisServer(t, { name: "redis-server", dir, socketPath }, (port) => ({
    args: redisArgs(port, dir, options, socketPath),
    cliArgs: cliArgsFor(port, options),
  }));
  if (options.replicaOf) {
    await pollUntil(
      `replica ${server.url} linking to ${options.replicaOf.port}`,
      async () =>
        /^master_link_status:up$/m.test(await server.cli("INFO", "replication")) ? true : undefined,
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100 },
    );
  }
  return server;
}

function redisArgs(port: number, dir: string, options: RedisOptions, socketPath?: string): string[] {
  const args = ["--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no"];
  // 7.0 defaults would delay a replica's first sync by 5 s and make SIGTERM wait for lagging replicas.
  args.push("--repl-diskless-sync-delay", "0", "--shutdown-on-sigterm", "nosave now", "--logfile", "");
  const tls = options.tls;
  if (tls) {
    const files = tls.certificates;
    args.push("--port", "0", "--tls-port", String(port), "--tls-cert-file", files.serverCert);
    args.push("--tls-key-file", files.serverKey, "--tls-ca-cert-file", files.caCert);
    args.push("--tls-auth-clients", tls.requireClientCert ? "yes" : "no");
    if (options.replicaOf) args.push("--tls-replication", "yes");
  } else {
    args.push("--port", String(port));
  }
  if (socketPath) args.push("--unixsocket", socketPath, "--unixsocketperm", "700");
  if (options.password) args.push("--requirepass", options.password);
  const user = options.aclUser;
  if (user) {
    args.push("--user", user.name, "on", `>${user.password}`, "~*", "&*", "+@all");
    if (!options.password) args.push("--user", "default", "off");
  }
  const primary = options.replicaOf;
  if (primary) {
    args.push("--replicaof", primary.host, String(primary.port));
    if (primary.password) args.push("--masterauth", primary.password);
  }
  return [...args, ...(options.extraArgs ?? [])];
}

function cliArgsFor(port: number, options: RedisOptions): string[] {
  const args = ["-h", "127.0.0.1", "-p", String(port), "--no-auth-warning"];
  if (options.aclUser) args.push("--user", options.aclUser.name, "--pass", options.aclUser.password);
  else if (options.password) args.push("-a", options.password);
  const files = options.tls?.certificates;
  if (files)
    args.push("--tls", "--cacert", files.caCert, "--cert", files.clientCert, "--key", files.clientKey);
  return args;
}

/**
 * Runs `redis-server plan(port).args` on a free port, retrying on a fresh port when the one picked was taken
 * meanwhile, and resolves when `redis-cli plan.cliArgs PING` answers PONG. For sentinels and other variants.
 */
export async function launchRedisServer(
  t: TestHooks,
  where: { name: string; dir: string; socketPath?: string },
  plan: (port: number) => LaunchPlan | Promise<LaunchPlan>,
): Promise<RedisServer> {
  let proc: TrackedProcess | undefined;
  t.teardown(async () => {
    if (proc && !t.passing()) t.comment(`${where.name} log (${where.dir}):\n${proc.log().slice(-4000)}`);
    if (proc?.child.exitCode === null) proc.child.kill("SIGKILL");
    await proc?.exited;
    removeTempDir(where.dir);
  });
  const run = async (port: number, launch: LaunchPlan) => {
    proc = spawnTracked("redis-server", launch.args, where.dir);
    const current = proc;
    await pollUntil(
      `${where.name} on 127.0.0.1:${port}`,
      async () => {
        // The port was free when chosen, but another test process may have bound it since: the server
        // that answers must be the one just started (its pid), or this one is about to exit "in use".
        const reply = await redisCli([...launch.cliArgs, "INFO", "server"]);
        const pid = /^process_id:(\d+)/m.exec(reply.stdout)?.[1];
        if (pid !== undefined && pid === String(current.child.pid)) return true;
        if (pid !== undefined)
          throw new Error(`127.0.0.1:${port} is answered by another redis-server (pid ${pid})`);
        throw new Error(`INFO server: ${reply.stdout.trim()} ${reply.stderr.trim()}`);
      },
      {
        timeoutMs: READY_TIMEOUT_MS,
        giveUp: () =>
          current.child.exitCode !== null || current.child.signalCode !== null
            ? `exited before answering PING; its log:\n${current.log()}`
            : undefined,
      },
    ).catch(async (error: Error) => {
      const running = current.child.exitCode === null && current.child.signalCode === null;
      current.child.kill("SIGKILL");
      await current.exited;
      if (running) error.message += `; its log:\n${current.log()}`;
      throw Object.assign(error, { addressInUse: current.log().includes("Address already in use") });
    });
  };
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const launch = await plan(port);
    try {
      await run(port, launch);
      return serverHandle(port, where, launch, run, () => proc!);
    } catch (error) {
      if (attempt >= 3 || !(error as { addressInUse?: boolean }).addressInUse) throw error;
    }
  }
}

function serverHandle(
  port: number,
  where: { dir: string; socketPath?: string },
  launch: LaunchPlan,
  run: (port: number, launch: LaunchPlan) => Promise<void>,
  current: () => TrackedProcess,
): RedisServer {
  const running = () => current().child.exitCode === null && current().child.signalCode === null;
  const stop = async () => {
    if (!running()) return;
    current().child.kill("SIGTERM");
    const timer = setTimeout(() => current().child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await current().exited;
    clearTimeout(timer);
  };
  return {
    host: "127.0.0.1",
    port,
    url: `127.0.0.1:${port}`,
    ...(where.socketPath === undefined ? {} : { socketPath: where.socketPath }),
    dir: where.dir,
    cliArgs: launch.cliArgs,
    cli: async (...args) => {
      const result = await redisCli([...launch.cliArgs, ...args]);
      const stdout = result.stdout.trim();
      if (result.code !== 0 || result.stderr.trim() !== "" || REDIS_ERROR.test(stdout)) {
        throw new Error(
          `redis-cli -p ${port} ${args.join(" ")}: exit ${result.code}: ${stdout} ${result.stderr}`,
        );
      }
      return stdout;
    },
    log: () => current().log(),
    stop,
    kill: async () => {
      if (running()) current().child.kill("SIGKILL");
      await current().exited;
    },
    restart: async () => {
      await stop();
      await run(port, launch);
    },
  };
}
