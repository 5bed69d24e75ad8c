// Requests that never complete, and connections that do nothing: `--connections` (10) node:http2
// connections each open `--streams` (1000) ShouldRateLimit streams, send HEADERS and one byte of the body,
// and then nothing; `--idle` (10) more connections open no stream at all. After `--hold` seconds (15)
// it prints the daemon's RSS, how the streams were answered (grpc-status / message / reset code, and
// after how long), and how many idle connections got GOAWAY.
//
//   node bench/hostile/slow-loris.mjs [--checkout DIR] [--connections 10] [--streams 1000] [--idle 10] [--hold 15]
//
// Extra daemon settings go in HOSTILE_ENV, e.g. HOSTILE_ENV='GRPC_MAX_CONNECTION_IDLE=5s'.
import { connect } from "node:http2";
import { option, RLS_PATH, rssMb, sleep, startDaemon } from "./lib.mjs";

const CONNECTIONS = Number(option("connections", 10));
const STREAMS = Number(option("streams", 1000));
const IDLE = Number(option("idle", 10));
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
const url = `http://127.0.0.1:${daemon.grpcPort}`;
const streams = [];
const sessions = [];
for (let c = 0; c < CONNECTIONS; c++) {
  const session = connect(url, { peerMaxConcurrentStreams: STREAMS });
  session.on("error", () => {});
  sessions.push(session);
  for (let i = 0; i < STREAMS; i++) {
    const opened = performance.now();
    const stream = session.request({
      ":method": "POST",
      ":path": RLS_PATH,
      "content-type": "application/grpc",
    });
    const state = { answer: "no answer", answeredAfterMs: undefined, closed: false, rstCode: undefined };
    stream.on("response", (h) => {
      state.answer = `grpc-status ${h["grpc-status"]}: ${h["grpc-message"]}`;
      state.answeredAfterMs = performance.now() - opened;
    });
    stream.on("error", () => {});
    stream.on("close", () => {
      state.closed = true;
      state.rstCode = stream.rstCode;
    });
    stream.write(Buffer.from([0]));
    stream.resume();
    streams.push(state);
  }
}
const idle = Array.from({ length: IDLE }, () => {
  const session = connect(url);
  const state = { goawayAfterMs: undefined, closed: false };
  const opened = performance.now();
  session.on("goaway", () => (state.goawayAfterMs = Math.round(performance.now() - opened)));
  session.on("close", () => (state.closed = true));
  session.on("error", () => {});
  return { session, state };
});
await sleep(1000);
const whileHeld = rssMb(daemon.pid);
await sleep(HOLD_SECONDS * 1000);
const after = rssMb(daemon.pid);
const outcomes = {};
for (const state of streams) {
  const what = `${state.answer}, ${state.closed ? `reset with code ${state.rstCode}` : "still open"}`;
  outcomes[what] = (outcomes[what] ?? 0) + 1;
}
const answeredAfterMs = streams
  .map((s) => s.answeredAfterMs)
  .filter((ms) => ms !== undefined)
  .sort((a, b) => a - b);
console.log(
  JSON.stringify(
    {
      checkout: option("checkout", "this clone"),
      settings: env,
      rssMb: { before, withStreamsOpen: whileHeld, [`after${HOLD_SECONDS}s`]: after },
      streams: outcomes,
      answeredAfterMs: answeredAfterMs.length
        ? { first: Math.round(answeredAfterMs[0]), last: Math.round(answeredAfterMs.at(-1)) }
        : "none answered",
      idleConnections: {
        gotGoaway: idle.filter((i) => i.state.goawayAfterMs !== undefined).length,
        closed: idle.filter((i) => i.state.closed).length,
        goawayAfterMs: idle[0]?.state.goawayAfterMs ?? "none",
      },
    },
    null,
    2,
  ),
);
for (const session of [...sessions, ...idle.map((i) => i.session)]) session.destroy();
await daemon.stop();
