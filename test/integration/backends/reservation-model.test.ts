// Property test of reservations (spec §E7, docs/token-budgets.md): seeded random sequences of checks
// (hits 0) and charges (1–3000) with request ids from a small pool (or none), over two keys, with the
// clock moving between steps, are planned with reservationOperation, answered by a real store and decided
// with reservationOutcome, as the service does. Every decision (ok, remaining) must equal the one of the
// plain model below, written from §E7's text without the engine's code; and after every step the budget is
// overshot by no more than what charges brought beyond the holds they settled:
//   U + R − L ≤ Σ over this window's charges of max(0, N − released).
// A token bucket's U is the tokens taken and not yet refilled, refilling at L per window (whole tokens:
// rounded up), and it never resets, so its excess sums every charge.
// Memory runs on the test's clock (minute windows, 20 s holds, steps of 0–9 s: windows turn and holds
// expire). Redis runs on its own clock: the model takes Redis's `now` from the step's answer (the window's
// end minus the time left to it), and the test sleeps 0–400 ms between some steps against 1 s holds.
import t, { type Test } from "tap";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import type { AlgorithmLimit } from "../../../src/engine/algorithms/algorithm-limit.js";
import { reservationOperation, reservationOutcome } from "../../../src/engine/algorithms/reservation.js";
import type { CounterStore } from "../../../src/engine/counter-store.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { sleep } from "../../helpers/rules-dir.js";
import { between, limitOf, NOW_MS, seededRandom } from "../../unit/engine/algorithms/algorithm-fixtures.js";

const LIMIT = 5000;
const ESTIMATE = 1000;
const IDS = ["", "", "r1", "r2", "r3", "r4"];

interface ModelHold {
  readonly id: string;
  readonly amount: number;
  expiresAtMs: number;
}

/**
 * §E7 for one key, in plain arrays: the counts per window, U (the window's count, or for a sliding window
 * floor(previous × (window end − now) / window) + current) and the holds in the order they were placed.
 */
class ModelKey {
  counts = new Map<number, number>();
  holds: ModelHold[] = [];
  /** Σ max(0, N − released) over this window's charges (fixed), over every charge (sliding). */
  excess = 0;
  window = -1;
  /** A bucket's tokens taken and not yet refilled, × windowMs (so whole), as of `takenAtMs`. */
  taken = 0;
  takenAtMs = 0;

  constructor(
    readonly sliding: boolean,
    readonly bucket = false,
  ) {}

  /** U at `nowMs` in window `window`. */
  used(window: number, nowMs: number, windowMs: number): number {
    if (this.bucket) return Math.ceil(this.taken / windowMs);
    const current = this.counts.get(window) ?? 0;
    if (!this.sliding) return current;
    const previous = this.counts.get(window - 1) ?? 0;
    return Math.floor((previous * ((window + 1) * windowMs - nowMs)) / windowMs) + current;
  }

  held(): number {
    return this.holds.reduce((sum, hold) => sum + hold.amount, 0);
  }

  step(
    hits: number,
    id: string,
    nowMs: number,
    windowMs: number,
    ttlMs: number,
  ): { ok: boolean; remaining: number } {
    const window = Math.floor(nowMs / windowMs);
    if (window !== this.window && !this.sliding && !this.bucket) this.excess = 0;
    this.window = window;
    if (this.bucket && nowMs > this.takenAtMs) {
      this.taken = Math.max(0, this.taken - (nowMs - this.takenAtMs) * LIMIT);
      this.takenAtMs = nowMs;
    }
    this.holds = this.holds.filter((hold) => hold.expiresAtMs > nowMs);
    let ok: boolean;
    if (hits === 0) {
      const own = id === "" ? undefined : this.holds.find((hold) => hold.id === id);
      if (own !== undefined) {
        own.expiresAtMs = nowMs + ttlMs;
        ok = this.used(window, nowMs, windowMs) + this.held() <= LIMIT;
      } else if (this.used(window, nowMs, windowMs) + this.held() + ESTIMATE <= LIMIT) {
        this.holds.push({ id, amount: ESTIMATE, expiresAtMs: nowMs + ttlMs });
        ok = true;
      } else ok = false;
    } else {
      this.counts.set(window, (this.counts.get(window) ?? 0) + hits);
      this.taken += hits * windowMs;
      // The request's own hold when it names one, else the oldest.
      const index =
        id === "" ? (this.holds.length > 0 ? 0 : -1) : this.holds.findIndex((hold) => hold.id === id);
      const released = index < 0 ? 0 : this.holds[index]!.amount;
      if (index >= 0) this.holds.splice(index, 1);
      this.excess += Math.max(0, hits - released);
      ok = this.used(window, nowMs, windowMs) + this.held() <= LIMIT;
    }
    const left = LIMIT - this.used(window, nowMs, windowMs) - this.held();
    return { ok, remaining: ok ? left : 0 };
  }
}

interface Verdict {
  readonly step: string;
  readonly ok: boolean;
  readonly remaining: number;
}

/**
 * Runs `steps` random steps against `store`; `clock` gives the test's clock before each step (memory) and
 * `nowOf` the clock the store used, from its answer.
 */
async function property(
  t: Test,
  store: CounterStore,
  limit: AlgorithmLimit,
  ttlSeconds: number,
  seed: number,
  steps: number,
  advance: (random: () => number) => Promise<void>,
  nowOf: (values: readonly number[]) => number,
): Promise<void> {
  const random = seededRandom(seed);
  const models = new Map<string, ModelKey>();
  const expected: Verdict[] = [];
  const actual: Verdict[] = [];
  const overshoots: string[] = [];
  let charges = 0;
  let checks = 0;
  for (let i = 0; i < steps; i++) {
    await advance(random);
    const key = `prop${seed}_${between(random, 0, 1)}_`;
    const hits = random() < 0.55 ? 0 : between(random, 1, 3000);
    const id = IDS[between(random, 0, IDS.length - 1)]!;
    if (hits === 0) checks++;
    else charges++;
    const operation = reservationOperation(limit, { estimate: ESTIMATE, ttlSeconds }, key, 0, hits, id, 0);
    const values = await store.increment([operation]);
    const outcome = reservationOutcome(operation, values, 0);
    const nowMs = nowOf(values);
    let model = models.get(key);
    if (model === undefined) {
      model = new ModelKey(limit.algorithm === "sliding_window", limit.algorithm === "token_bucket");
      models.set(key, model);
    }
    const decided = model.step(hits, id, nowMs, limit.windowSeconds * 1000, ttlSeconds * 1000);
    const step = `#${i} ${key} hits=${hits} id=${id || "-"}`;
    expected.push({ step, ...decided });
    actual.push({ step, ok: !outcome.over, remaining: outcome.remaining });
    const overshoot = values[1]! + values[2]! - LIMIT;
    if (overshoot > model.excess) overshoots.push(`${step}: U + R − L = ${overshoot} > ${model.excess}`);
  }
  t.same(actual, expected, `${steps} steps (${checks} checks, ${charges} charges): the same decisions`);
  t.same(overshoots, [], "the budget is never overshot beyond the charges' excess over their holds");
  t.ok(
    expected.some((verdict) => verdict.ok) && expected.some((verdict) => !verdict.ok),
    "both answers occur",
  );
}

t.test(
  "memory store: the model's decisions, fixed and sliding windows and token buckets, seeds 1–9",
  async (t) => {
    for (const [seed, algorithm] of [
      [1, "fixed_window"],
      [2, "fixed_window"],
      [3, "fixed_window"],
      [4, "sliding_window"],
      [5, "sliding_window"],
      [6, "sliding_window"],
      [7, "token_bucket"],
      [8, "token_bucket"],
      [9, "token_bucket"],
    ] as const) {
      const limit = limitOf(algorithm, LIMIT, "minute");
      let nowMs = NOW_MS + seed * 7_919;
      const store = new MemoryStore({ nowMs: () => nowMs });
      await property(
        t,
        store,
        limit,
        20,
        seed,
        400,
        async (random) => {
          nowMs += random() < 0.5 ? 0 : between(random, 1, 9_000);
        },
        () => nowMs,
      );
    }
  },
);

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("Redis: the model's decisions on Redis's clock, seeds 11–12", async (t) => {
    const redis = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: redis.url });
    const limit = limitOf("fixed_window", LIMIT, "hour");
    const windowMs = 3_600_000;
    for (const seed of [11, 12]) {
      await property(
        t,
        store,
        limit,
        1,
        seed,
        150,
        async (random) => {
          if (random() < 0.15) await sleep(between(random, 0, 400));
        },
        // Redis's now: the end of the hour it counted in, less the time it said was left.
        (values) => {
          const left = values[4]!;
          const end = Math.round((Date.now() + left) / windowMs) * windowMs;
          return end - left;
        },
      );
    }
  });

  // A week's bucket refills a token each 121 s, and the holds live 300 s: within the test's seconds neither
  // changes U or R, so the model's clock (the test's) need not be Redis's to the ms. Refill and expiry on
  // Redis's clock: test/integration/backends/reservation-script.test.ts.
  t.test("Redis: token buckets, seeds 31–32", async (t) => {
    const redis = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: redis.url });
    const limit = limitOf("token_bucket", LIMIT, "day", { unitMultiplier: 7 });
    for (const seed of [31, 32]) {
      await property(
        t,
        store,
        limit,
        300,
        seed,
        150,
        async (random) => {
          if (random() < 0.15) await sleep(between(random, 0, 100));
        },
        () => Date.now(),
      );
    }
  });

  t.test("Redis: sliding windows of 2 s on Redis's clock, seeds 21–22", async (t) => {
    const redis = await startRedis(t);
    const { store } = await redisStoreFrom(t, { REDIS_URL: redis.url });
    const limit = limitOf("sliding_window", LIMIT, "second", { unitMultiplier: 2 });
    const windowMs = 2_000;
    for (const seed of [21, 22]) {
      await property(
        t,
        store,
        limit,
        1,
        seed,
        120,
        async (random) => {
          if (random() < 0.3) await sleep(between(random, 0, 300));
        },
        (values) => {
          const left = values[4]!;
          const end = Math.round((Date.now() + left) / windowMs) * windowMs;
          return end - left;
        },
      );
    }
  });
}
