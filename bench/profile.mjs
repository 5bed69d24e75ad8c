// Profiles ratelimitd under h2load with V8's --cpu-prof and prints the functions with the most self time.
// Usage: node profile.mjs [memory|redis] [descriptors] [key prefix: k, or "over" for over-limit rules]   (needs a built dist/ and, for redis, redis-server)
// PROFILE_DIST=<another build's dist/ folder, inside a checkout with node_modules> profiles that build instead.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { grpcFrame, rateLimitRequest } from "./lib/frames.mjs";
import { h2load } from "./lib/h2load.mjs";
import { spawnPinned, stop, waitForPort } from "./lib/proc.mjs";
import { startRedis } from "./lib/redis.mjs";

const backend = process.argv[2] ?? "memory";
const descriptors = Number(process.argv[3] ?? 1);
const key = process.argv[4] ?? "k";
const dir = mkdtempSync(join(tmpdir(), "ratelimitd-profile-"));
const redis = backend === "redis" ? await startRedis() : undefined;
const env = {
  ...(process.env.LOCAL_CACHE_SIZE_IN_BYTES
    ? { LOCAL_CACHE_SIZE_IN_BYTES: process.env.LOCAL_CACHE_SIZE_IN_BYTES }
    : {}),
  ...(process.env.REDIS_PIPELINE_WINDOW ? { REDIS_PIPELINE_WINDOW: process.env.REDIS_PIPELINE_WINDOW } : {}),
  BACKEND_TYPE: backend,
  REDIS_SOCKET_TYPE: "tcp",
  REDIS_URL: redis ? `127.0.0.1:${redis.port}` : "",
  GRPC_PORT: "19102",
  PORT: "19103",
  DEBUG_PORT: "19104",
  USE_STATSD: "false",
  RUNTIME_ROOT: new URL("rules", import.meta.url).pathname,
  RUNTIME_WATCH_ROOT: "false",
  RUNTIME_SUBDIRECTORY: "",
};
const daemon = spawnPinned(
  1,
  "node",
  [
    "--cpu-prof",
    `--cpu-prof-dir=${dir}`,
    process.env.PROFILE_DIST
      ? `${process.env.PROFILE_DIST}/cmd/ratelimitd.js`
      : new URL("../dist/cmd/ratelimitd.js", import.meta.url).pathname,
  ],
  env,
);
await waitForPort(19102);
const target = {
  url: "http://127.0.0.1:19102/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
  body: grpcFrame(rateLimitRequest(descriptors, key)),
  headers: { "content-type": "application/grpc", te: "trailers" },
};
const result = await h2load(target, { seconds: 8, warmupSeconds: 1, clients: 4, streams: 16, cpu: 0 });
console.log(`${result.rps} req/s, ${result.failed} failed`);
await stop(daemon);
await redis?.stop();

const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
const profile = JSON.parse(readFileSync(join(dir, file), "utf8"));
rmSync(dir, { recursive: true, force: true });
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const interval = (profile.endTime - profile.startTime) / profile.samples.length;
for (const id of profile.samples) {
  const { callFrame } = byId.get(id);
  const key = `${callFrame.functionName || "(anonymous)"} ${callFrame.url.replace(/^.*\/(node_modules|dist)\//, "$1/")}:${callFrame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + interval);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = self.get("(idle) :0") ?? 0;
const busy = total - idle;
console.log(
  `busy ${((100 * busy) / total).toFixed(1)} % of ${(total / 1e6).toFixed(1)} s; per request ${(busy / result.done).toFixed(1)} µs`,
);
console.log("self time (% of busy)  function");
for (const [key, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  if (key === "(idle) :0") continue;
  console.log(
    `${((100 * us) / busy).toFixed(1).padStart(5)} %  ${(us / result.done).toFixed(2).padStart(6)} µs/req  ${key}`,
  );
}
// Where the busy time went, by part of the program.
const AREAS = [
  ["redis backend", /dist\/src\/backends\/redis\//],
  ["other backends", /dist\/src\/backends\//],
  ["engine", /dist\/src\/engine\//],
  ["service", /dist\/src\/service\//],
  ["transports", /dist\/src\/transports\//],
  ["rest of dist", /dist\//],
  ["node:http2", /node:internal\/http2/],
  ["node:net, streams", /node:(net|internal\/stream_base_commons|internal\/streams)/],
  ["garbage collector", /^\(garbage collector\)/],
  ["node: the rest", /node:|node_modules|^\(|:0$/],
];
const areas = new Map();
for (const [key, us] of self) {
  if (key === "(idle) :0") continue;
  const [area] = AREAS.find(([, pattern]) => pattern.test(key)) ?? ["other"];
  areas.set(area, (areas.get(area) ?? 0) + us);
}
console.log("\nby area (% of busy, µs per request)");
for (const [area, us] of [...areas.entries()].sort((a, b) => b[1] - a[1])) {
  console.log(
    `${((100 * us) / busy).toFixed(1).padStart(5)} %  ${(us / result.done).toFixed(2).padStart(6)} µs/req  ${area}`,
  );
}
