import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** The part of a tap test the Redis helpers use: teardown registration and failure reporting. */
export interface TestHooks {
  teardown(fn: () => unknown): void;
  passing(): boolean;
  comment(...message: unknown[]): void;
}

/** The part of a tap test {@link requireBinaries} reports through. */
export interface BinaryCheckHooks {
  skip(name: string, cb: () => void): unknown;
  fail(message: string): unknown;
}

/**
 * Checks that every binary is on PATH. When one is missing: with `CI=true` the test fails (a CI image
 * without Redis must not pass silently); elsewhere it records a skip and prints a loud line on stderr.
 * Returns false in both cases, so tests write `if (!requireBinaries(t, ["redis-server"])) return;`.
 */
export function requireBinaries(
  t: BinaryCheckHooks,
  names: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const missing = names.filter((name) => !onPath(name, env.PATH ?? ""));
  if (missing.length === 0) return true;
  const packages = [...new Set(missing.map((name) => DEBIAN_PACKAGES[name] ?? name))];
  const message = `missing binaries on PATH: ${missing.join(", ")} (Debian: apt-get install -y ${packages.join(" ")})`;
  if (env.CI === "true") {
    t.fail(`${message}; CI=true, so this is a failure`);
  } else {
    console.error(`\n!!!!! SKIPPING: ${message} !!!!!\n`);
    t.skip(`SKIPPED: ${message}`, () => {});
  }
  return false;
}

const DEBIAN_PACKAGES: Readonly<Record<string, string>> = {
  "redis-server": "redis-server",
  "redis-cli": "redis-tools",
  h2load: "nghttp2-client",
};

function onPath(name: string, path: string): boolean {
  return path.split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false; // not in this PATH entry
    }
  });
}

/** What a finished `redis-cli` run printed; `code` is null when it was killed on timeout. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `redis-cli args…` to completion (killed after `timeoutMs`). Never rejects on a failed command:
 * redis-cli exits 0 on error replies and prints them on stdout (`NOAUTH Authentication required.`).
 */
export function redisCli(args: readonly string[], timeoutMs = 10_000): Promise<CliResult> {
  const child = spawn("redis-cli", args, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) => {
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}` });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A child process whose output is kept, and which cannot outlive the test process (see below). */
export interface TrackedProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Everything it printed on stdout and stderr (the last 256 KiB). */
  log(): string;
}

const MAX_LOG_CHARS = 256 * 1024;
const liveChildren = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let watchdog: ChildProcess | undefined;

/** Spawns `command` with its output captured and registered for clean-up however this process ends. */
export function spawnTracked(command: string, args: readonly string[], cwd: string): TrackedProcess {
  installCleanup();
  const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const append = (chunk: Buffer) => {
    log += chunk.toString();
    if (log.length > MAX_LOG_CHARS) log = log.slice(-MAX_LOG_CHARS);
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  liveChildren.add(child);
  if (child.pid !== undefined) watchdog?.stdin?.write(`+${child.pid}\n`);
  const exited = new Promise<number | null>((resolve) => {
    child.once("error", (error) => {
      append(Buffer.from(`spawn ${command} failed: ${error.message}\n`));
      liveChildren.delete(child);
      resolve(null);
    });
    child.once("exit", (code) => {
      liveChildren.delete(child);
      if (child.pid !== undefined) watchdog?.stdin?.write(`-${child.pid}\n`);
      resolve(code);
    });
  });
  return { child, exited, log: () => log };
}

/** A fresh directory under the OS temp dir (short, so unix socket paths stay under 108 bytes). */
export function makeTempDir(prefix: string): string {
  installCleanup();
  const dir = mkdtempSync(join(tmpdir(), `ratelimitd-${prefix}-`));
  tempDirs.add(dir);
  watchdog?.stdin?.write(`+${dir}\n`);
  return dir;
}

/** Removes a directory made by {@link makeTempDir}. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
  watchdog?.stdin?.write(`-${dir}\n`);
}

// Teardowns cover normal ends; the "exit" hook covers uncaught errors and process.exit(). A tap timeout
// kills the test process with SIGALRM and a crash may SIGKILL it: neither runs any JS, so a detached
// watchdog holds the other end of a pipe and, when that pipe closes, SIGKILLs the children and deletes
// the directories still registered. Lines: "+pid" / "-pid" for processes, "+/dir" / "-/dir" for dirs.
const WATCHDOG = `
const live = new Set(); let rest = "";
process.stdin.on("data", (chunk) => {
  const lines = (rest + chunk).split("\\n"); rest = lines.pop();
  for (const line of lines) (line[0] === "+" ? live.add(line.slice(1)) : live.delete(line.slice(1)));
});
process.stdin.on("end", () => {
  for (const item of live) if (!item.startsWith("/")) try { process.kill(Number(item), "SIGKILL"); } catch {}
  for (const item of live) if (item.startsWith("/")) require("node:fs").rmSync(item, { recursive: true, force: true });
  process.exit(0);
});`;

function installCleanup(): void {
  if (watchdog !== undefined) return;
  watchdog = spawn(process.execPath, ["-e", WATCHDOG], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  // A broken pipe only means the watchdog is gone; the exit hook below still runs.
  watchdog.stdin?.on("error", () => {});
  process.once("exit", () => {
    for (const child of liveChildren) child.kill("SIGKILL");
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
}

/**
 * Calls `attempt` every `intervalMs` until it returns a value other than undefined, and returns it.
 * Errors thrown by `attempt` count as "not yet". `giveUp` is checked first each round: a string it returns
 * ends the wait at once with that reason (a process that exited will never become ready).
 */
export async function pollUntil<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number; giveUp?: () => string | undefined },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last = "";
  for (;;) {
    const reason = options.giveUp?.();
    if (reason !== undefined) throw new Error(`${what}: ${reason}`);
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not done after ${options.timeoutMs} ms${last ? ` (last error: ${last})` : ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}
