// What the operator console's browser tests share: a daemon with a rules file, an SQLite database, a
// bootstrapped administrator and the slow test migration (fixtures/), a headless chromium driven by
// playwright-core, calls to the console's API from Node, and polling with a deadline.
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import type { Test } from "tap";
import { type DaemonProcess, startDaemon } from "../../helpers/daemon-process.js";
import { type HttpReply, httpRequest } from "../../helpers/http-request.js";

/** The bootstrapped administrator (ADMIN_EMAIL / ADMIN_APP_PASSWORD). */
export const ADMIN = { email: "console-admin@example.com", password: "cons olea dmin pass word 1234" };

/** The console's Content-Security-Policy, exactly. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The rules every console test daemon loads (one file, one domain, four rules without nesting). */
export const RULES_FILE = "console-rules.yaml";
export const RULES_YAML = readFileSync(
  fileURLToPath(new URL(`fixtures/${RULES_FILE}`, import.meta.url)),
  "utf8",
);
/** Rules in {@link RULES_YAML}: the overview's `rules-count`. */
export const RULE_COUNT = 4;
/** The domain of {@link RULES_YAML}. */
export const DOMAIN = "console";

/** The slow test migration (fixtures/migrations/slow-five.mjs). */
export const SLOW_MIGRATION = "console-slow-five";

const MIGRATIONS_DIR = fileURLToPath(new URL("fixtures/migrations", import.meta.url));

/** chromium's command line for the tests: headless, no sandbox (containers), nothing from the network. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** The chromium binary: CHROMIUM_PATH, else Debian's. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Launches chromium, or — when its binary is missing — fails under CI=true and otherwise skips loudly, as
 * `requireBinaries` (test/helpers/redis-process.ts) does for missing servers.
 * Resolves with undefined when the file's tests must not run.
 */
export async function launchChromium(t: Test): Promise<Browser | undefined> {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
  } catch {
    const message = `no chromium at ${CHROMIUM_PATH} (Debian: apt-get install -y chromium; or set CHROMIUM_PATH)`;
    if (process.env.CI === "true") {
      t.fail(`${message}; CI=true, so this is a failure`);
    } else {
      console.error(`\n!!!!! SKIPPING the console's browser tests: ${message} !!!!!\n`);
      t.skip(`SKIPPED: ${message}`, () => {});
    }
    return undefined;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  t.teardown(() => browser.close());
  return browser;
}

/** A running console daemon and where to reach it. */
export interface ConsoleDaemon {
  readonly daemon: DaemonProcess;
  /** `http://127.0.0.1:<debug port>`: the console's origin. */
  readonly origin: string;
  /** The daemon's temporary directory (rules under config/, the database). */
  readonly dir: string;
}

/**
 * Starts the built daemon with the memory backend, {@link RULES_YAML} in a temporary rule directory, an SQLite
 * database there, the administrator and the test migrations; stops it and removes the directory at teardown.
 */
export async function startConsoleDaemon(t: Test): Promise<ConsoleDaemon> {
  const dir = mkdtempSync(join(tmpdir(), "ratelimitd-console-"));
  mkdirSync(join(dir, "config"));
  writeFileSync(join(dir, "config", RULES_FILE), RULES_YAML);
  const daemon = await startDaemon({
    RUNTIME_ROOT: dir,
    DATABASE_URL: `sqlite:${join(dir, "console.db")}`,
    MIGRATIONS_DIR,
    MIGRATIONS_POLL_INTERVAL: "100ms",
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_APP_PASSWORD: ADMIN.password,
  });
  t.teardown(async () => {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { daemon, origin: `http://127.0.0.1:${daemon.debugPort}`, dir };
}

/** `Basic …` for an e-mail address and password. */
export function basic(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`).toString("base64")}`;
}

/** The administrator's `Authorization` value. */
export const ADMIN_AUTHORIZATION = basic(ADMIN.email, ADMIN.password);

/** A reply with its body parsed as JSON when it is JSON (else the text). */
export type JsonReply = HttpReply & { json: unknown };

/** Sends one request to `port` with a JSON body (when given) and parses the answer. */
export async function callJson(
  port: number,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonReply> {
  const text = options.body === undefined ? undefined : JSON.stringify(options.body);
  const reply = await httpRequest(port, path, {
    method,
    headers: { ...(text === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
    ...(text === undefined ? {} : { body: text }),
  });
  let json: unknown;
  try {
    json = reply.body === "" ? undefined : JSON.parse(reply.body);
  } catch {
    json = reply.body;
  }
  return { ...reply, json };
}

/** The header the console's state-changing calls carry (the contract's CSRF rule). */
export const CONSOLE_HEADER = { "x-ratelimitd-console": "1" } as const;

/** A page of the console in its own tab, with every console error, page error and CSP violation it reports. */
export interface ConsoleTab {
  readonly page: Page;
  /** Problems reported so far: console errors, uncaught exceptions, CSP violations. */
  readonly problems: string[];
}

/** Opens a tab at 1280x800 that records problems; the caller navigates. */
export async function openTab(browser: Browser): Promise<ConsoleTab> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // Waits for elements end well before tap's timeout, with the selector in the failure.
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  // CSP violations also reach the console as errors; this names the directive even if they did not.
  await page.addInitScript({
    content:
      'document.addEventListener("securitypolicyviolation", (event) => console.error(' +
      '"CSP violation: " + event.violatedDirective + " blocked " + event.blockedURI));',
  });
  return { page, problems };
}

/** Picks an element by its `data-testid` (the contract's names). */
export function byTestId(root: Page | Locator, id: string): Locator {
  return root.locator(`[data-testid="${id}"]`);
}

/**
 * Polls `read` every 50 ms until `done(value)` holds; resolves with that value. Rejects after `timeoutMs`
 * with `what` and the last value read.
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await read();
      lastError = undefined;
      if (done(last)) return last;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      throw new Error(
        `${what}: not reached in ${timeoutMs} ms; last seen ${JSON.stringify(last)}` +
          (lastError === undefined ? "" : ` (last error: ${String(lastError)})`),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The trimmed text of the first element `locator` finds, polling until it exists and reads `expected`. */
export function textBecomes(locator: Locator, expected: string, timeoutMs = 10_000): Promise<string> {
  return eventually(
    `text of ${locator} becomes ${JSON.stringify(expected)}`,
    async () => ((await locator.first().textContent({ timeout: 200 })) ?? "").trim(),
    (text) => text === expected,
    timeoutMs,
  );
}

let watches = 0;

/**
 * Records, inside the page, the highest number the first element matching `selector` shows from now on (a
 * MutationObserver on the document: a value shown for a moment is not missed between two polls from here).
 * Resolves with a reader of that highest value (0 before any).
 */
export async function watchHighest(page: Page, selector: string): Promise<() => Promise<number>> {
  const key = JSON.stringify(`ratelimitdTestHighest${++watches}`);
  // Page code as a string: this file is compiled without the DOM's types.
  await page.evaluate(`(() => {
    window[${key}] = 0;
    const read = () => {
      const value = Number(document.querySelector(${JSON.stringify(selector)})?.textContent?.trim());
      if (value > window[${key}]) window[${key}] = value;
    };
    read();
    new MutationObserver(read).observe(document.body, { subtree: true, childList: true, characterData: true });
  })()`);
  return () => page.evaluate<number>(`window[${key}]`);
}

/** The trimmed texts of every element `locator` finds now. */
export async function textsOf(locator: Locator): Promise<string[]> {
  return (await locator.allTextContents()).map((text) => text.trim());
}

/**
 * Where screenshots go: test/e2e/console/screenshots/ (committed, embedded in the README) when
 * UPDATE_SCREENSHOTS=1, else a temporary directory removed at teardown.
 */
export function screenshotDir(t: Test): string {
  if (process.env.UPDATE_SCREENSHOTS === "1") {
    const dir = fileURLToPath(new URL("screenshots", import.meta.url));
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  const dir = mkdtempSync(join(tmpdir(), "ratelimitd-console-shots-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Takes a viewport screenshot of `page` into `<dir>/<name>.png` and asserts it is a 1280x800 PNG. */
export async function screenshot(t: Test, page: Page, dir: string, name: string): Promise<void> {
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path });
  const png = readFileSync(path);
  t.ok(png.length > PNG_SIGNATURE.length + 25, `${name}.png is not empty (${png.length} bytes)`);
  t.strictSame([...png.subarray(0, 8)], [...PNG_SIGNATURE], `${name}.png has the PNG signature`);
  // The IHDR chunk follows the signature: length (4), "IHDR" (4), width (4), height (4).
  t.equal(png.toString("latin1", 12, 16), "IHDR", `${name}.png starts with IHDR`);
  t.strictSame([png.readUInt32BE(16), png.readUInt32BE(20)], [1280, 800], `${name}.png is 1280x800`);
}
