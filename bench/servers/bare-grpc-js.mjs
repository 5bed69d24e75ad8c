// Baseline: what a typical Node gRPC service does — @grpc/grpc-js with a trivial unary handler that decodes
// the request and answers a fixed response (protobuf-es for the messages). Usage: node bare-grpc-js.mjs <port>
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../dist/src/gen/envoy/service/ratelimit/v3/rls_pb.js";

const response = create(RateLimitResponseSchema, {
  overallCode: 1,
  statuses: [
    {
      code: 1,
      currentLimit: { requestsPerUnit: 1000000, unit: 2 },
      limitRemaining: 999999,
      durationUntilReset: { seconds: 42n },
    },
  ],
});
const server = new grpc.Server();
server.addService(
  {
    ShouldRateLimit: {
      path: "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      requestStream: false,
      responseStream: false,
      requestDeserialize: (bytes) => fromBinary(RateLimitRequestSchema, bytes),
      responseSerialize: (message) => Buffer.from(toBinary(RateLimitResponseSchema, message)),
    },
  },
  { ShouldRateLimit: (_call, callback) => callback(null, response) },
);
server.bindAsync(`127.0.0.1:${process.argv[2]}`, grpc.ServerCredentials.createInsecure(), (error) => {
  if (error) throw error;
  console.log("ready");
});
