// Property test of the stores: seeded random sequences of requests (0–3 hits, the clock moving 0–N ms
// between them, spread over a few keys) are planned with operationFor, answered by a real store and
// decided with outcomeFor, as the service does; every decision (over, remaining, reset) must equal the
// one of a plain model written below from each algorithm's definition, in integer arithmetic and without
// the engine's code:
// - fixed_window: a count per epoch-aligned window of unit × unit_multiplier seconds;
// - sliding_window: counts per window, estimate = floor(previous × (1 − elapsed / window)) + current,
//   a refused request's hits given back (the test calls store.release for it, as the service does);
// - token_bucket: GCRA with an emission interval T of whole microseconds.
// The memory store runs on the test's clock, so everything is exact. Redis runs fixed and sliding windows
// on the planned clock too (it only sees keys), so they are exact as well; its token buckets read Redis's
// own TIME, so they refill 1 token an hour: the second or so the test takes cannot change a decision,
// and the model keeps its clock still.
import t, { type Test } from "tap";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import type { AlgorithmLimit } from "../../../src/engine/algorithms/algorithm-limit.js";
import { operationFor, outcomeFor } from "../../../src/engine/algorithms/limit-decision.js";
import type { CounterStore } from "../../../src/engine/counter-store.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { between, limitOf, NOW_MS, seededRandom } from "../../unit/engine/algorithms/algorithm-fixtures.js";

/** What the model and the code must agree on, with the step that produced it for a readable diff. */
interface Verdict {
  readonly step: string;
  readonly over: boolean;
  readonly remaining: number;
  /** Left out for Redis token buckets, whose reset depends on Redis's clock. */
  readonly resetSeconds?: number;
}

type Decision = Omit<Verdict, "step">;

/** A model of one algorithm over any number of keys: decides one request at `nowMs`. */
type Model = (key: string, hits: number, nowMs: number) => Decision;

function fixedWindowModel(limit: number, windowSeconds: number): Model {
  const windowMs = windowSeconds * 1000;
  const counts = new Map<string, number>();
  return (key, hits, nowMs) => {
    const index = Math.floor(nowMs / windowMs);
    const count = (counts.get(`${key}@${index}`) ?? 0) + hits;
    counts.set(`${key}@${index}`, count);
    const over = count > limit;
    // Windows start on whole seconds, so this is the reference's `window − now % window` in seconds.
    const resetSeconds = Math.ceil(((index + 1) * windowMs - nowMs) / 1000);
    return { over, remaining: over ? 0 : limit - count, resetSeconds };
  };
}

function slidingWindowModel(limit: number, windowSeconds: number): Model {
  const windowMs = windowSeconds * 1000;
  const counts = new Map<string, number>();
  const countOf = (key: string, index: number) => counts.get(`${key}@${index}`) ?? 0;
  // floor(previous × (window − elapsed) / window) in integers: every operand is a whole number of ms.
  const estimateAt = (key: string, atMs: number) => {
    const index = Math.floor(atMs / windowMs);
    const elapsedMs = atMs - index * windowMs;
    const weighted = Math.floor((countOf(key, index - 1) * (windowMs - elapsedMs)) / windowMs);
    return weighted + countOf(key, index);
  };
  return (key, hits, nowMs) => {
    const index = Math.floor(nowMs / windowMs);
    const current = countOf(key, index) + hits;
    counts.set(`${key}@${index}`, current);
    const estimate = estimateAt(key, nowMs);
    if (estimate <= limit) {
      // Fully available again once every counted hit has slid out: the hits of this window weigh until
      // the end of the next one; without any, the previous window's weigh until the end of this one.
      const clearAtMs = (current > 0 ? index + 2 : index + 1) * windowMs;
      return {
        over: false,
        remaining: limit - estimate,
        resetSeconds: Math.max(1, Math.ceil((clearAtMs - nowMs) / 1000)),
      };
    }
    counts.set(`${key}@${index}`, current - hits);
    // The first whole second after which the same request fits, nothing else arriving; a request larger
    // than the limit never fits: two windows, when nothing is counted any more.
    let resetSeconds = 2 * windowSeconds;
    if (hits <= limit) {
      resetSeconds = 1;
      while (estimateAt(key, nowMs + resetSeconds * 1000) + hits > limit) resetSeconds++;
    }
    return { over: true, remaining: 0, resetSeconds };
  };
}

/** GCRA: `intervalUs` (T) whole microseconds per token, `burst` tokens; the clock is whole ms. */
function tokenBucketModel(intervalUs: number, burst: number): Model {
  const arrival = new Map<string, number>();
  const capacityUs = burst * intervalUs;
  const seconds = (us: number) => Math.max(1, Math.ceil(us / 1_000_000));
  return (key, hits, nowMs) => {
    const nowUs = nowMs * 1000;
    const start = Math.max(arrival.get(key) ?? nowUs, nowUs);
    const debtAfterUs = start + hits * intervalUs - nowUs;
    if (debtAfterUs <= capacityUs) {
      arrival.set(key, start + hits * intervalUs);
      return {
        over: false,
        remaining: burst - Math.ceil(debtAfterUs / intervalUs),
        resetSeconds: seconds(debtAfterUs),
      };
    }
    const debtUs = start - nowUs;
    // Until the hits fit; until the bucket is full when they never can.
    const waitUs = hits > burst ? debtUs : debtAfterUs - capacityUs;
    return { over: true, remaining: 0, resetSeconds: seconds(waitUs) };
  };
}

function modelOf(limit: AlgorithmLimit): Model {
  switch (limit.algorithm) {
    case "fixed_window":
      return fixedWindowModel(limit.requestsPerUnit, limit.windowSeconds);
    case "sliding_window":
      return slidingWindowModel(limit.requestsPerUnit, limit.windowSeconds);
    case "token_bucket": {
      const intervalUs = (limit.windowSeconds * 1_000_000) / limit.requestsPerUnit;
      if (!Number.isInteger(intervalUs)) throw new Error(`T = ${intervalUs} µs is not whole`);
      return tokenBucketModel(intervalUs, limit.burst);
    }
  }
}

interface Scenario {
  readonly name: string;
  readonly limit: AlgorithmLimit;
  readonly seed: number;
  /** The clock moves 0 … this many ms between two requests (0: it stands still). */
  readonly maxStepMs: number;
}

const STEPS = 300;
const KEYS = ["mdl_a_", "mdl_b_", "mdl_c_"];

/**
 * Runs one scenario against `store` and returns what the code decided and what the model did, step by
 * step. `setClock` moves the store's clock (a no-op for Redis); `jitterSeconds` lengthens window TTLs.
 */
async function runScenario(
  scenario: Scenario,
  store: CounterStore,
  setClock: (nowMs: number) => void,
  options: { jitterSeconds: number; withReset: boolean },
): Promise<{ actual: Verdict[]; expected: Verdict[] }> {
  const random = seededRandom(scenario.seed);
  const model = modelOf(scenario.limit);
  const actual: Verdict[] = [];
  const expected: Verdict[] = [];
  // A window-aligned start plus 0.4 s, so the first steps are not on a boundary.
  let nowMs = NOW_MS + 400;
  for (let i = 0; i < STEPS; i++) {
    nowMs += between(random, 0, scenario.maxStepMs);
    const hits = between(random, 0, 3);
    const key = KEYS[between(random, 0, KEYS.length - 1)]!;
    setClock(nowMs);
    const operation = operationFor(scenario.limit, key, 0, hits, nowMs, options.jitterSeconds)!;
    const results = await store.increment([operation]);
    const outcome = outcomeFor(scenario.limit, hits, results, 0, nowMs);
    if (outcome.over && operation.kind === "sliding") store.release([operation]);
    const step = `#${i} ${key} +${hits} at ${nowMs - NOW_MS} ms`;
    const decision = model(key, hits, nowMs);
    if (options.withReset) {
      actual.push({
        step,
        over: outcome.over,
        remaining: outcome.remaining,
        resetSeconds: outcome.resetSeconds,
      });
      expected.push({ step, ...decision });
    } else {
      actual.push({ step, over: outcome.over, remaining: outcome.remaining });
      expected.push({ step, over: decision.over, remaining: decision.remaining });
    }
  }
  return { actual, expected };
}

const SEED = 0x5eed_2026;

/** Seeds differ per scenario and are shown in each test's name, so a failure repeats as it is. */
function scenarios(list: readonly Omit<Scenario, "seed">[]): Scenario[] {
  return list.map((scenario, i) => ({ ...scenario, seed: SEED + i }));
}

/** Fixed and sliding windows: planned on the test's clock, so the same on every store. */
const WINDOW_SCENARIOS: readonly Omit<Scenario, "seed">[] = [
  { name: "fixed 5/second", limit: limitOf("fixed_window", 5, "second"), maxStepMs: 300 },
  {
    name: "fixed 7/minute × 2",
    limit: limitOf("fixed_window", 7, "minute", { unitMultiplier: 2 }),
    maxStepMs: 30_000,
  },
  { name: "sliding 5/second", limit: limitOf("sliding_window", 5, "second"), maxStepMs: 300 },
  {
    name: "sliding 7/minute × 2",
    limit: limitOf("sliding_window", 7, "minute", { unitMultiplier: 2 }),
    maxStepMs: 30_000,
  },
  {
    name: "sliding 2/second (3 hits never fit)",
    limit: limitOf("sliding_window", 2, "second"),
    maxStepMs: 400,
  },
];

const MEMORY_SCENARIOS = scenarios([
  ...WINDOW_SCENARIOS,
  {
    name: "bucket 10/second burst 4",
    limit: limitOf("token_bucket", 10, "second", { burst: 4 }),
    maxStepMs: 150,
  },
  {
    name: "bucket 12/minute × 2 burst 5",
    limit: limitOf("token_bucket", 12, "minute", { unitMultiplier: 2, burst: 5 }),
    maxStepMs: 12_000,
  },
  {
    name: "bucket 4/second burst 2 (3 hits never fit)",
    limit: limitOf("token_bucket", 4, "second", { burst: 2 }),
    maxStepMs: 400,
  },
]);

for (const scenario of MEMORY_SCENARIOS) {
  t.test(`memory store, ${scenario.name}, seed ${scenario.seed}`, async (t) => {
    let clockMs = 0;
    const store = new MemoryStore({ nowMs: () => clockMs });
    t.teardown(() => store.close());
    const { actual, expected } = await runScenario(scenario, store, (nowMs) => (clockMs = nowMs), {
      jitterSeconds: 0,
      withReset: true,
    });
    assertAgreement(t, scenario, actual, expected);
  });
}

// The random runs' first disagreement, as a fixed case: 5/second, 5 hits at 0.1 s, then 5 hits at 1.8 s,
// 0.8 s into the next window. Exactly, the estimate is floor(5 × 0.2) + 5 = 6 > 5: refused. In doubles,
// 1 − 0.8 is 0.19999999999999996 and 5 × that is 0.9999999999999998, which floors to 0.
async function exactWeightCase(t: Test, store: CounterStore, setClock: (nowMs: number) => void) {
  const limit = limitOf("sliding_window", 5, "second");
  const decide = async (offsetMs: number, hits: number) => {
    const nowMs = NOW_MS + offsetMs;
    setClock(nowMs);
    const operation = operationFor(limit, "exact_", 0, hits, nowMs, 60)!;
    const outcome = outcomeFor(limit, hits, await store.increment([operation]), 0, nowMs);
    if (outcome.over && operation.kind === "sliding") store.release([operation]);
    return { over: outcome.over, remaining: outcome.remaining };
  };
  t.strictSame(await decide(100, 5), { over: false, remaining: 0 }, "5 hits fill the first window");
  t.strictSame(
    await decide(1800, 5),
    { over: true, remaining: 0 },
    "0.8 s into the next window, 1 of the previous 5 still weighs: 6 > 5",
  );
  t.strictSame(await decide(1800, 4), { over: false, remaining: 0 }, "4 hits fit exactly");
}

t.test(
  "memory store, sliding 5/second: an estimate landing on a whole number is not rounded down",
  async (t) => {
    let clockMs = 0;
    const store = new MemoryStore({ nowMs: () => clockMs });
    t.teardown(() => store.close());
    await exactWeightCase(t, store, (nowMs) => (clockMs = nowMs));
  },
);

const REDIS_SCENARIOS = scenarios([
  ...WINDOW_SCENARIOS,
  // Redis's clock: T of an hour or more, and the model's clock still (maxStepMs 0).
  { name: "bucket 1/hour burst 5", limit: limitOf("token_bucket", 1, "hour", { burst: 5 }), maxStepMs: 0 },
  {
    name: "bucket 3/hour × 2 burst 8",
    limit: limitOf("token_bucket", 3, "hour", { unitMultiplier: 2, burst: 8 }),
    maxStepMs: 0,
  },
  {
    name: "bucket 1/hour burst 2 (3 hits never fit)",
    limit: limitOf("token_bucket", 1, "hour", { burst: 2 }),
    maxStepMs: 0,
  },
]);

if (requireBinaries(t, ["redis-server"])) {
  t.test("redis store (single)", async (t) => {
    const server = await startRedis(t);
    for (const scenario of REDIS_SCENARIOS) {
      await t.test(`${scenario.name}, seed ${scenario.seed}`, async (t) => {
        const { store } = await redisStoreFrom(t, { REDIS_URL: server.url });
        // A fresh key space per scenario: each scenario's keys are its own.
        await server.cli("FLUSHALL");
        const bucket = scenario.limit.algorithm === "token_bucket";
        const { actual, expected } = await runScenario(scenario, store, () => {}, {
          // Planned windows pass faster than real ones; a minute of TTL keeps every counter readable.
          jitterSeconds: 60,
          withReset: !bucket,
        });
        assertAgreement(t, scenario, actual, expected);
      });
    }
    await t.test("sliding 5/second: an estimate landing on a whole number is not rounded down", async (t) => {
      const { store } = await redisStoreFrom(t, { REDIS_URL: server.url });
      await exactWeightCase(t, store, () => {});
    });
  });
}

function assertAgreement(t: Test, scenario: Scenario, actual: Verdict[], expected: Verdict[]): void {
  const refused = expected.filter((verdict) => verdict.over).length;
  // The sequences must exercise both answers, else the comparison proves little.
  t.ok(refused > 0 && refused < STEPS, `${refused} of ${STEPS} refused by the model`);
  t.strictSame(actual, expected, `every decision of ${scenario.name} is the model's`);
}
