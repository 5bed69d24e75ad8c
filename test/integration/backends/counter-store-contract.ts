/**
 * The behaviour every CounterStore must have, run against each backend (memory, Redis in every topology,
 * memcached): Redis semantics for INCRBY + EXPIRE, one call per request, no lost hits.
 */
import type { Test } from "tap";
import type { CounterIncrement, CounterStore } from "../../../src/engine/counter-store.js";

/** A started store plus a probe of what it holds, for one test. */
export interface ContractSubject {
  readonly store: CounterStore;
  /** Seconds left on a key as Redis `TTL` reports it (-2 when absent). */
  ttlSecondsOf(key: string): Promise<number>;
  /** Waits until increments counted in the background have landed (stores with `incrementsLater`). */
  settle?(): Promise<void>;
}

export interface ContractOptions {
  /** Whether every hit refreshes the TTL (Redis re-sends EXPIRE; memcached sets it once). */
  readonly refreshesTtl: boolean;
  /**
   * The store answers from the values it read plus the request's hits and counts afterwards, in the
   * background (memcached, as the reference): calls in flight at the same time may answer from the same
   * value, but no hit is lost once settled.
   */
  readonly incrementsLater?: boolean;
}

let unique = 0;
const freshKey = (label: string) => `contract_${process.pid}_${Date.now()}_${++unique}_${label}`;
const inc = (key: string, hits: number, ttlSeconds = 60, perSecond = false): CounterIncrement => ({
  key,
  hits,
  ttlSeconds,
  perSecond,
});

/** Registers the contract's subtests; `subject` builds a started store (closed by the caller's teardown). */
export function counterStoreContract(
  t: Test,
  subject: () => Promise<ContractSubject>,
  options: ContractOptions,
): void {
  t.test("increments return each counter after adding, in request order", async (t) => {
    const { store } = await subject();
    const [a, b] = [freshKey("a"), freshKey("b")];
    t.strictSame(await store.increment([inc(a, 1), inc(b, 5)]), [1, 5]);
    t.strictSame(await store.increment([inc(b, 2), inc(a, 3)]), [7, 4]);
  });

  t.test("the same key twice in one call counts twice, in order", async (t) => {
    const { store } = await subject();
    const key = freshKey("twice");
    t.strictSame(await store.increment([inc(key, 1), inc(key, 1)]), [1, 2]);
  });

  t.test("zero hits read the counter without changing it", async (t) => {
    const { store } = await subject();
    const key = freshKey("zero");
    t.strictSame(await store.increment([inc(key, 0)]), [0]);
    await store.increment([inc(key, 4)]);
    t.strictSame(await store.increment([inc(key, 0)]), [4]);
  });

  t.test("read returns current values and 0 for absent keys, changing nothing", async (t) => {
    const { store } = await subject();
    const [present, absent] = [freshKey("present"), freshKey("absent")];
    await store.increment([inc(present, 3)]);
    t.strictSame(await store.read([inc(present, 9), inc(absent, 9)]), [3, 0]);
    t.strictSame(await store.increment([inc(present, 0)]), [3]);
  });

  t.test("the key lives for its TTL", async (t) => {
    const { store, ttlSecondsOf } = await subject();
    const key = freshKey("ttl");
    await store.increment([inc(key, 1, 120)]);
    const ttl = await ttlSecondsOf(key);
    t.ok(ttl > 115 && ttl <= 120, `TTL ${ttl} s`);
    await store.increment([inc(key, 1, 300)]);
    const after = await ttlSecondsOf(key);
    if (options.refreshesTtl) t.ok(after > 295 && after <= 300, `refreshed to ${after} s`);
    else t.ok(after <= 120, `kept at ${after} s`);
  });

  t.test("concurrent increments never lose a hit", async (t) => {
    const { store, settle } = await subject();
    const key = freshKey("concurrent");
    const results = await Promise.all(Array.from({ length: 200 }, () => store.increment([inc(key, 1)])));
    if (options.incrementsLater) {
      t.ok(
        results.every(([v]) => v! >= 1 && v! <= 200),
        "each answer counts its own hit and at most the others",
      );
      await settle!();
    } else {
      t.strictSame(
        results.map(([v]) => v).sort((x, y) => x! - y!),
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
    }
    t.strictSame(await store.read([inc(key, 0)]), [200]);
  });

  t.test("per-second increments are counted like the others", async (t) => {
    const { store } = await subject();
    const [slow, fast] = [freshKey("minute"), freshKey("second")];
    t.strictSame(await store.increment([inc(slow, 1), inc(fast, 2, 5, true), inc(slow, 1)]), [1, 2, 2]);
  });

  t.test("reports healthy once started", async (t) => {
    const { store } = await subject();
    let healthy: boolean | undefined;
    store.onHealthChange((h) => (healthy = h));
    t.equal(healthy, true);
  });
}
