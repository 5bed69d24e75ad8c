// A client that keeps writing an oversized message: a node:http2 client (default options) sends one
// ShouldRateLimit call carrying a `--mb` (16) MiB message, then three well-formed calls on the same
// connection. Prints what each call got (HTTP status, grpc-status and grpc-message, or the stream error)
// and whether the server sent GOAWAY.
//
// Before the fix the server answered RESOURCE_EXHAUSTED while the client still had more than 10 MiB queued;
// Node's client then counts the queued bytes against its maxSessionMemory for good and refuses every later
// stream on that connection with ENHANCE_YOUR_CALM.
//
//   node bench/hostile/big-message.mjs [--checkout DIR] [--mb 16]
import { connect } from "node:http2";
import { option, RLS_PATH, startDaemon } from "./lib.mjs";

const MIB = Number(option("mb", 16));
const daemon = await startDaemon();
const session = connect(`http://127.0.0.1:${daemon.grpcPort}`);
let goaway = "none";
session.on("goaway", (code) => (goaway = code));
session.on("error", () => {});

function call(body) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const stream = session.request({
      ":method": "POST",
      ":path": RLS_PATH,
      "content-type": "application/grpc",
    });
    const seen = {};
    stream.on("response", (h) => Object.assign(seen, h));
    stream.on("trailers", (h) => Object.assign(seen, h));
    stream.on("error", (e) => (seen.error = e.message));
    stream.resume();
    stream.end(body);
    stream.on("close", () =>
      resolve(
        seen.error ??
          `${seen[":status"]} grpc-status ${seen["grpc-status"]} ${seen["grpc-message"] ?? ""} (${Math.round(performance.now() - t0)} ms)`,
      ),
    );
  });
}

const big = Buffer.alloc(5 + MIB * 1024 * 1024);
big.writeUInt32BE(MIB * 1024 * 1024, 1);
const results = { checkout: option("checkout", "this clone"), [`${MIB} MiB call`]: await call(big) };
for (let i = 1; i <= 3; i++) results[`next call ${i}`] = await call(Buffer.from([0, 0, 0, 0, 0]));
results.goaway = goaway;
console.log(JSON.stringify(results, null, 2));
session.destroy();
await daemon.stop();
