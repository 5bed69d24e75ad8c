// Clients that drop half-sent calls: `--streams` (1000) ShouldRateLimit streams, `--per-connection` (100)
// on each HTTP/2 connection, each sending half of a gRPC message before the client destroys the
// connection. Prints how many bytes the daemon logged meanwhile (one stack trace per stream before the
// fast path checked that a stream is still open) and whether it still answers.
//
//   node bench/hostile/dropped-streams.mjs [--checkout DIR] [--streams 1000] [--per-connection 100]
import { connect } from "node:http2";
import { option, RLS_PATH, sleep, startDaemon } from "./lib.mjs";

const STREAMS = Number(option("streams", 1000));
const PER_CONNECTION = Number(option("per-connection", 100));

const daemon = await startDaemon();
const logBefore = daemon.logBytes();
const message = Buffer.alloc(5 + 20);
message.writeUInt32BE(20, 1);

/** `count` streams on one connection, each writing half a message; then the connection is destroyed. */
async function dropConnection(count) {
  const session = connect(`http://127.0.0.1:${daemon.grpcPort}`);
  session.on("error", () => {});
  const written = [];
  for (let i = 0; i < count; i++) {
    const stream = session.request({
      ":method": "POST",
      ":path": RLS_PATH,
      "content-type": "application/grpc",
    });
    stream.on("error", () => {});
    written.push(new Promise((resolve) => stream.write(message.subarray(0, 12), resolve)));
  }
  await Promise.all(written);
  await sleep(20);
  session.destroy();
}
for (let sent = 0; sent < STREAMS; sent += PER_CONNECTION)
  await dropConnection(Math.min(PER_CONNECTION, STREAMS - sent));
await sleep(500);

const status = await new Promise((resolve) => {
  const session = connect(`http://127.0.0.1:${daemon.grpcPort}`);
  const stream = session.request({
    ":method": "POST",
    ":path": RLS_PATH,
    "content-type": "application/grpc",
  });
  let code = "no answer";
  stream.on("response", (h) => (code = h["grpc-status"] ?? code));
  stream.on("trailers", (h) => (code = h["grpc-status"]));
  stream.resume();
  stream.end(Buffer.from([0, 0, 0, 0, 0]));
  stream.on("close", () => {
    session.close();
    resolve(code);
  });
});
const logged = daemon.logBytes() - logBefore;
console.log(
  JSON.stringify(
    {
      checkout: option("checkout", "this clone"),
      droppedStreams: STREAMS,
      daemonLogBytes: logged,
      uncaughtExceptionLines: (daemon.logs().match(/uncaught exception/g) ?? []).length,
      grpcStatusAfterwards: status,
    },
    null,
    2,
  ),
);
await daemon.stop();
