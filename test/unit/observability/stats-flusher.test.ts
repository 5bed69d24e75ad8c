import dgram from "node:dgram";
import { setTimeout as sleep } from "node:timers/promises";
import t from "tap";
import { Logger } from "../../../src/observability/logger.js";
import { statId } from "../../../src/observability/stat-metrics.js";
import { StatsFlusher } from "../../../src/observability/stats-flusher.js";
import { type StatsBatch, StatsRegistry } from "../../../src/observability/stats-registry.js";
import type { StatsSink } from "../../../src/observability/stats-sink.js";
import { StatsdSink } from "../../../src/observability/statsd-sink.js";

/** A sink that keeps every batch it is given. */
class RecordingSink implements StatsSink {
  readonly batches: StatsBatch[] = [];
  closed = false;
  constructor(readonly name = "recording") {}
  send(batch: StatsBatch): void {
    this.batches.push(batch);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
  /** Counter deltas of batch `i` as `name: delta`, sorted. */
  counters(i: number): string[] {
    return (this.batches[i]?.counters ?? []).map((c) => `${statId(c.name, c.tags)}: ${c.delta}`).sort();
  }
}

function setUp(sinks: StatsSink[], beforeFlush?: () => void) {
  const registry = new StatsRegistry({ maxDynamicKeys: 10 });
  const lines: string[] = [];
  const logger = new Logger({
    level: "warn",
    format: "text",
    write: (line) => lines.push(line),
    now: () => new Date(0),
  });
  const flusher = new StatsFlusher(registry, sinks, 10_000, logger, beforeFlush);
  return { registry, lines, flusher };
}

const LOADS = "ratelimit.service.config_load_success";

// Counters are flushed as deltas every STATS_FLUSH_INTERVAL.
t.test("each flush sends only what changed since the previous one", (t) => {
  const sink = new RecordingSink();
  const { registry, flusher } = setUp([sink]);
  const loads = registry.counter(LOADS);
  loads.add(3);
  flusher.flush();
  loads.add(2);
  flusher.flush();
  flusher.flush();
  t.strictSame(sink.counters(0), [`${LOADS}: 3`]);
  t.strictSame(sink.counters(1), [`${LOADS}: 2`]);
  t.strictSame(sink.counters(2), [], "nothing changed");
  t.equal(sink.batches.length, 3);
  t.end();
});

// On shutdown what was counted since the last flush is still sent, then sinks are closed.
t.test("stop() flushes the rest and closes every sink", async (t) => {
  const sinks = [new RecordingSink("a"), new RecordingSink("b")];
  const { registry, flusher } = setUp(sinks);
  registry.counter(LOADS).add(1);
  flusher.flush();
  registry.counter(LOADS).add(4);
  registry.ruleStats("d.k").totalHits.add(2);
  await flusher.stop();
  for (const sink of sinks) {
    t.strictSame(
      sink.counters(1),
      [`${LOADS}: 4`, "ratelimit.service.rate_limit.d.k.total_hits: 2"],
      sink.name,
    );
    t.equal(sink.closed, true, `${sink.name} closed`);
  }
});

// Several sinks at once (docs/compatibility.md); one failing sink neither stops the others nor
// escapes.
t.test("a failing sink is logged and the others still get the batch", (t) => {
  const failing: StatsSink = {
    name: "broken",
    send: () => {
      throw new Error("boom");
    },
    close: async () => {},
  };
  const good = new RecordingSink();
  const { registry, lines, flusher } = setUp([failing, good]);
  registry.counter(LOADS).add(1);
  flusher.flush();
  t.strictSame(good.counters(0), [`${LOADS}: 1`]);
  t.equal(lines.length, 1);
  t.match(lines[0], /msg="stats sink broken failed: boom"\n$/);
  t.end();
});

t.test("beforeFlush refreshes computed stats before they are drained", (t) => {
  const sink = new RecordingSink();
  let entries = 0;
  const { registry, flusher } = setUp([sink], () =>
    registry.gauge("ratelimit.localcache.entryCount").set(++entries * 10),
  );
  flusher.flush();
  flusher.flush();
  const entryCount = (i: number) =>
    sink.batches[i]?.gauges.find((g) => g.name === "ratelimit.localcache.entryCount")?.value;
  t.equal(entryCount(0), 10);
  t.equal(entryCount(1), 20);
  t.end();
});

t.test("start() flushes on the interval", async (t) => {
  const sink = new RecordingSink();
  const registry = new StatsRegistry({ maxDynamicKeys: 10 });
  const logger = new Logger({ level: "panic", format: "text", write: () => {} });
  const flusher = new StatsFlusher(registry, [sink], 20, logger);
  registry.counter(LOADS).add(6);
  flusher.start();
  for (let i = 0; i < 100 && sink.batches.length < 2; i++) await sleep(10);
  await flusher.stop();
  t.ok(sink.batches.length >= 2, "at least two interval flushes");
  t.strictSame(sink.counters(0), [`${LOADS}: 6`]);
  t.strictSame(sink.counters(1), []);
});

// End to end: registry → flusher → statsd wire, deltas per flush, the rest at stop().
t.test("over statsd, flushes carry deltas and stop() sends the remainder", async (t) => {
  const socket = dgram.createSocket("udp4");
  const received: string[] = [];
  socket.on("message", (m) =>
    received.push(
      ...m
        .toString()
        .split("\n")
        .filter((l) => l.startsWith(LOADS)),
    ),
  );
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const logger = new Logger({ level: "panic", format: "text", write: () => {} });
  const sink = new StatsdSink({
    host: "127.0.0.1",
    port: socket.address().port,
    protocol: "udp",
    extraTags: {},
    logger,
  });
  const registry = new StatsRegistry({ maxDynamicKeys: 10 });
  const flusher = new StatsFlusher(registry, [sink], 10_000, logger);
  registry.counter(LOADS).add(3);
  flusher.flush();
  registry.counter(LOADS).add(2);
  flusher.flush();
  flusher.flush();
  registry.counter(LOADS).add(5);
  await flusher.stop();
  for (let i = 0; i < 200 && received.length < 3; i++) await sleep(10);
  t.strictSame(received, [`${LOADS}:3|c`, `${LOADS}:2|c`, `${LOADS}:5|c`]);
});
