import { Worker } from "node:worker_threads";
import t from "tap";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import {
  createSharedCounterTable,
  KEY_BYTES,
  releaseLocksHeldBy,
  SharedMemoryStore,
  SLOTS_PER_BUCKET,
} from "../../../src/backends/memory/shared-memory-store.js";
import type { CounterOperation } from "../../../src/engine/algorithms/counter-operation.js";
import { TestClock } from "../engine/decision-fixture.js";

// WORKERS > 1 with BACKEND_TYPE=memory (docs/workers.md): the memory store's answers, from a table every
// thread shares.
const T0 = 1_700_000_000_000;
const MIB = 1024 * 1024;

function stores(clock: TestClock) {
  const table = createSharedCounterTable(16 * MIB);
  return {
    table,
    shared: new SharedMemoryStore({ table, nowMs: clock.now }),
    reference: new MemoryStore({ nowMs: clock.now }),
  };
}

const fixed = (key: string, hits = 1, ttlSeconds = 60): CounterOperation => ({
  key,
  hits,
  ttlSeconds,
  perSecond: false,
});
const sliding = (key: string, previousKey: string, hits = 1): CounterOperation => ({
  kind: "sliding",
  key,
  previousKey,
  hits,
  ttlSeconds: 120,
  perSecond: false,
});
const bucket = (key: string, hits = 1): CounterOperation => ({
  kind: "bucket",
  key,
  hits,
  emissionIntervalUs: 1_000_000 / 3,
  burst: 5,
  perSecond: false,
});

t.test("answers what the single-thread memory store answers, for every kind of operation", async (t) => {
  const clock = new TestClock(T0);
  const { shared, reference } = stores(clock);
  const script: { advanceMs: number; operations: CounterOperation[] }[] = [
    { advanceMs: 0, operations: [fixed("a", 3), fixed("b"), fixed("a", 2)] },
    { advanceMs: 10, operations: [sliding("s2", "s1", 4), fixed("s1", 7)] },
    { advanceMs: 10, operations: [sliding("s2", "s1", 1), bucket("g"), bucket("g", 3)] },
    { advanceMs: 10, operations: [bucket("g", 3), bucket("g")] },
    { advanceMs: 400, operations: [bucket("g"), bucket("g", 2)] },
    { advanceMs: 61_000, operations: [fixed("a"), sliding("s2", "s1"), bucket("g", 5)] },
  ];
  for (const [i, step] of script.entries()) {
    clock.ms += step.advanceMs;
    t.same(shared.increment(step.operations), reference.increment(step.operations), `step ${i}: increment`);
    t.same(shared.read(step.operations), reference.read(step.operations), `step ${i}: read`);
  }
  const refused = [
    { kind: "sliding" as const, key: "s2", previousKey: "s1", hits: 1, ttlSeconds: 120, perSecond: false },
  ];
  shared.release(refused);
  reference.release(refused);
  t.same(shared.read([fixed("s2")]), reference.read([fixed("s2")]), "a release gives the hits back");
  t.equal(shared.ttlSecondsOf("a"), 60);
  t.equal(shared.ttlSecondsOf("nothing"), -2);
});

t.test("keys longer than a slot holds are told apart by their digest", async (t) => {
  const clock = new TestClock(T0);
  const { shared } = stores(clock);
  const long = "k".repeat(KEY_BYTES * 3);
  const longToo = `${"k".repeat(KEY_BYTES * 3 - 1)}j`;
  t.same(shared.increment([fixed(long, 2), fixed(longToo, 5), fixed(long, 1)]), [2, 5, 3]);
  const multiByte = "é".repeat(KEY_BYTES / 2);
  t.same(shared.increment([fixed(multiByte), fixed(multiByte.slice(1))]), [1, 1]);
  t.same(shared.read([fixed(multiByte)]), [1]);
});

t.test("a full group of slots evicts the live counter closest to expiring, and reports it", async (t) => {
  const clock = new TestClock(T0);
  const table = createSharedCounterTable(16 * MIB);
  let evictions = 0;
  const warnings: string[] = [];
  const shared = new SharedMemoryStore({
    table,
    nowMs: clock.now,
    reports: { evictions: { add: (n) => (evictions += n) }, log: { warn: (line) => warnings.push(line) } },
  });
  // Four times more keys than the table has slots: every group fills, then evicts.
  const keys = shared.capacity * 4;
  for (let i = 0; i < keys; i++) shared.increment([fixed(`key-${i}`, 1, 60 + (i % 7))]);
  t.equal(shared.size, shared.capacity, "every slot is in use");
  t.equal(evictions, keys - shared.capacity, "each key beyond the slots evicted one live counter");
  t.equal(warnings.length, 1, "one warning line a minute");
  t.match(warnings[0], /live counters? evicted since start by this thread: the shared table/);
  // Expired counters' slots are taken again without an eviction.
  clock.ms += 120_000;
  const before = evictions;
  for (let i = 0; i < SLOTS_PER_BUCKET * 4; i++) shared.increment([fixed(`later-${i}`)]);
  t.equal(evictions, before, "expired slots are reused, not evicted");
  t.equal(shared.size, shared.capacity);
});

t.test("threads counting the same keys at once lose no hit and admit no more than one process", async (t) => {
  const table = createSharedCounterTable(16 * MIB);
  const threads = 4;
  const perThread = 20_000;
  const source = `
    const { workerData, parentPort } = require("node:worker_threads");
    const { SharedMemoryStore } = require(${JSON.stringify(new URL("../../../dist/src/backends/memory/shared-memory-store.js", import.meta.url).pathname)});
    const store = new SharedMemoryStore({ table: workerData.table });
    let admitted = 0;
    for (let i = 0; i < workerData.perThread; i++) {
      store.increment([{ key: "hot", hits: 1, ttlSeconds: 600, perSecond: false }]);
      store.increment([{ key: "k" + (i % 50), hits: 1, ttlSeconds: 600, perSecond: false }]);
      const [allowed] = store.increment([{ kind: "bucket", key: "b", hits: 1, emissionIntervalUs: 3.6e9, burst: 1000, perSecond: false }]);
      admitted += allowed;
    }
    parentPort.postMessage(admitted);
  `;
  const admitted = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<number>((resolve, reject) => {
          const worker = new Worker(source, { eval: true, workerData: { table, perThread } });
          worker.once("message", resolve);
          worker.once("error", reject);
        }),
    ),
  );
  const store = new SharedMemoryStore({ table });
  t.same(store.read([fixed("hot")]), [threads * perThread], "every hit of the hot key counted");
  const spread = Array.from({ length: 50 }, (_, i) => store.read([fixed(`k${i}`)])[0]);
  t.same(spread, Array(50).fill((threads * perThread) / 50), "every hit of the other keys counted");
  t.equal(
    admitted.reduce((a, b) => a + b, 0),
    1000,
    "the token bucket (burst 1000, one token an hour) admitted exactly its burst",
  );
});

t.test("the locks a thread held when it ended are released for the others", async (t) => {
  const table = createSharedCounterTable(16 * MIB);
  const source = `
    const { workerData, parentPort, threadId } = require("node:worker_threads");
    const words = new Int32Array(workerData.table);
    // Holds the lock of the bucket of "stuck" as the store would, then never lets go.
    const { SharedMemoryStore, lockHolderOf } = require(${JSON.stringify(new URL("../../../dist/src/backends/memory/shared-memory-store.js", import.meta.url).pathname)});
    const store = new SharedMemoryStore({ table: workerData.table });
    let held = 0;
    for (let i = 32; i < words.length && held === 0; i += 16) {
      if (Atomics.compareExchange(words, i, 0, lockHolderOf(threadId)) === 0) held = i;
      if (i > 64 * 1024) break;
    }
    parentPort.postMessage(held);
    for (;;) {}
  `;
  const worker = new Worker(source, { eval: true, workerData: { table } });
  const word = await new Promise<number>((resolve) => worker.once("message", resolve));
  const thread = worker.threadId;
  t.ok(word > 0, "the worker holds a lock");
  await worker.terminate();
  t.equal(releaseLocksHeldBy(table, thread), 1, "one lock released");
  t.equal(Atomics.load(new Int32Array(table), word), 0);
  t.equal(releaseLocksHeldBy(table, thread), 0, "nothing left to release");
});
