/**
 * Fault injection and observation for the backend-outage tests (docs/outages.md): freezing a redis-server with SIGSTOP, timing decisions, reading `/stats` and the JSON log.
 */
import type { DaemonProcess } from "../../helpers/daemon-process.js";
import type { EnvoyResponse } from "../../helpers/envoy-rls-client.js";
import { httpRequest } from "../../helpers/http-request.js";
import { pollUntil, type TestHooks } from "../../helpers/redis-process.js";
import type { RedisServer } from "../../helpers/redis-servers.js";

/** The four values of BACKEND_FAILURE_MODE. */
export type FailureMode = "error" | "allow" | "deny" | "local";

/** A redis-server that can be frozen (SIGSTOP) and thawed (SIGCONT). */
export interface Freezer {
  freeze(): void;
  thaw(): void;
}

/**
 * Looks up the pid of `server` (INFO server) and returns a handle that stops and continues it. A process
 * left stopped would outlive its SIGTERM, so the test's teardown sends SIGCONT whatever happened; tests also
 * thaw in a `finally` before their other teardowns run.
 */
export async function freezer(t: TestHooks, server: RedisServer): Promise<Freezer> {
  const pid = Number(/^process_id:(\d+)/m.exec(await server.cli("INFO", "server"))?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no process_id from ${server.url}`);
  let frozen = false;
  const thaw = () => {
    if (!frozen) return;
    frozen = false;
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // Already gone (killed by its own teardown): nothing left to continue.
    }
  };
  t.teardown(thaw);
  return {
    freeze: () => {
      frozen = true;
      process.kill(pid, "SIGSTOP");
    },
    thaw,
  };
}

/** What one decision gave, and how long it took. */
export type Outcome =
  | { readonly ms: number; readonly response: EnvoyResponse; readonly error?: undefined }
  | { readonly ms: number; readonly response?: undefined; readonly error: { code: number; details: string } };

/** Runs one decision and measures it; a gRPC error is an outcome, not a rejection. */
export async function timed(call: () => Promise<EnvoyResponse>): Promise<Outcome> {
  const started = performance.now();
  try {
    const response = await call();
    return { ms: performance.now() - started, response };
  } catch (failure) {
    const { code, details } = failure as { code: number; details: string };
    return { ms: performance.now() - started, error: { code, details } };
  }
}

/** The `/stats` lines of the debug port as a map (every value is a number). */
export async function stats(daemon: DaemonProcess): Promise<Map<string, number>> {
  const body = (await httpRequest(daemon.debugPort, "/stats")).body;
  const map = new Map<string, number>();
  for (const line of body.split("\n")) {
    const match = /^(\S+): (-?[0-9.]+)$/.exec(line);
    if (match) map.set(match[1]!, Number(match[2]));
  }
  return map;
}

/** The outage-related values of `/stats` (absent ones as undefined). */
export async function outageStats(daemon: DaemonProcess, mode: FailureMode) {
  const all = await stats(daemon);
  return {
    breakerOpen: all.get("ratelimit.backend.breaker_open"),
    failures: all.get(`ratelimit.service.backend_failure.${mode}`),
    redisErrors: all.get("ratelimit.service.call.should_rate_limit.redis_error"),
  };
}

/** One JSON log line (LOG_FORMAT=json). */
export interface LogRecord {
  readonly level: string;
  readonly "@message": string;
  readonly "@timestamp": string;
}

/** The daemon's JSON log lines so far. */
export function records(daemon: DaemonProcess): LogRecord[] {
  return daemon
    .logs()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogRecord);
}

/**
 * The messages of the breaker's transitions (open, re-open after a failed probe, close), in order; a
 * Redis Cluster node's name the node (`counter store node 127.0.0.1:7001 unavailable …`).
 */
export function breakerLines(daemon: DaemonProcess): string[] {
  return records(daemon)
    .map((r) => r["@message"])
    .filter((m) => /^counter store (node \S+ )?(unavailable|still unavailable|recovered)\b/.test(m));
}

/** How many decisions a throttled line stands for: itself plus `(and N more in the last X.X s)`. */
export function occurrences(message: string): number {
  return 1 + Number(/ \(and (\d+) more in the last \d+\.\d s\)$/.exec(message)?.[1] ?? 0);
}

/** A throttled line without its count suffix. */
export function withoutCount(message: string): string {
  return message.replace(/ \(and \d+ more in the last \d+\.\d s\)$/, "");
}

/** `text` as a literal inside a RegExp. */
export function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Waits until the daemon's log has `count` breaker transitions; resolves with them. */
export function waitForBreakerLines(daemon: DaemonProcess, count: number, timeoutMs = 10_000) {
  return pollUntil(
    `${count} breaker transition lines`,
    async () => {
      const lines = breakerLines(daemon);
      return lines.length >= count ? lines : undefined;
    },
    { timeoutMs, intervalMs: 20 },
  );
}

/** The Redis key of a fixed window: `<domain>_<key>_<value>_<window start>` (no CACHE_KEY_PREFIX). */
export function windowKey(
  domain: string,
  key: string,
  value: string,
  unitSeconds: number,
  nowMs = Date.now(),
) {
  const start = Math.floor(nowMs / 1000 / unitSeconds) * unitSeconds;
  return `${domain}_${key}_${value}_${start}`;
}

/** Resolves after `ms` (spacing requests around a cooldown, never to wait for a condition). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Stops `daemon` at `t`'s teardown, printing its log first when the test failed. */
export function stopAtTeardown(
  t: { teardown(fn: () => unknown): void; passing(): boolean; comment(...message: unknown[]): void },
  daemon: DaemonProcess,
): void {
  t.teardown(async () => {
    if (!t.passing())
      t.comment(`daemon log (exit ${daemon.child.exitCode ?? daemon.child.signalCode}):\n${daemon.logs()}`);
    await daemon.stop();
  });
}
