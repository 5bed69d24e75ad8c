import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Absolute path of a built entry point (tests run against `dist/`, built by `npm test`'s pretest). */
export function distEntry(name: string): string {
  return fileURLToPath(new URL(`../../dist/cmd/${name}.js`, import.meta.url));
}

/** A running daemon and what it printed. */
export interface DaemonProcess {
  readonly child: ChildProcess;
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly debugPort: number;
  /** Everything written to stderr so far. */
  logs(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ChildProcess>();
// A test process that ends (tap timeout, failure, normal exit) takes its daemons with it.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}

/** Settings every test daemon gets unless overridden: memory backend, ephemeral loopback ports. */
export const BASE_ENV: Readonly<Record<string, string>> = {
  BACKEND_TYPE: "memory",
  HOST: "127.0.0.1",
  PORT: "0",
  GRPC_HOST: "127.0.0.1",
  GRPC_PORT: "0",
  DEBUG_HOST: "127.0.0.1",
  DEBUG_PORT: "0",
  USE_STATSD: "false",
  RUNTIME_WATCH_ROOT: "false",
  RUNTIME_SUBDIRECTORY: "",
  RUNTIME_APPDIRECTORY: "config",
  // Each daemon its own users database, gone when it exits; tests of persistence pass a file.
  DATABASE_URL: "sqlite::memory:",
  // Cheap password hashes: tests create many users, and the cost is not what they check.
  USERS_PASSWORD_SCRYPT_LOG_N: "10",
  // Room for the bursts of concurrent creates tests make; the bound itself is tested with its own value.
  USERS_PASSWORD_HASH_QUEUE: "1000",
};

/** Where and on what a test daemon starts, beyond its settings. */
export interface DaemonSpawnOptions {
  /** Working directory (relative paths in settings resolve here); default: the test's own. */
  readonly cwd?: string;
  /** The settings `env` goes on top of; default {@link BASE_ENV}. */
  readonly baseEnv?: Readonly<Record<string, string>>;
  /** Script Node runs (a symlink such as the image's `/bin/ratelimit`); default `dist/cmd/ratelimitd.js`. */
  readonly entry?: string;
  /** Command-line arguments after the script; default none. */
  readonly args?: readonly string[];
  /** Run as this user and group (the test must run as root to switch); default the test's own. */
  readonly user?: { readonly uid: number; readonly gid: number };
}

/**
 * Starts `dist/cmd/ratelimitd.js` with `env` on top of {@link BASE_ENV} and waits until its HTTP port
 * listens (ports are read from its `Listening for …` log lines). Rejects with the logs if it exits first.
 */
export function startDaemon(
  env: Record<string, string>,
  timeoutMs = 20_000,
  options: DaemonSpawnOptions = {},
): Promise<DaemonProcess> {
  const child = track(
    spawn(process.execPath, [options.entry ?? distEntry("ratelimitd"), ...(options.args ?? [])], {
      cwd: options.cwd,
      ...options.user,
      env: { PATH: process.env.PATH ?? "", ...(options.baseEnv ?? BASE_ENV), ...env },
      stdio: ["ignore", "ignore", "pipe"],
    }),
  );
  let logs = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`daemon did not start in ${timeoutMs} ms:\n${logs}`));
    }, timeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code} before listening:\n${logs}`));
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      logs += chunk.toString();
      const port = (what: string) =>
        Number(new RegExp(`Listening for ${what} on '[^']*:(\\d+)'`).exec(logs)?.[1]);
      if (!/Listening for HTTP/.test(logs)) return;
      clearTimeout(timer);
      resolve({
        child,
        httpPort: port("HTTP"),
        grpcPort: port("gRPC"),
        debugPort: port("debug"),
        logs: () => logs,
        stop: (signal = "SIGTERM") => {
          if (child.exitCode === null) child.kill(signal);
          return exited;
        },
      });
    });
  });
}

/** Runs a daemon that is expected to exit by itself (bad settings); resolves with its code and logs. */
export function runDaemonToExit(env: Record<string, string>): Promise<{ code: number | null; logs: string }> {
  const child = track(
    spawn(process.execPath, [distEntry("ratelimitd")], {
      env: { PATH: process.env.PATH ?? "", ...BASE_ENV, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    }),
  );
  let logs = "";
  child.stderr!.on("data", (chunk: Buffer) => (logs += chunk.toString()));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, logs })));
}
