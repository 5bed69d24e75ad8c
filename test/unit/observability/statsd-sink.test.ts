import dgram from "node:dgram";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import t from "tap";
import { Logger } from "../../../src/observability/logger.js";
import type { StatsBatch } from "../../../src/observability/stats-registry.js";
import { StatsdSink } from "../../../src/observability/statsd-sink.js";

interface Listener {
  readonly port: number;
  /** Every statsd line received so far. */
  readonly lines: string[];
  close(): Promise<void>;
}

/** A statsd server on a free loopback UDP port, one datagram holding one or more lines. */
async function udpListener(): Promise<Listener> {
  const socket = dgram.createSocket("udp4");
  const lines: string[] = [];
  socket.on("message", (message) =>
    lines.push(
      ...message
        .toString()
        .split("\n")
        .filter((l) => l !== ""),
    ),
  );
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    port: socket.address().port,
    lines,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** A statsd server on a free loopback TCP port, newline-separated lines. */
async function tcpListener(): Promise<Listener> {
  const lines: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let pending = "";
    socket.on("data", (data) => {
      const parts = (pending + data.toString()).split("\n");
      pending = parts.pop() ?? "";
      lines.push(...parts.filter((l) => l !== ""));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return { port, lines, close };
}

/** A loopback TCP port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Waits (polling) until `done()` holds or `ms` pass; the caller asserts afterwards. */
async function until(done: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await sleep(10);
}

function recordingLogger() {
  const lines: string[] = [];
  return { lines, logger: new Logger({ level: "warn", format: "text", write: (line) => lines.push(line) }) };
}

const BATCH: StatsBatch = {
  counters: [
    { name: "ratelimit.service.config_load_success", tags: undefined, delta: 1 },
    { name: "ratelimit.service.rate_limit.mongo_cps.database_users.total_hits", tags: undefined, delta: 7 },
  ],
  gauges: [{ name: "ratelimit.stats.dynamic_keys", tags: undefined, value: 3 }],
  timers: [
    {
      name: "ratelimit_server.ShouldRateLimit.response_time",
      tags: undefined,
      samples: [4, 9],
      sampleRate: 1,
    },
  ],
};

// Counters as deltas `|c`, gauges `|g`, timers `|ms` (milliseconds), over TCP (gostats' default) or UDP.
for (const protocol of ["udp", "tcp"] as const) {
  t.test(`statsd wire lines over ${protocol}`, async (t) => {
    const listener = protocol === "udp" ? await udpListener() : await tcpListener();
    t.teardown(() => listener.close());
    const { logger, lines: logged } = recordingLogger();
    const sink = new StatsdSink({ host: "127.0.0.1", port: listener.port, protocol, extraTags: {}, logger });
    sink.send(BATCH);
    await sink.close();
    await until(() => listener.lines.length >= 5);
    t.strictSame(listener.lines, [
      "ratelimit.service.config_load_success:1|c",
      "ratelimit.service.rate_limit.mongo_cps.database_users.total_hits:7|c",
      "ratelimit.stats.dynamic_keys:3|g",
      "ratelimit_server.ShouldRateLimit.response_time:4|ms",
      "ratelimit_server.ShouldRateLimit.response_time:9|ms",
    ]);
    t.strictSame(logged, []);
  });
}

// EXTRA_TAGS: plain statsd has no tags, so tags are folded into the name as gostats does.
t.test("EXTRA_TAGS and stat tags are folded into names, sorted", async (t) => {
  const listener = await udpListener();
  t.teardown(() => listener.close());
  const { logger } = recordingLogger();
  const extraTags = { env: "prod", az: "us-east-1a" };
  const sink = new StatsdSink({ host: "127.0.0.1", port: listener.port, protocol: "udp", extraTags, logger });
  sink.send({
    counters: [
      { name: "ratelimit.service.config_load_error", tags: undefined, delta: 2 },
      { name: "ratelimit_server.Check.total_requests", tags: { code: "ok" }, delta: 1 },
    ],
    gauges: [{ name: "ratelimit.localcache.entryCount", tags: undefined, value: 0 }],
    timers: [
      { name: "ratelimit_server.Check.response_time", tags: { code: "ok" }, samples: [1], sampleRate: 1 },
    ],
  });
  await sink.close();
  await until(() => listener.lines.length >= 4);
  t.strictSame(listener.lines, [
    "ratelimit.service.config_load_error.__az=us-east-1a.__env=prod:2|c",
    "ratelimit_server.Check.total_requests.__az=us-east-1a.__code=ok.__env=prod:1|c",
    "ratelimit.localcache.entryCount.__az=us-east-1a.__env=prod:0|g",
    "ratelimit_server.Check.response_time.__az=us-east-1a.__code=ok.__env=prod:1|ms",
  ]);
});

// The registry keeps a bounded sample of timer values and says which fraction it kept (sampleRate): every kept
// sample must reach statsd tagged `|@rate`, so the server scales the count back to what really happened.
t.test("every kept timer sample is sent with its sample rate", async (t) => {
  const listener = await udpListener();
  t.teardown(() => listener.close());
  const random = Math.random;
  Math.random = () => 0.75; // any value in [0, 1) must give the same lines
  t.teardown(() => {
    Math.random = random;
  });
  const { logger } = recordingLogger();
  const sink = new StatsdSink({
    host: "127.0.0.1",
    port: listener.port,
    protocol: "udp",
    extraTags: {},
    logger,
  });
  sink.send({
    counters: [{ name: "end", tags: undefined, delta: 1 }],
    gauges: [],
    timers: [
      {
        name: "ratelimit_server.ShouldRateLimit.response_time",
        tags: undefined,
        samples: [4, 9],
        sampleRate: 0.5,
      },
    ],
  });
  await sink.close();
  await until(() => listener.lines.includes("end:1|c"));
  t.strictSame(listener.lines, [
    "end:1|c",
    "ratelimit_server.ShouldRateLimit.response_time:4|ms|@0.5",
    "ratelimit_server.ShouldRateLimit.response_time:9|ms|@0.5",
  ]);
});

/** Closes the sink, reporting whether it finished within `ms`. */
async function closedWithin(sink: StatsdSink, ms: number): Promise<boolean> {
  return Promise.race([sink.close().then(() => true), sleep(ms).then(() => false)]);
}

// With no statsd listening nothing escapes to the process, and errors are logged at most
// once a minute. Date.now is shifted (not frozen) to cross the minute without waiting for it.
t.test("with nothing listening on TCP, errors are logged at most once per minute", async (t) => {
  const port = await closedPort();
  const { logger, lines } = recordingLogger();
  const realNow = Date.now;
  let shiftMs = 0;
  Date.now = () => realNow() + shiftMs;
  t.teardown(() => {
    Date.now = realNow;
  });
  const sink = new StatsdSink({ host: "127.0.0.1", port, protocol: "tcp", extraTags: {}, logger });
  sink.send(BATCH);
  await until(() => lines.length >= 1);
  t.equal(lines.length, 1, "the first error is logged");
  t.match(lines[0], /level=warn(ing)? msg="statsd sink: .*ECONNREFUSED.*\(repeats suppressed for 60s\)"\n$/);
  for (let i = 0; i < 4; i++) {
    sink.send(BATCH);
    await sleep(400); // spans hot-shots' 1 s buffer flush, which fails again
  }
  t.equal(lines.length, 1, "later errors within the minute are not logged");
  shiftMs = 61_000;
  for (let i = 0; i < 10 && lines.length < 2; i++) {
    sink.send(BATCH);
    await until(() => lines.length >= 2, 400);
  }
  t.equal(lines.length, 2, "a minute later the next error is logged again");
  sink.send(BATCH); // leave data to flush so close() settles through hot-shots' error path
  await closedWithin(sink, 2000);
});

// gostats' TCP sink reconnects: a statsd that comes up after ratelimitd still gets the stats.
t.test("the TCP sink delivers once statsd starts listening", async (t) => {
  const port = await closedPort();
  const { logger } = recordingLogger();
  const sink = new StatsdSink({ host: "127.0.0.1", port, protocol: "tcp", extraTags: {}, logger });
  sink.send(BATCH);
  await sleep(1500); // the first connection has failed and a buffer flush has failed too
  const lines: string[] = [];
  const server = net.createServer((socket) => socket.on("data", (data) => lines.push(data.toString())));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  for (let i = 0; i < 4 && lines.length === 0; i++) {
    sink.send(BATCH);
    await until(() => lines.length > 0, 1000);
  }
  t.ok(
    lines.join("").includes("ratelimit.service.config_load_success:1|c"),
    "stats arrive after statsd starts",
  );
  server.unref();
  await closedWithin(sink, 2000);
});

// StatsFlusher.stop() awaits close(): it must settle even when statsd is unreachable.
t.test("close() settles on TCP with nothing listening", async (t) => {
  const port = await closedPort();
  const { logger } = recordingLogger();
  const sink = new StatsdSink({ host: "127.0.0.1", port, protocol: "tcp", extraTags: {}, logger });
  sink.send(BATCH);
  await sleep(1200); // hot-shots' 1 s buffer flush has run (and failed)
  t.ok(await closedWithin(sink, 2000), "close() resolves within 2 s");
});

t.test("with nothing listening on UDP, sending and closing do not throw", async (t) => {
  const port = await closedPort();
  const { logger, lines } = recordingLogger();
  const sink = new StatsdSink({ host: "127.0.0.1", port, protocol: "udp", extraTags: {}, logger });
  for (let i = 0; i < 3; i++) sink.send(BATCH);
  await sleep(1200); // past one buffer flush
  t.ok(await closedWithin(sink, 2000), "close() resolves");
  t.ok(lines.length <= 1, `at most one error line (got ${lines.length})`);
});
