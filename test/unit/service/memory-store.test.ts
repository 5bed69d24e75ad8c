import t from "tap";
import type { CounterIncrement } from "../../../src/backends/counter-store.js";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import { TestClock } from "../engine/decision-fixture.js";

// BACKEND_TYPE=memory (decision 1) with Redis semantics: INCRBY, and EXPIRE refreshed on every hit (§3.8).
const T0 = 1_000_000;

function inc(key: string, hits = 1, ttlSeconds = 60): CounterIncrement {
  return { key, hits, ttlSeconds, perSecond: false };
}

function setUp() {
  const clock = new TestClock(T0);
  return { clock, store: new MemoryStore({ nowMs: clock.now }) };
}

t.test("increment returns each counter after its hits, in order", async (t) => {
  const { store } = setUp();
  t.same(await store.increment([inc("a", 3), inc("b", 1), inc("a", 2)]), [3, 1, 5]);
  t.same(await store.increment([inc("a", 0)]), [5], "an addend of 0 returns the value (INCRBY 0)");
  t.same(await store.read([inc("a"), inc("b")]), [5, 1]);
});

t.test("counters expire with their TTL, refreshed on every hit", async (t) => {
  const { store, clock } = setUp();
  await store.increment([inc("k", 1, 60)]);
  clock.ms = T0 + 59_999;
  t.same(await store.increment([inc("k", 1, 60)]), [2], "still alive just before the first TTL ends");
  clock.ms = T0 + 60_000;
  t.same(await store.read([inc("k")]), [2], "the hit refreshed the TTL");
  clock.ms = T0 + 119_998;
  t.same(await store.read([inc("k")]), [2]);
  clock.ms = T0 + 119_999;
  t.same(await store.read([inc("k")]), [0], "expired at exactly last hit + TTL");
  t.same(await store.increment([inc("k", 1, 60)]), [1], "an expired counter restarts from 0");
});

t.test("a zero-hit increment also refreshes the TTL", async (t) => {
  const { store, clock } = setUp();
  await store.increment([inc("k", 4, 10)]);
  clock.ms = T0 + 9_000;
  await store.increment([inc("k", 0, 10)]);
  clock.ms = T0 + 18_999;
  t.same(await store.read([inc("k")]), [4]);
  clock.ms = T0 + 19_000;
  t.same(await store.read([inc("k")]), [0]);
});

t.test("each key keeps its own TTL", async (t) => {
  const { store, clock } = setUp();
  await store.increment([inc("second", 1, 1), inc("minute", 1, 60)]);
  clock.ms = T0 + 1_000;
  t.same(await store.read([inc("second"), inc("minute")]), [0, 1]);
});

t.test("concurrent increments never lose a hit", async (t) => {
  const { store } = setUp();
  const results = await Promise.all(
    Array.from({ length: 1000 }, () => store.increment([inc("hot"), inc("other", 2)])),
  );
  t.same(
    results.map((r) => r[0]).sort((a, b) => a! - b!),
    Array.from({ length: 1000 }, (_, i) => i + 1),
  );
  t.same(
    results.map((r) => r[1]).sort((a, b) => a! - b!),
    Array.from({ length: 1000 }, (_, i) => 2 * (i + 1)),
  );
  t.same(await store.read([inc("hot"), inc("other")]), [1000, 2000]);
});

t.test("concurrent increments interleaved with reads stay consistent", async (t) => {
  const { store } = setUp();
  const work = Array.from({ length: 500 }, (_, i) =>
    i % 2 === 0 ? store.increment([inc("k", 3)]) : store.read([inc("k")]),
  );
  await Promise.all(work);
  t.same(await store.read([inc("k")]), [750]);
});

t.test("read returns 0 for absent and expired keys and creates nothing", async (t) => {
  const { store, clock } = setUp();
  t.same(await store.read([inc("missing"), inc("missing2")]), [0, 0]);
  t.equal(store.size, 0);
  await store.increment([inc("k", 5, 1)]);
  clock.ms = T0 + 1_000;
  t.same(await store.read([inc("k")]), [0]);
});

t.test("sweepExpired removes expired entries only", async (t) => {
  const { store, clock } = setUp();
  await store.increment([inc("short", 1, 1), inc("long", 1, 60)]);
  store.sweepExpired();
  t.equal(store.size, 2, "nothing expired yet");
  clock.ms = T0 + 1_000;
  store.sweepExpired();
  t.equal(store.size, 1);
  t.same(await store.read([inc("long")]), [1]);
});

t.test("sweepExpired works in batches and resumes where it stopped", async (t) => {
  const clock = new TestClock(T0);
  const store = new MemoryStore({ nowMs: clock.now, sweepBatch: 2 });
  await store.increment(["a", "b", "c", "d", "e"].map((k) => inc(k, 1, 1)));
  clock.ms = T0 + 5_000;
  store.sweepExpired();
  t.equal(store.size, 3, "one batch examines two entries");
  store.sweepExpired();
  t.equal(store.size, 1);
  store.sweepExpired();
  t.equal(store.size, 0);
});

t.test("health is reported healthy at once; start and close manage the sweep timer", async (t) => {
  const { store } = setUp();
  const reports: boolean[] = [];
  store.onHealthChange((healthy) => reports.push(healthy));
  t.same(reports, [true]);
  await store.start();
  await store.close();
  t.equal(store.name, "memory");
});
