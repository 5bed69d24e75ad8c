// The memory store's reservation records count their holds against MEMORY_MAX_BYTES
// (src/backends/memory/memory-store.ts): a record grows with each hold and shrinks as holds settle or expire.
import t from "tap";
import {
  MEMORY_HOLD_OVERHEAD_BYTES,
  MemoryStore,
  memoryEntryBytes,
} from "../../../src/backends/memory/memory-store.js";
import type { ReserveOperation } from "../../../src/engine/algorithms/counter-operation.js";

const KEY = "ai_user_alice_resv3600";

function step(hits: number, requestId: string, key = KEY): ReserveOperation {
  return {
    kind: "reserve",
    key,
    hits,
    charge: hits > 0,
    limit: 1_000_000,
    estimate: 1,
    holdTtlMs: 60_000,
    windowSeconds: 3600,
    sliding: false,
    bucket: false,
    refill: 0,
    requestId,
    jitterSeconds: 0,
    perSecond: false,
  };
}

t.test("holds are counted in the store's bytes, and given back when settled", async (t) => {
  let now = 1_800_000_000_000;
  const store = new MemoryStore({ nowMs: () => now });
  store.increment([step(0, "req-1")]);
  // A hold's id is "=" + the request id: 6 characters.
  const one = memoryEntryBytes(KEY) + MEMORY_HOLD_OVERHEAD_BYTES + 6;
  t.equal(store.bytes, one);
  store.increment([step(0, "req-2")]);
  t.equal(store.bytes, one + MEMORY_HOLD_OVERHEAD_BYTES + 6);
  store.increment([step(5, "req-1")]);
  t.equal(store.bytes, one, "req-1's hold settled");
  now += 60_001;
  store.increment([step(3, "")]);
  t.equal(store.bytes, memoryEntryBytes(KEY), "req-2's hold expired");
});

t.test("a budget too small for more holds evicts the least recently used records", async (t) => {
  const now = 1_800_000_000_000;
  const other = "ai_user_bob_resv3600";
  const maxBytes = memoryEntryBytes(KEY) + memoryEntryBytes(other) + 3 * (MEMORY_HOLD_OVERHEAD_BYTES + 4);
  const store = new MemoryStore({ nowMs: () => now, maxBytes });
  store.increment([step(0, "b1", other)]);
  for (const id of ["a1", "a2", "a3"]) store.increment([step(0, id)]);
  t.ok(store.bytes <= maxBytes, `within the budget: ${store.bytes} <= ${maxBytes}`);
  t.equal(store.size, 1, "bob's record, the least recently used, made room for alice's holds");
  t.same(store.read([step(0, "a1")]).slice(0, 4), [1, 0, 3, 3]);
});
