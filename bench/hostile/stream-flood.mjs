// Header-only stream flood on the gRPC port: `--connections` (10) raw HTTP/2 connections each open
// `--streams` (50000) ShouldRateLimit streams with HEADERS and never send a body, ignoring the server's
// SETTINGS_MAX_CONCURRENT_STREAMS. Prints the daemon's RSS before, right after the flood, and `--hold`
// seconds later (15: past the default GRPC_REQUEST_READ_TIMEOUT), what the server answered (the advertised
// limit, RST_STREAMs, GOAWAY codes), and whether a normal call on a new connection still succeeds.
//
//   node bench/hostile/stream-flood.mjs [--checkout DIR] [--connections 10] [--streams 50000] [--hold 15]
//
// `--checkout` runs another built clone (before/after figures); extra daemon settings go in the
// environment variables HOSTILE_ENV='GRPC_MAX_CONCURRENT_STREAMS=0 …'.
import { connect } from "node:http2";
import { option, RLS_PATH, rawConnection, rssMb, sleep, startDaemon } from "./lib.mjs";

const CONNECTIONS = Number(option("connections", 10));
const STREAMS = Number(option("streams", 50_000));
const HOLD_SECONDS = Number(option("hold", 15));
const env = Object.fromEntries(
  (process.env.HOSTILE_ENV ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => kv.split("=")),
);

const daemon = await startDaemon(env);
await sleep(500);
const before = rssMb(daemon.pid);
const started = Date.now();
const connections = Array.from({ length: CONNECTIONS }, () => rawConnection(daemon.grpcPort));
let opened = 0;
await Promise.all(
  connections.map(async (connection) => {
    await connection.ready;
    for (let i = 0; i < STREAMS && !connection.received.closed; i++) {
      opened++;
      if (!connection.openStream().flushed) await connection.drain();
    }
  }),
);
await sleep(1000);
const afterFlood = rssMb(daemon.pid);
const floodSeconds = (Date.now() - started) / 1000;

/** One well-formed call on a new connection: its grpc-status and milliseconds. */
function probe() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const session = connect(`http://127.0.0.1:${daemon.grpcPort}`);
    session.on("error", () => {});
    const stream = session.request({
      ":method": "POST",
      ":path": RLS_PATH,
      "content-type": "application/grpc",
    });
    let status = "no answer";
    stream.on("trailers", (h) => (status = h["grpc-status"]));
    stream.on("response", (h) => (status = h["grpc-status"] ?? status));
    stream.on("error", (e) => (status = e.code));
    stream.resume();
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
    stream.on("close", () => {
      session.close();
      resolve({ status, ms: Math.round(performance.now() - t0) });
    });
    setTimeout(() => session.destroy(), 30_000).unref();
  });
}
const during = await probe();
await sleep(HOLD_SECONDS * 1000);
const afterHold = rssMb(daemon.pid);
const summary = {
  checkout: option("checkout", "this clone"),
  connections: CONNECTIONS,
  streamsPerConnection: STREAMS,
  streamsWritten: opened,
  floodSeconds,
  advertisedMaxConcurrentStreams: connections[0].received.settings?.[3] ?? "none (unlimited)",
  rssMb: { before, afterFlood, [`after${HOLD_SECONDS}s`]: afterHold },
  rstStreamsReceived: connections.reduce((n, c) => n + c.received.rstStreams, 0),
  goawayCodes: connections.map((c) => c.received.goaway ?? "none"),
  connectionsClosedByServer: connections.filter((c) => c.received.closed).length,
  probeDuringFlood: during,
  probeAfterHold: await probe(),
  daemonLogBytes: daemon.logBytes(),
};
console.log(JSON.stringify(summary, null, 2));
for (const connection of connections) connection.close();
await daemon.stop();
