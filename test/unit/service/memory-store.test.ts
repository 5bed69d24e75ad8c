import t from "tap";
import {
  MEMORY_ENTRY_OVERHEAD_BYTES,
  MemoryStore,
  memoryEntryBytes,
} from "../../../src/backends/memory/memory-store.js";
import type { CounterIncrement } from "../../../src/engine/counter-store.js";
import { TestClock } from "../engine/decision-fixture.js";

// BACKEND_TYPE=memory (docs/backends.md "Memory backend") with Redis semantics: INCRBY, and EXPIRE refreshed on every
// hit.
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

// The byte budget (MEMORY_MAX_BYTES): keys' characters plus a fixed overhead, least recently used evicted.
const entry = (key: string) => MEMORY_ENTRY_OVERHEAD_BYTES + key.length;

function budgetStore(entries: number, keyLength = 1) {
  const clock = new TestClock(T0);
  const evictions = {
    total: 0,
    add(n: number) {
      evictions.total += n;
    },
  };
  const lines: string[] = [];
  const store = new MemoryStore({
    nowMs: clock.now,
    maxBytes: entries * (MEMORY_ENTRY_OVERHEAD_BYTES + keyLength),
    reports: { evictions, log: { warn: (line: string) => void lines.push(line) } },
  });
  return { clock, store, evictions, lines };
}

t.test(
  "bytes count each key's characters plus the per-entry overhead, two per character above U+00FF",
  async (t) => {
    t.equal(MEMORY_ENTRY_OVERHEAD_BYTES, 248);
    t.equal(memoryEntryBytes("abc"), 248 + 3);
    t.equal(memoryEntryBytes("värde"), 248 + 5, "Latin-1 characters take one byte in V8");
    t.equal(
      memoryEntryBytes("路径/x"),
      248 + 2 * 4,
      "one character above U+00FF makes the whole key two-byte",
    );
    t.equal(memoryEntryBytes("😀"), 248 + 2 * 2, "a surrogate pair is two UTF-16 units");
    const { store, clock } = setUp();
    await store.increment([inc("abc", 1, 1), inc("路径/x", 1, 60), inc("abc", 1, 1)]);
    t.equal(store.bytes, 248 + 3 + 248 + 8, "a key counted once however often it is hit");
    t.equal(store.maxBytes, 256 * 1024 * 1024, "256 MiB by default");
    clock.ms = T0 + 1_000;
    store.sweepExpired();
    t.equal(store.bytes, 248 + 8, "a swept counter gives its bytes back");
  },
);

t.test("beyond the budget the least recently used counter is evicted and restarts from 0", async (t) => {
  const { store, clock, evictions, lines } = budgetStore(3);
  await store.increment([inc("a", 5), inc("b", 7), inc("c", 1)]);
  t.equal(store.bytes, 3 * entry("a"), "exactly full");
  clock.ms = T0 + 1_000;
  await store.increment([inc("a")]);
  t.same(await store.increment([inc("d")]), [1]);
  t.same(await store.read([inc("a"), inc("b"), inc("c"), inc("d")]), [6, 0, 1, 1], "b went: a was hit since");
  t.equal(store.size, 3);
  t.equal(store.bytes, 3 * entry("a"));
  t.equal(evictions.total, 1);
  t.same(await store.increment([inc("b")]), [1], "an evicted counter's window starts again from 0");
  t.same(await store.read([inc("c")]), [0], "…which evicted c, now the least recently used");
  t.equal(evictions.total, 2);
  t.strictSame(lines, [
    "memory: 1 counter evicted since start, least recently used first, to stay within MEMORY_MAX_BYTES=747: each starts its window again from 0",
  ]);
});

t.test(
  "hits within a second of a counter's last move do not move it again (LRU to the second)",
  async (t) => {
    const { store, clock } = budgetStore(2);
    await store.increment([inc("a"), inc("b")]);
    clock.ms = T0 + 999;
    await store.increment([inc("a")]);
    await store.increment([inc("c")]);
    t.same(await store.read([inc("a"), inc("b"), inc("c")]), [0, 1, 1], "a had not moved: it was evicted");
    clock.ms = T0 + 2_000;
    await store.increment([inc("b")]);
    await store.increment([inc("d")]);
    t.same(await store.read([inc("b"), inc("c"), inc("d")]), [2, 0, 1], "b had moved: c was evicted");
  },
);

t.test("expired counters make room first and are not counted as evictions", async (t) => {
  const { store, clock, evictions, lines } = budgetStore(2);
  await store.increment([inc("a", 1, 1), inc("b", 1, 60)]);
  clock.ms = T0 + 1_000;
  await store.increment([inc("c", 1, 60)]);
  t.same(await store.read([inc("b"), inc("c")]), [1, 1]);
  t.equal(evictions.total, 0);
  t.strictSame(lines, []);
});

t.test("an expired counter that is hit again moves to the recent end", async (t) => {
  const { store, clock } = budgetStore(2);
  await store.increment([inc("a", 3, 1), inc("b", 1, 60)]);
  clock.ms = T0 + 1_000;
  t.same(await store.increment([inc("a", 1, 60)]), [1], "restarted from 0");
  await store.increment([inc("c")]);
  t.same(await store.read([inc("a"), inc("b"), inc("c")]), [1, 0, 1]);
  t.equal(store.bytes, 2 * entry("a"));
});

t.test("eviction warnings: the first at once, then at most one a minute with the count since", async (t) => {
  const { store, clock, evictions, lines } = budgetStore(1, 2);
  await store.increment([inc("k0")]);
  for (let i = 1; i <= 5; i++) {
    clock.ms = T0 + i * 10_000;
    await store.increment([inc(`k${i}`)]);
  }
  t.equal(evictions.total, 5);
  t.equal(lines.length, 1);
  clock.ms = T0 + 70_000;
  await store.increment([inc("k6")]);
  t.equal(lines.length, 2);
  t.equal(
    lines[1],
    "memory: 5 counters evicted in the last 60 s, least recently used first, to stay within MEMORY_MAX_BYTES=250: each starts its window again from 0",
  );
  clock.ms = T0 + 80_000;
  await store.increment([inc("k7")]);
  t.equal(lines.length, 2, "held: less than a minute since the last line");
  await store.close();
  t.equal(
    lines[2],
    "memory: 1 counter evicted in the last 10 s, least recently used first, to stay within MEMORY_MAX_BYTES=250: each starts its window again from 0",
    "close writes what was held",
  );
  await store.close();
  t.equal(lines.length, 3, "nothing more to write");
});

t.test("a counter larger than the whole budget is kept alone", async (t) => {
  const { store, evictions } = budgetStore(2);
  await store.increment([inc("a"), inc("b")]);
  const huge = "h".repeat(1000);
  t.same(await store.increment([inc(huge)]), [1]);
  t.equal(store.size, 1);
  t.equal(store.bytes, entry(huge));
  t.equal(evictions.total, 2);
  t.same(await store.increment([inc(huge)]), [2], "and keeps counting");
});

t.test("eviction stays least-recently-used over many rounds, through touches and a full flush", async (t) => {
  const { store, clock, evictions } = budgetStore(3, 3);
  const key = (i: number) => `k${String(i).padStart(2, "0")}`;
  await store.increment([inc("hot")]);
  for (let i = 0; i < 30; i++) {
    clock.ms = T0 + (i + 1) * 1_000;
    await store.increment([inc("hot"), inc(key(i))]);
  }
  t.same(await store.read([inc("hot"), inc(key(27)), inc(key(28)), inc(key(29))]), [31, 0, 1, 1]);
  t.equal(evictions.total, 28, "every new key but the last two, never the one hit every second");
  await store.increment([inc("h".repeat(2000))]);
  t.equal(store.size, 1, "a counter bigger than the budget evicted every other one");
  await store.increment([inc("k30"), inc("k31"), inc("k32")]);
  t.same(await store.read([inc("k30"), inc("k31"), inc("k32")]), [1, 1, 1]);
  t.equal(store.size, 3, "after the flush, eviction starts again from the front");
  t.equal(evictions.total, 28 + 3 + 1);
});
