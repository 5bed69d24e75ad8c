import t from "tap";
import { type BreakerTransition, CircuitBreaker } from "../../../src/backends/circuit-breaker.js";
import { transitionLine } from "../../../src/daemon/backend-outages.js";
import { BackendError } from "../../../src/errors.js";

// The circuit breaker in front of Redis and memcached (docs/outages.md), on an
// injected clock.
const TIMEOUT = new BackendError("redis 10.0.0.7:6379: no answer within 300 ms", {
  clientMessage: "redis: timed out",
});

function setUp(failures = 3, cooldownMs = 1000, maxCooldownMs = 5000) {
  const clock = { ms: 0 };
  const transitions: BreakerTransition[] = [];
  const breaker = new CircuitBreaker({
    failures,
    cooldownMs,
    maxCooldownMs,
    nowMs: () => clock.ms,
    onTransition: (transition) => transitions.push(transition),
  });
  return { clock, transitions, breaker };
}

/** Fails `n` calls in a row. */
function fail(breaker: CircuitBreaker, n: number): void {
  for (let i = 0; i < n; i++) breaker.failed(breaker.admit(), TIMEOUT);
}

t.test("opens after the configured number of consecutive failures, not before", async (t) => {
  const { breaker, transitions } = setUp(3);
  fail(breaker, 2);
  t.equal(breaker.isOpen, false);
  breaker.succeeded(breaker.admit());
  fail(breaker, 2);
  t.equal(breaker.isOpen, false, "a success in between starts the count again");
  fail(breaker, 1);
  t.equal(breaker.isOpen, true);
  t.strictSame(transitions, [{ to: "open", cause: TIMEOUT }]);
  t.equal(breaker.admit(), "refused");
});

t.test("one probe per cooldown; a failed probe doubles the cooldown up to the maximum", async (t) => {
  const { breaker, transitions, clock } = setUp(1, 1000, 3000);
  clock.ms = 10_000;
  fail(breaker, 1);
  clock.ms = 10_999;
  t.equal(breaker.admit(), "refused", "still cooling down 1 ms before the end");
  clock.ms = 11_000;
  t.equal(breaker.admit(), "probe");
  t.equal(breaker.admit(), "refused", "only one probe at a time");
  breaker.failed("probe", TIMEOUT);
  clock.ms = 12_999;
  t.equal(breaker.admit(), "refused", "the second cooldown is 2 s");
  clock.ms = 13_000;
  t.equal(breaker.admit(), "probe");
  breaker.failed("probe", TIMEOUT);
  clock.ms = 15_999;
  t.equal(breaker.admit(), "refused", "doubled to 4 s, capped at 3 s: not yet");
  clock.ms = 16_000;
  t.equal(breaker.admit(), "probe");
  breaker.failed("probe", TIMEOUT);
  t.strictSame(
    transitions.map((transition) => [
      transition.to,
      "outageMs" in transition ? transition.outageMs : undefined,
      "nextProbeMs" in transition ? transition.nextProbeMs : undefined,
    ]),
    [
      ["open", undefined, undefined],
      ["still_open", 1000, 2000],
      ["still_open", 3000, 3000],
      ["still_open", 6000, 3000],
    ],
  );
});

t.test("a successful probe closes it and the cooldown starts again from its first length", async (t) => {
  const { breaker, transitions, clock } = setUp(2, 1000, 30_000);
  fail(breaker, 2);
  clock.ms = 1000;
  breaker.failed(breaker.admit(), TIMEOUT);
  clock.ms = 3000;
  t.equal(breaker.admit(), "probe");
  clock.ms = 3400;
  breaker.succeeded("probe");
  t.equal(breaker.isOpen, false);
  t.equal(breaker.admit(), "call");
  t.strictSame(transitions.at(-1), { to: "closed", outageMs: 3400 });
  fail(breaker, 2);
  clock.ms = 4399;
  t.equal(breaker.admit(), "refused");
  clock.ms = 4400;
  t.equal(breaker.admit(), "probe", "1 s again after recovering, not 4 s");
});

t.test("calls admitted before it opened do not change it: only the probe decides", async (t) => {
  const { breaker, clock } = setUp(1);
  const early = breaker.admit();
  fail(breaker, 1);
  breaker.succeeded(early);
  t.equal(breaker.isOpen, true, "a late success does not close it");
  breaker.failed(early, TIMEOUT);
  clock.ms = 1000;
  t.equal(breaker.admit(), "probe", "a late failure does not push the probe back");
});

t.test("a probe that ends undecided passes its turn to the next call", async (t) => {
  const { breaker, clock } = setUp(1);
  fail(breaker, 1);
  clock.ms = 1000;
  t.equal(breaker.admit(), "probe");
  breaker.undecided("probe");
  t.equal(breaker.isOpen, true);
  t.equal(breaker.admit(), "probe");
});

t.test("BACKEND_BREAKER_FAILURES=0: never opens", async (t) => {
  const { breaker, transitions } = setUp(0);
  fail(breaker, 1000);
  t.equal(breaker.isOpen, false);
  t.equal(breaker.admit(), "call");
  t.strictSame(transitions, []);
});

t.test("the warn line of each transition", async (t) => {
  t.equal(
    transitionLine({ to: "open", cause: TIMEOUT }, "allow"),
    "counter store unavailable (redis 10.0.0.7:6379: no answer within 300 ms), answering with failure mode allow",
  );
  t.equal(
    transitionLine({ to: "still_open", cause: TIMEOUT, outageMs: 3049, nextProbeMs: 4000 }, "local"),
    "counter store still unavailable after 3.0 s (redis 10.0.0.7:6379: no answer within 300 ms), next probe in 4.0 s",
  );
  t.equal(transitionLine({ to: "closed", outageMs: 12_449 }, "deny"), "counter store recovered after 12.4 s");
});
