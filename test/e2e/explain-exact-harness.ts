/**
 * The harness of the "explain is exact" tests (issue 17, spec extensions §E5): each step of a scenario asks
 * `POST /explain` (debug port) and then makes the real decision through `/json` with the same body, and checks
 * that the explained overall code and per-descriptor statuses equal the decision's, that the explained rule is
 * the expected full key, and that neither `/stats` nor the counter store moved during the explain.
 */
import type { Test } from "tap";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import {
  checkExpectation,
  compareStatus,
  counterKeysOf,
  countersMatchStore,
  localCacheCounted,
  localCacheHits,
  sameCounters,
  storeUnchanged,
} from "./explain-exact-checks.js";
import { PhaseGuard } from "./explain-exact-timing.js";

/** The parts of a `POST /explain` answer these tests read (the shape of issue 17, spec extensions §E5). */
export interface Explained {
  readonly domain?: string;
  readonly overallCode?: string;
  readonly descriptors?: readonly ExplainedDescriptor[];
}

/** One descriptor of an explain answer. */
export interface ExplainedDescriptor {
  readonly rule?: string | null;
  readonly status?: unknown;
  readonly replaced?: boolean;
  readonly unlimited?: boolean;
  readonly shadowMode?: boolean;
  readonly quotaMode?: boolean;
  readonly hits?: number;
  readonly override?: unknown;
  readonly limits?: readonly {
    readonly name?: string;
    readonly algorithm?: string;
    readonly localCacheHit?: boolean;
    readonly counters?: readonly { readonly key: string; readonly value?: number | null }[];
  }[];
}

/** One descriptor of a `/json` body, proto3 JSON. */
export interface JsonDescriptor {
  readonly entries: readonly { readonly key: string; readonly value: string }[];
  readonly limit?: { readonly requestsPerUnit: number; readonly unit: string };
  readonly hitsAddend?: number;
}

/** A `/json` body, proto3 JSON. */
export interface JsonRequest {
  readonly domain: string;
  readonly descriptors: readonly JsonDescriptor[];
  readonly hitsAddend?: number;
}

/** Shape fields of EXPLAIN-SHAPE asserted for one descriptor, beside `status` and `rule`. */
export interface DescriptorExpectation {
  readonly replaced?: boolean;
  readonly unlimited?: boolean;
  readonly shadowMode?: boolean;
  readonly quotaMode?: boolean;
  readonly hits?: number;
  readonly override?: { readonly requestsPerUnit: number; readonly unit: string } | null;
  /** `name/algorithm` of every limit checked, in order (stacked `rate_limits`: each kept one). */
  readonly limits?: readonly string[];
  /**
   * {@link limits} on a run with the local over-limit cache on, where it differs: a limit the cache
   * knows to be over decides alone, as in the decision (src/engine/decision-engine.ts `#planCounters`).
   */
  readonly limitsWithLocalCache?: readonly string[];
}

/** One request of a scenario: explained, then decided. */
export interface Step {
  readonly request: JsonRequest;
  /** The decision's overall code, so a scenario provably reaches the state it is about. */
  readonly overall: "OK" | "OVER_LIMIT";
  /**
   * Per descriptor, the full key (`domain.key_value…`, as `/rlconfig` names it) explain must name, `null`
   * for none; `undefined` where the spec does not say (a request-level override no rule matches).
   */
  readonly rules: readonly (string | null | undefined)[];
  readonly expect?: readonly (DescriptorExpectation | undefined)[];
  /**
   * This decision puts a token bucket's theoretical arrival time at "now": the buckets' resets are
   * whole seconds of (TAT − now), so later steps must not straddle this sub-second phase.
   */
  readonly startsBucket?: boolean;
}

/** A request sequence on fresh counters. */
export interface Scenario {
  readonly name: string;
  /**
   * The shortest window the scenario's limits count in: the whole scenario stays inside one, and so inside
   * one of each longer window too (epoch-aligned, their boundaries are also its boundaries).
   */
  readonly windowSeconds: number;
  readonly steps: readonly Step[];
}

/** What the counter store holds now, by key; `undefined` where only the explain's own view is available. */
export interface StoreView {
  /**
   * A snapshot of every key (a store that cannot list its keys: every key it was told of with
   * {@link learn}): value and remaining time to live (ms, -1 without expiry).
   */
  snapshot(): Promise<Map<string, { value: string; pttlMs: number }>>;
  /**
   * The counter keys an explain named. Each decision is explained first with the same body, so these are
   * all the keys decisions write: a key in a snapshot after an explain and not before was made by it.
   */
  learn?(keys: readonly string[]): void;
}

/** How a run checks the store: Redis by redis-cli; memory by comparing two explains' counters. */
export interface ExplainRun {
  readonly daemon: DaemonProcess;
  /** Redis and memcached: the store read directly (never through the daemon). */
  readonly store?: StoreView;
  /** LOCAL_CACHE_SIZE_IN_BYTES > 0: over-limit keys are answered by the local cache. */
  readonly localCache: boolean;
}

const decoder = (text: string) => JSON.parse(text) as unknown;

async function post(port: number, path: string, body: string) {
  const reply = await httpRequest(port, path, { method: "POST", body });
  return { status: reply.status, type: reply.headers["content-type"], body: reply.body };
}

/** `/stats` as name → value, process gauges left out (they move by themselves). */
export function statsOf(text: string): Record<string, string> {
  const stats: Record<string, string> = {};
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const at = line.lastIndexOf(": ");
    const name = line.slice(0, at);
    if (MOVES_BY_ITSELF.test(name)) continue;
    stats[name] = line.slice(at + 2);
  }
  return stats;
}

// Gauges of the process itself (src/observability/runtime-stats.ts), which change between two reads with
// no request at all. Every other line — counters, timers, the store's gauges, the dynamic-stats gauges that
// would show a stat created by the explain (detailed_metric, value_to_metric, overrides) — must stay.
const MOVES_BY_ITSELF = /^ratelimit\.node\./;

/** Runs every scenario as its own subtest against one daemon. */
export function explainScenarios(t: Test, run: ExplainRun, scenarios: readonly Scenario[]): void {
  for (const scenario of scenarios) {
    t.test(scenario.name, async (t) => {
      await stayInsideWindow(scenario.windowSeconds, scenario.steps.length * 2 + 5);
      const guard = new PhaseGuard();
      for (const [index, step] of scenario.steps.entries()) {
        await exactStep(t, run, guard, step, `step ${index + 1}`);
      }
    });
  }
}

async function exactStep(t: Test, run: ExplainRun, guard: PhaseGuard, step: Step, label: string) {
  const { daemon, store } = run;
  const body = JSON.stringify(step.request);
  await guard.waitForRoom();
  const statsBefore = statsOf((await httpRequest(daemon.debugPort, "/stats")).body);
  const keysBefore = await store?.snapshot();
  const startedMs = Date.now();
  const first = await post(daemon.debugPort, "/explain", body);
  const statsAfter = statsOf((await httpRequest(daemon.debugPort, "/stats")).body);
  if (first.status === 200) store?.learn?.(counterKeysOf(decoder(first.body) as Explained));
  const keysAfter = await store?.snapshot();
  const second = await post(daemon.debugPort, "/explain", body);
  const explainsMs = Date.now() - startedMs;
  const decision = await post(daemon.httpPort, "/json", body);
  const endedMs = Date.now();
  // Before this step's own bucket phase is recorded: it is set by the decision, after the explain.
  const crossed = guard.crossed(startedMs, endedMs);
  if (step.startsBucket) guard.addPhase(startedMs, endedMs);
  await settle(run);
  const statsDecided = statsOf((await httpRequest(daemon.debugPort, "/stats")).body);

  t.strictSame(
    [first.status, first.type],
    [200, "application/json"],
    `${label}: /explain answers 200 JSON (${first.body.slice(0, 300)})`,
  );
  if (first.status !== 200) return;
  const explained = decoder(first.body) as Explained;
  const again = decoder(second.body) as Explained;
  const json = decoder(decision.body) as { overallCode: string; statuses: unknown[] };
  t.equal(decision.status, step.overall === "OK" ? 200 : 429, `${label}: /json HTTP status`);
  t.equal(json.overallCode, step.overall, `${label}: the decision is ${step.overall}`);

  t.equal(explained.overallCode, json.overallCode, `${label}: overallCode explained = decided`);
  t.equal(explained.domain, step.request.domain, `${label}: domain`);
  t.equal(explained.descriptors?.length, step.request.descriptors.length, `${label}: one per descriptor`);
  if (crossed) t.comment(`${label}: took ${endedMs - startedMs} ms across a reset-changing instant`);
  step.request.descriptors.forEach((_, i) => {
    const what = `${label} descriptor ${i}`;
    const mine = explained.descriptors?.[i];
    const decided = json.statuses[i] as Record<string, unknown>;
    compareStatus(t, mine?.status, decided, crossed, what);
    const rule = step.rules[i];
    if (rule !== undefined) t.equal(mine?.rule, rule, `${what}: rule`);
    else t.comment(`${what}: rule not specified by §E5 here; explain says ${JSON.stringify(mine?.rule)}`);
    checkExpectation(t, mine, step.expect?.[i], run.localCache, what);
    sameCounters(t, mine, again.descriptors?.[i], explainsMs, what);
  });
  t.strictSame(statsAfter, statsBefore, `${label}: /stats unchanged by the explain`);
  t.equal(
    localCacheHits(explained),
    localCacheCounted(statsAfter, statsDecided),
    `${label}: hits the explain says the local cache answers = over_limit_with_local_cache of the decision`,
  );
  if (keysBefore !== undefined && keysAfter !== undefined) {
    storeUnchanged(t, keysBefore, keysAfter, label);
    countersMatchStore(t, explained, keysAfter, label);
  }
}

/**
 * Waits for the decision's background writes (a refused sliding-window hit is given back after the answer,
 * docs/algorithms.md), so that they do not land inside the next step's explain.
 */
async function settle(run: ExplainRun): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 30));
  const store = run.store;
  if (store === undefined) return;
  const same = (a: Map<string, { value: string }>, b: Map<string, { value: string }>) =>
    a.size === b.size && [...a].every(([key, { value }]) => b.get(key)?.value === value);
  let last = await store.snapshot();
  for (let tries = 0; tries < 20; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const now = await store.snapshot();
    if (same(last, now)) return;
    last = now;
  }
}
