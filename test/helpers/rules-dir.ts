/**
 * Helpers for the file-reload tests (the reference's src/provider/file_provider.go): rule texts, a Kubernetes
 * ConfigMap volume written the way the kubelet writes it, and polling of the daemon's debug port for reload
 * outcomes.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { httpRequest } from "./http-request.js";

/** A rules file with one key-only descriptor `k` (every value counted apart) limited to `requestsPerUnit`/hour. */
export function rulesYaml(domain: string, requestsPerUnit: number): string {
  return (
    `domain: ${domain}\ndescriptors:\n` +
    `  - key: k\n    rate_limit: { unit: hour, requests_per_unit: ${requestsPerUnit} }\n`
  );
}

/** The `/rlconfig` line {@link rulesYaml} produces. */
export function rulesDump(domain: string, requestsPerUnit: number): string {
  return `${domain}.k: unit=HOUR requests_per_unit=${requestsPerUnit}, shadow_mode: false, quota_mode: false\n`;
}

/** The body of `/rlconfig`: the active rules. */
export async function activeRules(debugPort: number): Promise<string> {
  return (await httpRequest(debugPort, "/rlconfig")).body;
}

/** The reload counters of `/stats`. */
export interface ReloadCounts {
  readonly success: number;
  readonly error: number;
}

/** Reads `ratelimit.service.config_load_success` and `…config_load_error` from `/stats`. */
export async function reloadCounts(debugPort: number): Promise<ReloadCounts> {
  const body = (await httpRequest(debugPort, "/stats")).body;
  const value = (name: string) => {
    const match = new RegExp(`^ratelimit\\.service\\.${name}: (\\d+)$`, "m").exec(body);
    if (match === null) throw new Error(`/stats has no ${name}:\n${body}`);
    return Number(match[1]);
  };
  return { success: value("config_load_success"), error: value("config_load_error") };
}

/** What {@link waitForReload} waits for; every given part must hold at once. */
export interface ReloadExpectation {
  /** Exact values of both counters. */
  readonly counts?: ReloadCounts;
  /** Exact body of `/rlconfig`. */
  readonly rules?: string;
  /** `performance.now()` of the change on disk (default: the call). */
  readonly sinceMs?: number;
  /** Give up after this long (default 5000 ms; the acceptance bound is asserted by the caller). */
  readonly timeoutMs?: number;
}

/**
 * Polls `/stats` and `/rlconfig` every 20 ms until `expected` holds; resolves with the milliseconds since
 * `sinceMs`. Rejects after `timeoutMs` with what it last saw.
 */
export async function waitForReload(debugPort: number, expected: ReloadExpectation): Promise<number> {
  const since = expected.sinceMs ?? performance.now();
  const deadline = performance.now() + (expected.timeoutMs ?? 5_000);
  for (;;) {
    const counts = await reloadCounts(debugPort);
    const rules = await activeRules(debugPort);
    const countsMatch =
      expected.counts === undefined ||
      (counts.success === expected.counts.success && counts.error === expected.counts.error);
    if (countsMatch && (expected.rules === undefined || rules === expected.rules)) {
      return performance.now() - since;
    }
    if (performance.now() > deadline) {
      throw new Error(
        `not reloaded as expected (${JSON.stringify(expected)}) in time: ` +
          `counters ${JSON.stringify(counts)}, /rlconfig ${JSON.stringify(rules)}`,
      );
    }
    await sleep(20);
  }
}

/** Polls `logs()` every 20 ms until it matches `pattern` (stderr may arrive after the counter moved). */
export async function waitForLog(logs: () => string, pattern: RegExp, timeoutMs = 2_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!pattern.test(logs())) {
    if (performance.now() > deadline) throw new Error(`no log line ${pattern} in:\n${logs()}`);
    await sleep(20);
  }
}

/** Resolves after `ms`. For pacing writers and bounded "nothing happens" windows, never to await a reload. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Writes `files` into the ConfigMap volume `directory` as the kubelet's AtomicWriter does: a new
 * `..<timestamp>` directory, a `..data_tmp` link to it renamed over `..data`, a `<name>` → `..data/<name>`
 * link per file (created once), then the previous timestamped directory removed.
 */
export function writeConfigMap(
  directory: string,
  timestamp: string,
  files: Record<string, string>,
  previousTimestamp?: string,
): void {
  const versioned = `..${timestamp}`;
  mkdirSync(join(directory, versioned), { recursive: true });
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(directory, versioned, name), content);
  symlinkSync(versioned, join(directory, "..data_tmp"));
  renameSync(join(directory, "..data_tmp"), join(directory, "..data"));
  if (previousTimestamp === undefined) {
    for (const name of Object.keys(files)) symlinkSync(join("..data", name), join(directory, name));
  } else {
    rmSync(join(directory, `..${previousTimestamp}`), { recursive: true });
  }
}
