// The xDS client's reconnect delays (XDS_CLIENT_* in docs/settings.md; go-control-plane's
// pkg/client/sotw/v3): the connect retry interval with ±50 % jitter until the server first answered, then
// jpillora/backoff over XDS_CLIENT_BACKOFF_* (its RANDOM_FACTOR is the multiplier).
import t from "tap";
import { type ReconnectPolicy, reconnectDelayMs } from "../../../src/config/xds/reconnect-delay.js";

const policy = (backoff: Partial<ReconnectPolicy["backoff"]> = {}): ReconnectPolicy => ({
  connectRetryIntervalMs: 3_000,
  backoff: { initialMs: 10_000, maxMs: 60_000, factor: 0.5, jitter: true, ...backoff },
});
const fixed = (value: number) => () => value;
const attempts = (p: ReconnectPolicy, random: () => number) =>
  [0, 1, 2, 3, 4, 5].map((attempt) => reconnectDelayMs(p, true, attempt, random));

t.test("before the first answer: CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL ±50 %", async (t) => {
  t.strictSame(
    [0, 0.25, 0.5, 0.999].map((r) => reconnectDelayMs(policy(), false, 7, fixed(r))),
    [1_500, 2_250, 3_000, 4_497],
  );
});

t.test("the defaults reconnect after a constant 10 s (a factor below 1 never grows)", async (t) => {
  for (const r of [0, 0.5, 0.999]) t.strictSame(attempts(policy(), fixed(r)), Array(6).fill(10_000));
  t.strictSame(attempts(policy({ jitter: false }), fixed(0.5)), Array(6).fill(10_000));
});

t.test("a factor above 1 grows to the maximum; jitter spreads below the unclamped value", async (t) => {
  t.strictSame(
    attempts(policy({ factor: 2, jitter: false }), fixed(0)),
    [10_000, 20_000, 40_000, 60_000, 60_000, 60_000],
  );
  // jpillora jitters between initial and initial × factor^n before clamping to the maximum: attempt 3 is
  // 0.5 × (80 s − 10 s) + 10 s = 45 s, not half-way to the 60 s cap.
  t.strictSame(attempts(policy({ factor: 2 }), fixed(0.5)), [10_000, 15_000, 25_000, 45_000, 60_000, 60_000]);
  t.strictSame(attempts(policy({ factor: 2 }), fixed(0)), Array(6).fill(10_000));
});

t.test("jpillora's edge cases: initial ≥ max gives max; a factor of 0 means 2", async (t) => {
  t.strictSame(attempts(policy({ initialMs: 5_000, maxMs: 5_000 }), fixed(0.5)), Array(6).fill(5_000));
  t.strictSame(
    attempts(policy({ factor: 0, jitter: false }), fixed(0)),
    [10_000, 20_000, 40_000, 60_000, 60_000, 60_000],
  );
});
