// Recurring lines (backend errors, connection loss and recovery) are written at most once a second per kind,
// and the line after a burst says how many it stands for. The clock and the timer are injected: exact.
import t from "tap";
import { ThrottledLog } from "../../../src/observability/throttled-log.js";

/** A ThrottledLog on a fake clock whose timers run when the clock passes them. */
function throttled(intervalMs?: number) {
  const lines: string[] = [];
  let now = 5000;
  let timers: { at: number; run: () => void; cancelled: boolean }[] = [];
  const log = new ThrottledLog({
    logger: { warn: (line) => lines.push(`warn: ${line}`), error: (line) => lines.push(`error: ${line}`) },
    ...(intervalMs === undefined ? {} : { intervalMs }),
    nowMs: () => now,
    schedule: (run, delayMs) => {
      const timer = { at: now + delayMs, run, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
  });
  /** Moves the clock to `ms` after the start, running the timers due on the way, in order. */
  const at = (ms: number) => {
    for (;;) {
      const due = timers
        .filter((timer) => !timer.cancelled && timer.at <= 5000 + ms)
        .sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      timers = timers.filter((timer) => timer !== due);
      now = due.at;
      due.run();
    }
    now = 5000 + ms;
  };
  const pendingTimers = () => timers.filter((timer) => !timer.cancelled).length;
  return { log, lines, at, pendingTimers };
}

t.test("the first occurrence is written at once; a burst becomes one line with its count", async (t) => {
  const { log, lines, at } = throttled();
  log.warn("down", "error: redis: connection refused");
  t.strictSame(lines, ["warn: error: redis: connection refused"]);
  for (let i = 1; i <= 42; i++) {
    at(i * 10);
    log.warn("down", `error: redis: connection refused #${i}`);
  }
  t.equal(lines.length, 1, "nothing more within the second");
  at(999);
  t.equal(lines.length, 1, "still nothing 999 ms after the first line");
  at(1000);
  t.strictSame(lines.slice(1), [
    "warn: error: redis: connection refused #42 (and 41 more in the last 1.0 s)",
  ]);
  at(5000);
  t.equal(lines.length, 2, "no line without occurrences");
});

t.test("a single held occurrence is written alone, without a count", async (t) => {
  const { log, lines, at } = throttled();
  log.warn("redis a connection", "redis a: connection lost: connection closed by Redis");
  at(300);
  log.warn("redis a connection", "redis a: reconnected after 0.3 s");
  t.equal(lines.length, 1);
  at(1000);
  t.strictSame(lines, [
    "warn: redis a: connection lost: connection closed by Redis",
    "warn: redis a: reconnected after 0.3 s",
  ]);
});

t.test("after a quiet interval the next occurrence is written at once again", async (t) => {
  const { log, lines, at, pendingTimers } = throttled();
  log.error("k", "one");
  at(1000);
  log.error("k", "two");
  at(2500);
  log.error("k", "three");
  t.strictSame(lines, ["error: one", "error: two", "error: three"]);
  t.equal(pendingTimers(), 0, "nothing held, no timer");
});

t.test("a steady stream: one line a second, each counting the interval's occurrences", async (t) => {
  const { log, lines, at } = throttled();
  // 10 occurrences a second for 3 s: at 0, 100, …, 2900 ms.
  for (let i = 0; i < 30; i++) {
    at(i * 100);
    log.warn("k", () => `failure ${i}`);
  }
  at(10_000);
  t.strictSame(lines, [
    "warn: failure 0",
    "warn: failure 9 (and 8 more in the last 1.0 s)",
    "warn: failure 19 (and 9 more in the last 1.0 s)",
    "warn: failure 29 (and 9 more in the last 1.0 s)",
  ]);
  const counted = lines.reduce((sum, line) => sum + 1 + Number(/\(and (\d+) more/.exec(line)?.[1] ?? 0), 0);
  t.equal(counted, 30, "every occurrence counted once");
});

t.test("kinds are independent; a held line keeps the level of its latest occurrence", async (t) => {
  const { log, lines, at } = throttled();
  log.warn("a", "a1");
  log.warn("b", "b1");
  at(10);
  log.warn("a", "a2");
  log.error("a", "a3");
  at(1000);
  t.strictSame(lines, ["warn: a1", "warn: b1", "error: a3 (and 1 more in the last 1.0 s)"]);
});

t.test("a text built by a function is built only when written", async (t) => {
  const { log, lines, at } = throttled();
  let built = 0;
  const text = () => {
    built++;
    return "built";
  };
  log.warn("k", text);
  for (let i = 0; i < 100; i++) log.warn("k", text);
  t.equal(built, 1, "the held ones are not built");
  at(1000);
  t.equal(built, 2, "only the line written for them");
  t.strictSame(lines, ["warn: built", "warn: built (and 99 more in the last 1.0 s)"]);
});

t.test("flush writes what is held at once and cancels its timer", async (t) => {
  const { log, lines, at, pendingTimers } = throttled();
  log.warn("k", "first");
  at(250);
  log.warn("k", "second");
  at(400);
  log.warn("k", "third");
  t.equal(pendingTimers(), 1);
  log.flush();
  t.strictSame(lines, ["warn: first", "warn: third (and 1 more in the last 0.4 s)"]);
  t.equal(pendingTimers(), 0);
  at(5000);
  t.equal(lines.length, 2, "nothing written twice");
});

t.test("intervalMs sets the gap between two lines of a kind", async (t) => {
  const { log, lines, at } = throttled(500);
  log.warn("k", "x");
  at(100);
  log.warn("k", "y");
  at(499);
  log.warn("k", "z");
  at(500);
  t.strictSame(lines, ["warn: x", "warn: z (and 1 more in the last 0.5 s)"]);
});
