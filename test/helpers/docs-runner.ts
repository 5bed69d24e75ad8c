import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Test } from "tap";
import { SETTINGS_TABLE } from "../../src/settings/settings-table.js";
import { type DocBlock, jsonMatches, logShows, type ShellExample, textMatches } from "./docs-blocks.js";
import { freePort } from "./free-port.js";
import { startMemcached } from "./memcached-process.js";
import { startRedis } from "./redis-servers.js";
import { stayInsideWindow } from "./window-guard.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The ports the docs write, each moved to a free one (or to the page's own Redis or memcached): the daemon's
 * three, Prometheus's, an xDS server's, an OTLP collector's, and 6380, where the docs show what happens
 * when nothing listens.
 */
const DOCUMENTED_PORTS = [8080, 8081, 6070, 9090, 18000, 4318, 6380] as const;
const REDIS_PORT = 6379;
const MEMCACHED_PORT = 11211;

/** Longest a page's examples may take; its counts in hourly windows are read inside one hour. */
const PAGE_BUDGET_SECONDS = 150;
const BLOCK_TIMEOUT_MS = 90_000;
const READY_TIMEOUT_MS = 60_000;

/** What one page's run needs: its ports, its environment, its background daemons. */
interface PageContext {
  readonly ports: ReadonlyMap<number, number>;
  readonly env: NodeJS.ProcessEnv;
  background: Background | undefined;
}

/** Process groups of background daemons, killed if the test process ends without stopping them. */
const groups = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of groups) killGroup(child, "SIGKILL");
});

interface Background {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/**
 * Runs a page's shell examples top to bottom as a reader would, in the checkout (the repository root), with
 * the documented ports moved to free ones — in the commands and in the outputs they must print — and a users
 * database of the page's own (DATABASE_URL in a temporary directory). `npm ci && ` before a background
 * `npm start` is dropped: the checkout is installed and built already. A page whose examples name
 * localhost:6379 or :11211 gets a redis-server or memcached of its own there.
 */
export async function runDocsPage(t: Test, page: string, examples: readonly ShellExample[]): Promise<void> {
  const context = await pageContext(t, examples);
  t.teardown(() => stopBackground(context));
  await stayInsideWindow(3600, PAGE_BUDGET_SECONDS);
  for (const example of examples) {
    if (example.kind === "not-runnable") continue;
    const where = `${page}:${example.block.line}`;
    const script = moved(example.block.text, context.ports);
    if (example.kind === "background") {
      await stopBackground(context);
      context.background = await startBackground(t, script.replace(/^npm ci && /m, ""), context, where);
      if (example.log !== undefined) await checkLog(t, example.log, context, page);
      continue;
    }
    const ran = await runScript(script, context.env);
    const detail = `${where}\n$ ${script}\n--- stdout\n${ran.stdout}--- stderr\n${ran.stderr}${
      context.background ? `--- daemon\n${context.background.output().slice(-4000)}` : ""
    }`;
    if (ran.code !== example.exitCode) {
      t.fail(`${where}: exit code ${ran.code}, expected ${example.exitCode}`, { diagnostic: true, detail });
      continue;
    }
    let ok = true;
    for (const [shown, actual] of [
      [example.stdout, ran.stdout],
      [example.stderr, ran.stderr],
    ] as const) {
      if (shown === undefined) continue;
      const expected = moved(shown.text, context.ports);
      const matches =
        shown === example.stderr
          ? logShows(expected, actual)
          : shown.language === "json"
            ? jsonMatches(expected, actual)
            : textMatches(expected, actual);
      if (!matches) {
        ok = false;
        t.fail(`${where}: prints what ${page}:${shown.line} shows`, { expected, actual, detail });
      }
    }
    if (ok)
      t.pass(`${where} runs${example.stdout || example.stderr ? " and prints what the page shows" : ""}`);
    if (example.log !== undefined) await checkLog(t, example.log, context, page);
  }
}

/** The background daemon's log shows the lines of `shown` (polled for 2 s: stderr may lag its port). */
async function checkLog(t: Test, shown: DocBlock, context: PageContext, page: string): Promise<void> {
  const expected = moved(shown.text, context.ports);
  const output = () => context.background?.output() ?? "";
  for (let i = 0; i < 40 && !logShows(expected, output()); i++) await new Promise((r) => setTimeout(r, 50));
  if (logShows(expected, output())) t.pass(`${page}:${shown.line}: the daemon's log shows these lines`);
  else t.fail(`${page}:${shown.line}: the daemon's log shows these lines`, { expected, actual: output() });
}

async function pageContext(t: Test, examples: readonly ShellExample[]): Promise<PageContext> {
  const ports = new Map<number, number>();
  for (const port of DOCUMENTED_PORTS) ports.set(port, await freePort());
  const text = examples.map((example) => example.block.text).join("\n");
  if (new RegExp(`\\b${REDIS_PORT}\\b`).test(text)) ports.set(REDIS_PORT, (await startRedis(t)).port);
  if (new RegExp(`\\b${MEMCACHED_PORT}\\b`).test(text))
    ports.set(MEMCACHED_PORT, (await startMemcached(t)).port);
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The page's settings are the docs' and the defaults, never the test run's own.
  for (const spec of Object.values(SETTINGS_TABLE)) delete env[spec.env];
  Object.assign(env, {
    HOST: "127.0.0.1",
    GRPC_HOST: "127.0.0.1",
    DEBUG_HOST: "127.0.0.1",
    PORT: String(ports.get(8080)),
    GRPC_PORT: String(ports.get(8081)),
    DEBUG_PORT: String(ports.get(6070)),
    DATABASE_URL: `sqlite:${join(t.testdir({}), "ratelimitd.db")}`,
    // Cheap password hashes, as every test daemon gets (BASE_ENV): the cost is not what the docs show.
    USERS_PASSWORD_SCRYPT_LOG_N: "10",
    NO_COLOR: "1",
    npm_config_update_notifier: "false",
  });
  return { ports, env, background: undefined };
}

/** `text` with every documented port number replaced by the page's. */
export function moved(text: string, ports: ReadonlyMap<number, number>): string {
  let out = text;
  for (const [documented, actual] of ports) {
    out = out.replace(new RegExp(`(?<![\\w.])${documented}(?!\\w)`, "g"), String(actual));
  }
  return out;
}

function runScript(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], {
      cwd: REPO,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), BLOCK_TIMEOUT_MS);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function startBackground(
  t: Test,
  script: string,
  context: PageContext,
  where: string,
): Promise<Background> {
  const child = spawn("bash", ["-c", script], {
    cwd: REPO,
    env: context.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  groups.add(child);
  child.once("close", () => groups.delete(child));
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const background = { child, output: () => output, exited };
  const httpPort = context.ports.get(8080)!;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let done = false;
  void exited.then(() => (done = true));
  while (!done && Date.now() < deadline && !(await answers(httpPort))) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (done || Date.now() >= deadline) {
    killGroup(child, "SIGKILL");
    t.fail(`${where}: the daemon did not start`, { detail: output });
  } else t.pass(`${where}: started, its HTTP port answers`);
  return background;
}

/** Ctrl-C in the daemon's terminal: SIGINT to its process group; SIGKILL if it has not ended in 20 s. */
async function stopBackground(context: PageContext): Promise<void> {
  const background = context.background;
  if (background === undefined) return;
  context.background = undefined;
  killGroup(background.child, "SIGINT");
  const timer = setTimeout(() => killGroup(background.child, "SIGKILL"), 20_000);
  await background.exited;
  clearTimeout(timer);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // The group has already ended.
  }
}

/** Whether `GET /healthcheck` on 127.0.0.1:`port` gets any answer. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/healthcheck", timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.once("error", () => resolve(false));
    req.once("timeout", () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}
