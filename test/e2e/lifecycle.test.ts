// Start-up and shutdown: graceful SIGTERM with requests in flight, invalid rules
// and settings, health components, GRPC_UDS, log formats.

import { readFileSync } from "node:fs";
import { request } from "node:http";
import { connect as connectHttp2 } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import t from "tap";
import { RateLimitRequestSchema } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { runDaemonToExit, startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { httpRequest } from "../helpers/http-request.js";

const RULES =
  "domain: life\ndescriptors:\n  - key: k\n    rate_limit: { unit: day, requests_per_unit: 100 }\n";
const JSON_BODY = JSON.stringify({ domain: "life", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });

t.test("SIGTERM: an HTTP request in flight completes, then the process exits 0", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }) });
  const reply = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: daemon.httpPort,
        path: "/json",
        method: "POST",
        headers: { "content-length": String(JSON_BODY.length) },
      },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.write(JSON_BODY.slice(0, 10));
    setTimeout(() => {
      daemon.child.kill("SIGTERM");
      setTimeout(() => req.end(JSON_BODY.slice(10)), 300);
    }, 200);
  });
  const { status, body } = await reply;
  t.equal(status, 200, "the in-flight request was answered");
  t.equal(JSON.parse(body).overallCode, "OK");
  t.equal(await daemon.stop(), 0, "exit code 0");
  t.match(daemon.logs(), /received SIGTERM/);
});

t.test("SIGTERM: a gRPC call in flight completes over the draining connection", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }) });
  const session = connectHttp2(`http://127.0.0.1:${daemon.grpcPort}`);
  const message = toBinary(
    RateLimitRequestSchema,
    create(RateLimitRequestSchema, {
      domain: "life",
      descriptors: [{ entries: [{ key: "k", value: "v" }] }],
    }),
  );
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const stream = session.request({
    ":method": "POST",
    ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.resume();
  const trailers = new Promise<Record<string, unknown>>((resolve) => stream.on("trailers", resolve));
  const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
  stream.write(frame.subarray(0, 3));
  await new Promise((resolve) => setTimeout(resolve, 200));
  daemon.child.kill("SIGTERM");
  await goaway;
  t.pass("the server sent GOAWAY");
  stream.end(frame.subarray(3));
  t.equal((await trailers)["grpc-status"], "0", "the call completed with OK");
  session.close();
  t.equal(await daemon.stop(), 0);
});

t.test("a client that stops reading cannot hold shutdown beyond SHUTDOWN_GRACE_PERIOD", async (t) => {
  const daemon = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
    SHUTDOWN_GRACE_PERIOD: "1s",
  });
  const session = connectHttp2(`http://127.0.0.1:${daemon.grpcPort}`);
  const stream = session.request({
    ":method": "POST",
    ":path": "/grpc.health.v1.Health/Check",
    "content-type": "application/grpc",
  });
  stream.end(Buffer.from([0, 0, 0, 0, 0]));
  await new Promise((resolve) => stream.once("response", resolve));
  const started = Date.now();
  t.equal(await daemon.stop(), 0, "exit code 0");
  const elapsed = Date.now() - started;
  t.ok(elapsed >= 900 && elapsed < 5000, `closed after the grace period (${elapsed} ms)`);
  session.destroy();
});

t.test("an invalid rules file: the start-up log names file and reason; decisions fail cleanly", async (t) => {
  const dir = t.testdir({
    config: {
      "good.yaml": RULES,
      "bad.yaml": "domain: x\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight }\n",
    },
  });
  const daemon = await startDaemon({ RUNTIME_ROOT: dir });
  t.teardown(() => daemon.stop());
  t.match(
    daemon.logs(),
    /level=error msg="Error loading new configuration: bad\.yaml: invalid rate limit unit 'fortnight'"/,
  );
  const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  await t.rejects(
    client.shouldRateLimit({ domain: "life", descriptors: [{ entries: [{ key: "k", value: "v" }] }] }),
    {
      code: 2,
      details: "no rate limit configuration loaded",
    },
  );
  client.close();
  const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
  t.match(stats, /^ratelimit\.service\.config_load_error: 1$/m);
  t.equal((await httpRequest(daemon.debugPort, "/rlconfig")).body, "", "no rules loaded");
});

t.test("invalid settings stop start-up with the variable and value named", async (t) => {
  const { code, logs } = await runDaemonToExit({
    GRPC_PORT: "eighty",
    NEAR_LIMIT_RATIO: "1.5",
    LOG_LEVEL: "loud",
  });
  t.equal(code, 1);
  t.equal(
    logs,
    "ratelimitd: invalid settings:\n" +
      '  invalid setting GRPC_PORT="eighty": not an integer\n' +
      '  invalid setting LOG_LEVEL="loud": must be one of trace, debug, info, warn, warning, error, fatal, panic\n' +
      '  invalid setting NEAR_LIMIT_RATIO="1.5": must be between 0 and 1\n',
  );
});

t.test("HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: unhealthy without a domain", async (t) => {
  const empty = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: {} }),
    HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: "true",
  });
  const unhealthy = await httpRequest(empty.httpPort, "/healthcheck");
  t.strictSame({ status: unhealthy.status, body: unhealthy.body }, { status: 500, body: "" });
  await empty.stop();
  const loaded = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
    HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: "true",
  });
  t.equal((await httpRequest(loaded.httpPort, "/healthcheck")).status, 200);
  await loaded.stop();
});

t.test("GRPC_UDS: gRPC on a unix socket", async (t) => {
  const dir = t.testdir({ config: { "r.yaml": RULES } });
  const socket = `${dir}/rls.sock`;
  const daemon = await startDaemon({ RUNTIME_ROOT: dir, GRPC_UDS: socket });
  t.teardown(() => daemon.stop());
  t.match(daemon.logs(), `Listening for gRPC on '${socket}'`);
  const client = envoyRlsClient(`unix://${socket}`);
  const response = await client.shouldRateLimit({
    domain: "life",
    descriptors: [{ entries: [{ key: "k", value: "v" }] }],
  });
  t.equal(response.statuses[0]!.limit_remaining, 99);
  client.close();
});

t.test(
  "LOG_FORMAT=json and LOG_LEVEL=debug: the reference's JSON fields and per-request lines",
  async (t) => {
    const daemon = await startDaemon({
      RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
      LOG_FORMAT: "json",
      LOG_LEVEL: "debug",
    });
    await httpRequest(daemon.httpPort, "/json", { method: "POST", body: JSON_BODY });
    await daemon.stop();
    const lines = daemon
      .logs()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, string>);
    for (const line of lines)
      t.strictSame(Object.keys(line), ["@message", "@timestamp", "level"], String(line["@message"]));
    const messages = lines.map((line) => line["@message"]);
    t.ok(messages.includes("loading domain: life"));
    t.ok(messages.includes("got descriptor: (k=v)"));
    t.ok(messages.includes("applying limit: 100 requests per DAY, shadow_mode: false, quota: false"));
    t.ok(lines.some((l) => l.level === "warning" && l["@message"]!.startsWith("Listening for HTTP on ")));
  },
);

t.test("a daemon whose log pipe closes keeps serving and does not spin", async (t) => {
  const daemon = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
    LOG_LEVEL: "debug",
  });
  t.teardown(() => daemon.stop("SIGKILL"));
  daemon.child.stderr!.destroy();
  // Every request logs at debug level, into the closed pipe.
  for (let i = 0; i < 20; i++)
    await httpRequest(daemon.httpPort, "/json", { method: "POST", body: JSON_BODY });
  const cpuBefore = processCpuSeconds(daemon.child.pid!);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const cpu = processCpuSeconds(daemon.child.pid!) - cpuBefore;
  t.ok(cpu < 0.3, `idle CPU over one second: ${cpu.toFixed(2)} s`);
  const reply = await httpRequest(daemon.httpPort, "/json", { method: "POST", body: JSON_BODY });
  t.equal(reply.status, 200, "still serving");
});

/** CPU seconds (user + system) a process has used, from /proc. */
function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
