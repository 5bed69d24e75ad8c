import { spawn } from "node:child_process";
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
} from "node:fs";
import { delimiter, dirname, join } from "node:path";
import pg from "pg";
import tap from "tap";
import { freePort } from "./free-port.js";
import { makeTempDir, pollUntil, removeTempDir, spawnTracked, type TrackedProcess } from "./redis-process.js";

/** Where Debian's `postgresql-<version>` packages put their programs: `<root>/<version>/bin`. */
export const DEBIAN_POSTGRES_ROOT = "/usr/lib/postgresql";

/**
 * The directory holding PostgreSQL's `initdb` and `postgres`: the one `initdb` on PATH resolves to (symlinks
 * followed), else the newest `<libRoot>/<version>/bin` that has both. Debian puts neither on PATH.
 */
export function findPostgresBinDir(path: string, libRoot = DEBIAN_POSTGRES_ROOT): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    if (!executable(join(dir, "initdb"))) continue;
    const real = dirname(realpathSync(join(dir, "initdb")));
    if (executable(join(real, "postgres"))) return real;
  }
  let versions: string[];
  try {
    versions = readdirSync(libRoot);
  } catch {
    return undefined; // no such directory: PostgreSQL is not installed the Debian way
  }
  const newestFirst = versions.sort((a, b) => b.localeCompare(a, "en", { numeric: true }));
  return newestFirst
    .map((version) => join(libRoot, version, "bin"))
    .find((bin) => executable(join(bin, "initdb")) && executable(join(bin, "postgres")));
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false; // missing or not executable
  }
}

/** A throwaway PostgreSQL server: trust auth, superuser `postgres`, durability off. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** Its data directory, inside a temporary directory removed by {@link stop}. */
  readonly dataDir: string;
  /** What it logged so far. */
  log(): string;
  /** Fast shutdown (SIGINT), then the directory is deleted; resolves when both are done. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * Runs `initdb` and `postgres` from `binDir` in a fresh temporary directory, on a free loopback port (TCP
 * only, no unix socket), and resolves once it accepts connections. PostgreSQL refuses to run as root, so
 * under root both run as the `postgres` system user (`nobody` without one) through `setpriv`, owning the
 * data directory. Retries on a fresh port when the one picked was taken meanwhile.
 */
export async function startPostgres(binDir: string): Promise<PostgresServer> {
  const dir = makeTempDir("postgres");
  const dataDir = join(dir, "data");
  const as = unprivilegedUser();
  mkdirSync(dataDir, { mode: 0o700 });
  if (as !== undefined) {
    chmodSync(dir, 0o711); // the user must reach data/ inside this root-owned directory
    chownSync(dataDir, as.uid, as.gid);
  }
  const command = (program: string, args: string[]): [string, string[]] =>
    as === undefined
      ? [join(binDir, program), args]
      : [
          "setpriv",
          [`--reuid=${as.uid}`, `--regid=${as.gid}`, "--clear-groups", "--", join(binDir, program), ...args],
        ];
  try {
    await runToEnd(
      ...command("initdb", [
        "-D",
        dataDir,
        "-A",
        "trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--locale=C",
        "-N",
      ]),
      dir,
    );
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const proc = spawnTracked(...command("postgres", serverArgs(dataDir, port)), dir);
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      try {
        await waitUntilReady(url, proc);
      } catch (error) {
        if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
        await proc.exited;
        if (attempt < 3 && /could not bind|Address already in use/.test(proc.log())) continue;
        throw error;
      }
      return serverHandle(url, port, dataDir, dir, proc);
    }
  } catch (error) {
    removeTempDir(dir);
    throw error;
  }
}

function serverArgs(dataDir: string, port: number): string[] {
  const settings = {
    listen_addresses: "127.0.0.1",
    unix_socket_directories: "",
    // Throwaway data: nothing needs to survive a crash.
    fsync: "off",
    full_page_writes: "off",
    synchronous_commit: "off",
    shared_buffers: "16MB",
  };
  return [
    "-D",
    dataDir,
    "-p",
    String(port),
    ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
  ];
}

async function waitUntilReady(url: string, proc: TrackedProcess): Promise<void> {
  await pollUntil(
    `PostgreSQL at ${url}`,
    async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
      // A refused connection also emits "error" on the client; the rejected connect() reports it.
      client.on("error", () => {});
      try {
        await client.connect();
        await client.query("SELECT 1");
        return true;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    {
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 50,
      giveUp: () =>
        proc.child.exitCode !== null || proc.child.signalCode !== null
          ? `exited before accepting connections; its log:\n${proc.log()}`
          : undefined,
    },
  );
}

function serverHandle(
  url: string,
  port: number,
  dataDir: string,
  dir: string,
  proc: TrackedProcess,
): PostgresServer {
  let stopped: Promise<void> | undefined;
  const stop = async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill("SIGINT");
      const timer = setTimeout(() => proc.child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await proc.exited;
      clearTimeout(timer);
    }
    removeTempDir(dir);
  };
  return { url, port, dataDir, log: proc.log, stop: () => (stopped ??= stop()) };
}

/** Under root, the user PostgreSQL runs as: `postgres` (Debian's package creates it), else `nobody`. */
function unprivilegedUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const users = new Map(
    readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .map(([name, , uid, gid]) => [name, { uid: Number(uid), gid: Number(gid) }] as const),
  );
  return users.get("postgres") ?? users.get("nobody") ?? { uid: 65534, gid: 65534 };
}

function runToEnd(command: string, args: string[], cwd: string): Promise<void> {
  const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.once("error", (error) => reject(new Error(`${command}: ${error.message}`)));
    child.once("close", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${[command, ...args].join(" ")} exited with ${code}:\n${output}`)),
    );
  });
}

/** Where the tests' PostgreSQL is, or why there is none. */
export type TestPostgres = { readonly url: string } | { readonly problem: string };

let shared: Promise<TestPostgres> | undefined;

/**
 * The PostgreSQL this test process uses: TEST_POSTGRES_URL when set; else a throwaway server started on
 * first use and shared by the process's tests (tap runs each test file in a process of its own, so one
 * server per file), stopped once all of them have ended. A `problem` when the binaries are missing
 * (PATH, then {@link DEBIAN_POSTGRES_ROOT}); rejects when they are there but the server does not start.
 */
export function testPostgres(
  env: NodeJS.ProcessEnv = process.env,
  libRoot = DEBIAN_POSTGRES_ROOT,
): Promise<TestPostgres> {
  const given = env.TEST_POSTGRES_URL;
  if (given !== undefined && given !== "") return Promise.resolve({ url: given });
  const binDir = findPostgresBinDir(env.PATH ?? "", libRoot);
  if (binDir === undefined) {
    return Promise.resolve({
      problem: `PostgreSQL's initdb and postgres are neither on PATH nor in ${libRoot}/<version>/bin (Debian: apt-get install -y postgresql), and TEST_POSTGRES_URL is not set`,
    });
  }
  if (process.getuid?.() === 0 && findOnPath("setpriv", env.PATH ?? "") === undefined) {
    return Promise.resolve({
      problem: "setpriv is not on PATH (Debian: util-linux); it runs PostgreSQL unprivileged under root",
    });
  }
  shared ??= startPostgres(binDir).then((server) => {
    tap.teardown(() => server.stop());
    return { url: server.url };
  });
  return shared;
}

function findOnPath(name: string, path: string): string | undefined {
  return path
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find(executable);
}
