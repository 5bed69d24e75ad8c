/**
 * The behaviour every CounterStore must have, run against each backend (memory, Redis in every topology,
 * memcached): Redis semantics for INCRBY + EXPIRE, one call per request, no lost hits. Stores counting
 * every algorithm (memory, Redis) also answer sliding windows and token buckets in the shapes of
 * src/engine/algorithms/apply-operation.ts.
 */
import type { Test } from "tap";
import type { BucketOperation, SlidingOperation } from "../../../src/engine/algorithms/counter-operation.js";
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
  /** The store counts sliding windows and token buckets too (`capabilities.algorithms`): test them. */
  readonly allAlgorithms?: boolean;
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

  if (options.allAlgorithms) algorithmsContract(t, subject);

  t.test("reports healthy once started", async (t) => {
    const { store } = await subject();
    let healthy: boolean | undefined;
    store.onHealthChange((h) => (healthy = h));
    t.equal(healthy, true);
  });
}

/** One token a minute: a test's few milliseconds change a bucket's debt by far less than a token. */
const T = 60_000_000;

const sliding = (key: string, previousKey: string, hits: number): SlidingOperation => ({
  kind: "sliding",
  key,
  previousKey,
  hits,
  ttlSeconds: 120,
  perSecond: false,
});
const bucket = (key: string, hits: number, burst = 5): BucketOperation => ({
  kind: "bucket",
  key,
  hits,
  emissionIntervalUs: T,
  burst,
  perSecond: false,
});

/** Whether `debtUs` is `expectedUs` less the time a clock may have moved since `sinceMs`. */
function debtWithin(debtUs: number, expectedUs: number, sinceMs: number): boolean {
  return debtUs <= expectedUs && debtUs >= expectedUs - (Date.now() - sinceMs + 1) * 1000;
}

function algorithmsContract(t: Test, subject: () => Promise<ContractSubject>): void {
  t.test("counts every algorithm", async (t) => {
    const { store } = await subject();
    t.strictSame(store.capabilities.algorithms, ["fixed_window", "sliding_window", "token_bucket"]);
  });

  t.test("one flat list: fixed [count], sliding [count, previous], bucket [allowed, debt]", async (t) => {
    const { store } = await subject();
    const [f, current, previous, b] = [freshKey("f"), freshKey("s2"), freshKey("s1"), freshKey("b")];
    await store.increment([inc(previous, 7)]);
    t.strictSame(await store.increment([inc(f, 2), sliding(current, previous, 3), bucket(b, 2), inc(f, 1)]), [
      2,
      3,
      7,
      1,
      2 * T,
      3,
    ]);
    t.strictSame(await store.increment([sliding(freshKey("s"), freshKey("absent"), 1)]), [1, 0]);
  });

  t.test("a bucket refuses what does not fit and keeps its debt; a read takes nothing", async (t) => {
    const { store } = await subject();
    const b = freshKey("bucket");
    const startedMs = Date.now();
    t.strictSame(await store.increment([bucket(b, 4)]), [1, 4 * T]);
    const [allowed, debtUs] = await store.increment([bucket(b, 2)]);
    t.equal(allowed, 0, "4 + 2 tokens exceed a burst of 5");
    t.ok(debtWithin(debtUs!, 4 * T, startedMs), `the debt before the request: ${debtUs}`);
    const [readAllowed, readDebtUs] = await store.read([bucket(b, 9)]);
    t.equal(readAllowed, 1);
    t.ok(debtWithin(readDebtUs!, 4 * T, startedMs), `read: ${readDebtUs}`);
    const [lastAllowed, lastDebtUs] = await store.increment([bucket(b, 1)]);
    t.equal(lastAllowed, 1, "the last token still fits: neither the refusal nor the read took one");
    t.ok(debtWithin(lastDebtUs!, 5 * T, startedMs), `full: ${lastDebtUs}`);
  });

  t.test("sliding reads change nothing; a release gives the hits back", async (t) => {
    const { store } = await subject();
    const [current, previous] = [freshKey("s2"), freshKey("s1")];
    await store.increment([inc(previous, 4), sliding(current, previous, 5)]);
    t.strictSame(await store.read([sliding(current, previous, 9), inc(current, 9)]), [5, 4, 5]);
    store.release([sliding(current, previous, 2)]);
    // A release runs in the background: wait (5 s at most) until it has landed.
    const deadline = Date.now() + 5000;
    let values = await store.read([sliding(current, previous, 0)]);
    while (values[0] !== 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      values = await store.read([sliding(current, previous, 0)]);
    }
    t.strictSame(values, [3, 4]);
  });
}
