/**
 * The checks of one explain-then-decide step of the "explain is exact" tests
 * (test/e2e/explain-exact-harness.ts): statuses, shape fields, counters read twice, the store and the local
 * over-limit cache.
 */
import type { Test } from "tap";
import type { DescriptorExpectation, Explained, ExplainedDescriptor } from "./explain-exact-harness.js";

/**
 * Status equality. When the step straddled a whole second (fixed and sliding windows) or a bucket's phase
 * (token buckets) only `durationUntilReset` may differ, by that one second; everything else stays exact.
 */
export function compareStatus(
  t: Test,
  explained: unknown,
  decided: Record<string, unknown>,
  crossed: boolean,
  what: string,
) {
  if (!crossed) {
    t.strictSame(explained, decided, `${what}: status explained = decided`);
    return;
  }
  const { durationUntilReset: mine, ...rest } = (explained ?? {}) as Record<string, unknown>;
  const { durationUntilReset: theirs, ...decidedRest } = decided;
  t.strictSame(rest, decidedRest, `${what}: status explained = decided (but the reset)`);
  const seconds = (d: unknown) => Number(String(d ?? "0s").replace(/s$/, ""));
  const gap = seconds(mine) - seconds(theirs);
  t.ok(gap === 0 || gap === 1, `${what}: reset ${String(mine)} explained vs ${String(theirs)} decided`);
}

export function checkExpectation(
  t: Test,
  explained: ExplainedDescriptor | undefined,
  expected: DescriptorExpectation | undefined,
  localCache: boolean,
  what: string,
) {
  if (expected === undefined) return;
  const { limits: uncached, limitsWithLocalCache, ...flags } = expected;
  const limits = localCache ? (limitsWithLocalCache ?? uncached) : uncached;
  const actual: Record<string, unknown> = {};
  for (const name of Object.keys(flags)) actual[name] = explained?.[name as keyof ExplainedDescriptor];
  t.strictSame(actual, flags, `${what}: ${Object.keys(flags).join(", ")}`);
  if (limits !== undefined) {
    t.strictSame(
      (explained?.limits ?? []).map((limit) => `${limit.name}/${limit.algorithm}`),
      limits,
      `${what}: limits checked`,
    );
  }
}

/** Every counter key an explain names. */
export function counterKeysOf(explained: Explained): string[] {
  return (explained.descriptors ?? []).flatMap((d) =>
    (d.limits ?? []).flatMap((limit) => (limit.counters ?? []).map((counter) => counter.key)),
  );
}

/** The hits of the descriptors the explain says the local over-limit cache answers. */
export function localCacheHits(explained: Explained): number {
  let hits = 0;
  for (const descriptor of explained.descriptors ?? []) {
    if ((descriptor.limits ?? []).some((limit) => limit.localCacheHit)) hits += descriptor.hits ?? 0;
  }
  return hits;
}

/** How much every `….over_limit_with_local_cache` counter rose from `before` to `after`. */
export function localCacheCounted(before: Record<string, string>, after: Record<string, string>): number {
  let rise = 0;
  for (const [name, value] of Object.entries(after)) {
    if (name.endsWith(".over_limit_with_local_cache")) rise += Number(value) - Number(before[name] ?? 0);
  }
  return rise;
}

/**
 * The counters a second explain read equal the first's: the first counted nothing. A token bucket's value
 * is its debt (TAT − now, µs; src/engine/explain/describe-descriptor.ts), which the clock lowers between the
 * two reads: it may only have fallen, by at most the time the two explains took — a token taken would have
 * raised it by a whole emission interval (20 minutes or more here).
 */
export function sameCounters(
  t: Test,
  first: ExplainedDescriptor | undefined,
  second: ExplainedDescriptor | undefined,
  elapsedMs: number,
  what: string,
) {
  const keys = (d: ExplainedDescriptor | undefined) =>
    (d?.limits ?? []).map((limit) => (limit.counters ?? []).map((counter) => counter.key));
  const counts = (d: ExplainedDescriptor | undefined) =>
    (d?.limits ?? []).map((limit) =>
      limit.algorithm === "token_bucket" ? [] : (limit.counters ?? []).map((c) => c.value),
    );
  t.strictSame(keys(second), keys(first), `${what}: a second explain reads the same counter keys`);
  t.strictSame(
    counts(second),
    counts(first),
    `${what}: a second explain reads the same counts (the first counted nothing)`,
  );
  (first?.limits ?? []).forEach((limit, l) => {
    if (limit.algorithm !== "token_bucket") return;
    (limit.counters ?? []).forEach((counter, c) => {
      const debtBefore = Number(counter.value ?? 0);
      const debtAfter = Number(second?.limits?.[l]?.counters?.[c]?.value ?? Number.NaN);
      const fell = debtBefore - debtAfter;
      t.ok(
        debtAfter >= 0 && fell >= 0 && fell <= (elapsedMs + 2) * 1000,
        `${what}: bucket ${counter.key}: debt ${debtBefore} µs, then ${debtAfter} µs ${elapsedMs} ms later (the first explain took no token)`,
      );
    });
  });
}

export function storeUnchanged(
  t: Test,
  before: Map<string, { value: string; pttlMs: number }>,
  after: Map<string, { value: string; pttlMs: number }>,
  label: string,
) {
  const values = (keys: Map<string, { value: string }>) =>
    Object.fromEntries([...keys].map(([key, { value }]) => [key, value]));
  t.strictSame(
    values(after),
    values(before),
    `${label}: the store's keys and values unchanged by the explain`,
  );
  // An EXPIRE refreshed by the explain would push a key's time to live up again.
  const refreshed = [...after].filter(([key, { pttlMs }]) => pttlMs > (before.get(key)?.pttlMs ?? pttlMs));
  t.strictSame(refreshed, [], `${label}: no expiry refreshed by the explain`);
}

/** The counter values explain reports are the store's (fixed and sliding windows: plain integers). */
export function countersMatchStore(
  t: Test,
  explained: Explained,
  keys: Map<string, { value: string }>,
  label: string,
) {
  (explained.descriptors ?? []).forEach((descriptor, i) => {
    for (const limit of descriptor.limits ?? []) {
      if (limit.algorithm === "token_bucket") continue; // a stored arrival time, not a count
      for (const counter of limit.counters ?? []) {
        const stored = Number(keys.get(counter.key)?.value ?? 0);
        t.equal(
          Number(counter.value ?? 0),
          stored,
          `${label} descriptor ${i}: ${counter.key} as in the store`,
        );
      }
    }
  });
}
