// Baseline "ceiling": a bare node:http2 server answering every stream with a fixed gRPC response, reading
// the request body but doing no work. Usage: node canned-http2.mjs <port>
import { createServer } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { RateLimitResponseSchema } from "../../dist/src/gen/envoy/service/ratelimit/v3/rls_pb.js";

const body = toBinary(
  RateLimitResponseSchema,
  create(RateLimitResponseSchema, {
    overallCode: 1,
    statuses: [
      {
        code: 1,
        currentLimit: { requestsPerUnit: 1000000, unit: 2 },
        limitRemaining: 999999,
        durationUntilReset: { seconds: 42n },
      },
    ],
  }),
);
const frame = Buffer.alloc(5 + body.length);
frame.writeUInt32BE(body.length, 1);
frame.set(body, 5);

const server = createServer({ maxSessionMemory: 64 });
server.on("stream", (stream) => {
  stream.on("data", () => {});
  stream.on("end", () => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame);
  });
  stream.on("error", () => {});
});
server.listen(Number(process.argv[2]), "127.0.0.1", () => console.log("ready"));
