// Baseline: the rate limiter a user would write instead — @grpc/grpc-js, and for each descriptor one ioredis
// round trip with INCRBY + EXPIRE, one descriptor after another, no batching across descriptors or requests.
// Usage: node naive-limiter.mjs <port> <redis port>
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { Redis } from "ioredis";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../dist/src/gen/envoy/service/ratelimit/v3/rls_pb.js";

const LIMIT = 4_000_000_000;
const redis = new Redis({ host: "127.0.0.1", port: Number(process.argv[3]) });

async function shouldRateLimit(request) {
  const window = Math.floor(Date.now() / 3_600_000) * 3600;
  const statuses = [];
  let overall = 1;
  for (const descriptor of request.descriptors) {
    const key = `${request.domain}_${descriptor.entries.map((e) => `${e.key}_${e.value}`).join("_")}_${window}`;
    const [[, count]] = await redis.pipeline().incrby(key, 1).expire(key, 3600).exec();
    const over = count > LIMIT;
    if (over) overall = 2;
    statuses.push({
      code: over ? 2 : 1,
      currentLimit: { requestsPerUnit: LIMIT, unit: 3 },
      limitRemaining: over ? 0 : LIMIT - count,
    });
  }
  return create(RateLimitResponseSchema, { overallCode: overall, statuses });
}

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
  {
    ShouldRateLimit: (call, callback) =>
      shouldRateLimit(call.request).then(
        (response) => callback(null, response),
        (error) => callback(error),
      ),
  },
);
server.bindAsync(`127.0.0.1:${process.argv[2]}`, grpc.ServerCredentials.createInsecure(), (error) => {
  if (error) throw error;
  console.log("ready");
});
