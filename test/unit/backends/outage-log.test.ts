// A deployment's loss and recovery lines, on an injected clock: exact texts and lengths.
import t from "tap";
import { OutageLog } from "../../../src/backends/outage-log.js";
import { ThrottledLog } from "../../../src/observability/throttled-log.js";

function outage() {
  const lines: string[] = [];
  let now = 0;
  const log = new ThrottledLog({
    logger: { warn: (line) => lines.push(`warn: ${line}`), error: (line) => lines.push(`error: ${line}`) },
    nowMs: () => now,
    schedule: () => () => {},
  });
  const set = (ms: number) => {
    now = ms;
  };
  return {
    lines,
    set,
    log,
    outage: new OutageLog({ name: "redis redis://*****@10.0.0.7:6379", log, nowMs: () => now }),
  };
}

t.test("lost, then reconnected with how long it was down; once each per outage", async (t) => {
  const { lines, set, outage: o } = outage();
  o.connected();
  t.strictSame(lines, [], "the first connection is start-up's, not a recovery");
  set(10_000);
  o.lost(new Error("connection closed by Redis"));
  o.lost(new Error("connect ECONNREFUSED 10.0.0.7:6379"));
  set(14_250);
  o.connected(" (primary 10.0.0.9:6379)");
  o.connected();
  t.strictSame(lines, [
    "warn: redis redis://*****@10.0.0.7:6379: connection lost: connection closed by Redis",
    "warn: redis redis://*****@10.0.0.7:6379: reconnected after 4.3 s (primary 10.0.0.9:6379)",
  ]);
});

t.test(
  "a failure before any connection is not a loss; its first connection says how long it took",
  async (t) => {
    const { lines, set, outage: o } = outage();
    set(1000);
    o.lost(new Error("connect ECONNREFUSED 10.0.0.7:6379"));
    t.strictSame(lines, [], "start-up logs its own retries");
    set(3500);
    o.connected();
    t.strictSame(lines, ["warn: redis redis://*****@10.0.0.7:6379: connected after 2.5 s"]);
  },
);
