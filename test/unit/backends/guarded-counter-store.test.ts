import t from "tap";
import { CircuitBreaker } from "../../../src/backends/circuit-breaker.js";
import { GuardedCounterStore } from "../../../src/backends/guarded-counter-store.js";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import { NodeBreakers } from "../../../src/backends/node-breakers.js";
import type { SlidingOperation } from "../../../src/engine/algorithms/counter-operation.js";
import type { CounterIncrement, CounterStore } from "../../../src/engine/counter-store.js";
import { BackendError, BackendUnavailableError, InvalidArgumentError } from "../../../src/errors.js";

// The guard every remote store gets (docs/outages.md): the breaker's admission and
// BACKEND_MAX_PENDING, in front of a store whose calls the test answers one by one.
const INC: CounterIncrement = { key: "d_k_v_60", hits: 1, ttlSeconds: 60, perSecond: false };
const TIMEOUT = new BackendError("redis 10.0.0.7:6379: no answer within 300 ms", {
  clientMessage: "redis: timed out",
});

/** A remote-like store whose calls wait until the test settles them, in order. */
class HeldStore implements CounterStore {
  readonly name = "redis";
  readonly capabilities = {
    readsWithoutCounting: true,
    algorithms: ["fixed_window"] as const,
    reservations: false,
    remote: true,
  };
  readonly calls: { resolve: (values: number[]) => void; reject: (error: unknown) => void }[] = [];
  readonly released: (readonly SlidingOperation[])[] = [];
  increment(): Promise<number[]> {
    return new Promise((resolve, reject) => this.calls.push({ resolve, reject }));
  }
  read(): Promise<number[]> {
    return this.increment();
  }
  release(operations: readonly SlidingOperation[]): void {
    this.released.push(operations);
  }
  traceSpan() {
    return { name: "redis", attributes: {} };
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  onHealthChange(): void {}
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function setUp(maxPending: number, failures = 2, probeWaitMs = 100) {
  const clock = { ms: 0 };
  const inner = new HeldStore();
  const breaker = new CircuitBreaker({
    failures,
    cooldownMs: 1000,
    maxCooldownMs: 1000,
    nowMs: () => clock.ms,
  });
  return {
    clock,
    inner,
    breaker,
    store: new GuardedCounterStore(inner, { breaker, maxPending, probeWaitMs }),
  };
}

/** The error `call` throws at once (not a rejection later). */
function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

t.test(
  "BACKEND_MAX_PENDING: the next call beyond is refused at once, and admitted once one ends",
  async (t) => {
    const { inner, store } = setUp(2);
    const first = store.increment([INC]);
    const second = store.increment([INC]);
    t.equal(store.pending, 2);
    const refused = thrown(() => store.increment([INC]));
    t.ok(refused instanceof BackendUnavailableError);
    t.equal((refused as BackendUnavailableError).reason, "pending_full");
    t.equal(
      (refused as Error).message,
      "redis: unavailable (too many calls pending: 2 calls waiting, BACKEND_MAX_PENDING=2)",
    );
    t.equal((refused as BackendError).clientMessage, "redis: unavailable (too many calls pending)");
    t.equal(inner.calls.length, 2, "the refused call never reached the store");
    inner.calls[0]!.resolve([1]);
    t.strictSame(await first, [1]);
    t.equal(store.pending, 1);
    const third = store.increment([INC]);
    inner.calls[2]!.resolve([3]);
    inner.calls[1]!.resolve([2]);
    t.strictSame([await second, await third], [[2], [3]]);
    t.equal(store.pending, 0);
  },
);

t.test(
  "failed calls open the breaker; while open nothing reaches the store; a good probe closes it",
  async (t) => {
    const { inner, store, breaker, clock } = setUp(10, 2);
    for (let i = 0; i < 2; i++) {
      const call = store.increment([INC]);
      inner.calls.at(-1)!.reject(TIMEOUT);
      t.equal(await (call as Promise<number[]>).catch((error: unknown) => error), TIMEOUT);
    }
    t.equal(breaker.isOpen, true);
    const refused = thrown(() => store.read([INC]));
    t.equal((refused as Error).message, "redis: unavailable (circuit breaker open)");
    t.equal((refused as BackendUnavailableError).reason, "breaker_open");
    t.equal(inner.calls.length, 2);
    store.release([
      { kind: "sliding", key: "k", previousKey: "p", hits: 1, ttlSeconds: 120 } as SlidingOperation,
    ]);
    t.equal(inner.released.length, 0, "no hits given back to a store that is away");
    clock.ms = 1000;
    const probe = store.increment([INC]);
    t.equal(inner.calls.length, 3, "the probe goes through");
    inner.calls[2]!.resolve([7]);
    t.strictSame(await probe, [7]);
    t.equal(breaker.isOpen, false);
    store.release([
      { kind: "sliding", key: "k", previousKey: "p", hits: 1, ttlSeconds: 120 } as SlidingOperation,
    ]);
    t.equal(inner.released.length, 1);
  },
);

t.test("a request the store refuses itself neither opens the breaker nor spends the probe", async (t) => {
  const { inner, store, breaker, clock } = setUp(10, 1);
  const tooLong = new InvalidArgumentError("memcache: key longer than 250 bytes");
  const call = store.increment([INC]);
  inner.calls[0]!.reject(tooLong);
  t.equal(await (call as Promise<number[]>).catch((error: unknown) => error), tooLong);
  t.equal(breaker.isOpen, false);
  const failed = store.increment([INC]);
  inner.calls[1]!.reject(new Error("socket closed"));
  await (failed as Promise<number[]>).catch(() => undefined);
  t.equal(breaker.isOpen, true, "any other failure is the backend's");
  clock.ms = 1000;
  const probe = store.increment([INC]);
  inner.calls[2]!.reject(tooLong);
  await (probe as Promise<number[]>).catch(() => undefined);
  t.equal(breaker.isOpen, true);
  const next = store.increment([INC]);
  t.equal(inner.calls.length, 4, "the next call is the probe");
  inner.calls[3]!.resolve([1]);
  t.strictSame(await next, [1]);
});

t.test("the memory store's synchronous answers pass through without counting as pending", async (t) => {
  const breaker = new CircuitBreaker({ failures: 1, cooldownMs: 1000, maxCooldownMs: 1000 });
  const store = new GuardedCounterStore(new MemoryStore(), { breaker, maxPending: 1 });
  t.strictSame(store.increment([INC]), [1]);
  t.strictSame(store.increment([INC]), [2]);
  t.equal(store.pending, 0);
  t.equal(store.name, "memory");
});

t.test(
  "a probe's decision waits at most probeWaitMs; the probe's late answer still closes the breaker",
  async (t) => {
    const { inner, store, breaker, clock } = setUp(10, 1, 20);
    const failed = store.increment([INC]);
    inner.calls[0]!.reject(TIMEOUT);
    await (failed as Promise<number[]>).catch(() => undefined);
    clock.ms = 1000;
    const started = performance.now();
    const probe = await (store.increment([INC]) as Promise<number[]>).catch((error: unknown) => error);
    t.ok(performance.now() - started < 1000, "answered long before the store");
    t.ok(probe instanceof BackendUnavailableError);
    t.equal(
      (probe as Error).message,
      "redis: unavailable (circuit breaker open: its probe has had no answer for 20 ms)",
    );
    t.equal(breaker.isOpen, true, "still open while the probe is out");
    t.equal(store.pending, 1);
    inner.calls[1]!.resolve([4]);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(breaker.isOpen, false, "closed by the probe's own answer");
    t.equal(store.pending, 0);
  },
);

t.test(
  "a probe answered in time is the decision's answer; a late failure is no unhandled rejection",
  async (t) => {
    const { inner, store, breaker, clock } = setUp(10, 1, 20);
    const failed = store.increment([INC]);
    inner.calls[0]!.reject(TIMEOUT);
    await (failed as Promise<number[]>).catch(() => undefined);
    clock.ms = 1000;
    const probe = store.increment([INC]);
    inner.calls[1]!.resolve([9]);
    t.strictSame(await probe, [9]);
    t.equal(breaker.isOpen, false);
    // Open again, and let a probe fail after its decision was answered.
    const again = store.increment([INC]);
    inner.calls[2]!.reject(TIMEOUT);
    await (again as Promise<number[]>).catch(() => undefined);
    clock.ms = 2000;
    const late = await (store.increment([INC]) as Promise<number[]>).catch((error: unknown) => error);
    t.ok(late instanceof BackendUnavailableError);
    inner.calls[3]!.reject(TIMEOUT);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(breaker.isOpen, true);
  },
);

t.test(
  "a Redis Cluster's node breakers: the store's state is its worst node's, calls pass straight on",
  async (t) => {
    const breakers = new NodeBreakers(
      () => new CircuitBreaker({ failures: 1, cooldownMs: 1000, maxCooldownMs: 1000 }),
    );
    const store = new HeldStore();
    const guarded = new GuardedCounterStore(store, {
      breaker: undefined,
      nodeBreakers: breakers,
      maxPending: 10,
    });
    t.equal(guarded.breakerState, "closed");
    breakers.settle(["a:1"], breakers.admit(["a:1"]), () => TIMEOUT);
    t.equal(guarded.breakerState, "open", "one node's open breaker shows");
    const call = guarded.increment([INC]);
    t.equal(
      store.calls.length,
      1,
      "the store itself consults its node breakers: the guard lets the call through",
    );
    store.calls[0]!.resolve([1]);
    t.strictSame(await call, [1]);
    guarded.release([]);
    t.strictSame(store.released, [[]], "releases go to the store, which leaves out open nodes' keys");
  },
);
