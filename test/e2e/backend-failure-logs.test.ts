// With Redis gone, at LOG_LEVEL=info: every failed decision is in the log at warn (gRPC and Connect as one
// kind, /json with the reference's `error: …` text), at most one line a second with the count it stands
// for; the loss of the connection and its recovery are logged once each. Clients are never shown the
// address or anything else from REDIS_URL — only the log has it, with the credentials masked.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import t from "tap";
import { RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { pollUntil } from "../helpers/redis-process.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";

/** One JSON log line (LOG_FORMAT=json). */
interface LogRecord {
  readonly level: string;
  readonly "@message": string;
  readonly "@timestamp": string;
}

const records = (logs: string): LogRecord[] =>
  logs
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogRecord);

/** How many occurrences a throttled line stands for: itself, plus `(and N more in the last X s)`. */
const occurrences = (message: string) =>
  1 + Number(/ \(and (\d+) more in the last \d+\.\d s\)$/.exec(message)?.[1] ?? 0);
const withoutCount = (message: string) => message.replace(/ \(and \d+ more in the last \d+\.\d s\)$/, "");
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const RULES =
  "domain: down\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000 }\n";
const REQUEST = { domain: "down", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
const GRPC_PREFIX = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit failed: ";

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "Redis killed and restarted: warn lines with counts, loss and recovery, no address to clients",
    async (t) => {
      const server = await startRedis(t, { aclUser: { name: "limiter", password: "s3cret-pw" } });
      const daemon = await startDaemon({
        BACKEND_TYPE: "redis",
        REDIS_SOCKET_TYPE: "tcp",
        REDIS_URL: `redis://limiter:s3cret-pw@${server.url}`,
        REDIS_POOL_SIZE: "2",
        // Every call goes to Redis and fails on its own: the circuit breaker's answers are
        // test/e2e/outages/*'s (docs/outages.md).
        BACKEND_BREAKER_FAILURES: "0",
        LOG_LEVEL: "info",
        LOG_FORMAT: "json",
        RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
      });
      t.teardown(() => daemon.stop());
      const grpc = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
      t.teardown(() => grpc.close());
      const connect = createClient(
        RateLimitService,
        createConnectTransport({
          baseUrl: `http://127.0.0.1:${daemon.grpcPort}`,
          httpVersion: "1.1",
          useBinaryFormat: false,
        }),
      );
      const label = `redis://*****@${server.url}`;
      const detail = `redis ${label}: no connection is up: connect ECONNREFUSED ${server.url}`;
      const connectionLines = () =>
        records(daemon.logs()).filter((r) => /: (connection lost|reconnected)\b/.test(r["@message"]));

      t.equal((await grpc.shouldRateLimit(REQUEST)).overall_code, "OK");
      await server.kill();
      await pollUntil("the loss logged", async () => (connectionLines().length > 0 ? true : undefined), {
        timeoutMs: 10_000,
      });
      t.strictSame(
        connectionLines().map((r) => [r.level, r["@message"]]),
        [["warning", `redis ${label}: connection lost: connection closed by Redis`]],
      );

      // Until the first reconnect attempt is refused, the reason is the lost connection's.
      let grpcFailures = 0;
      const grpcDetails = async () => {
        const error = await grpc.shouldRateLimit(REQUEST).then(
          () => undefined,
          (failure: { code: number; details: string }) => failure,
        );
        t.equal(error?.code, 14, "UNAVAILABLE");
        grpcFailures++;
        return error?.details;
      };
      await pollUntil(
        "the refusal reported",
        async () => ((await grpcDetails()) === "redis: connection refused" ? true : undefined),
        { timeoutMs: 10_000 },
      );
      for (let i = 0; i < 30; i++)
        t.equal(await grpcDetails(), "redis: connection refused", "gRPC status message");
      for (let i = 0; i < 10; i++) {
        const error = await connect.shouldRateLimit(REQUEST).then(
          () => undefined,
          (failure: unknown) => failure,
        );
        t.ok(error instanceof ConnectError);
        t.strictSame(
          { code: (error as ConnectError).code, message: (error as ConnectError).rawMessage },
          { code: Code.Unavailable, message: "redis: connection refused" },
          "Connect error",
        );
      }
      const jsonFailures = 20;
      for (let i = 0; i < jsonFailures; i++) {
        const reply = await httpRequest(daemon.httpPort, "/json", {
          method: "POST",
          body: JSON.stringify(REQUEST),
        });
        t.strictSame(
          { status: reply.status, body: reply.body },
          { status: 400, body: "Bad Request\n" },
          "/json",
        );
      }

      // The held lines are written within a second of the last ones.
      const lines = (prefix: string) =>
        records(daemon.logs()).filter((r) => r["@message"].startsWith(prefix));
      const counted = (prefix: string) =>
        lines(prefix).reduce((sum, r) => sum + occurrences(r["@message"]), 0);
      const expectedGrpc = grpcFailures + 10;
      await pollUntil(
        "every failure counted in the log",
        async () =>
          counted(GRPC_PREFIX) === expectedGrpc && counted("error: ") === jsonFailures ? true : undefined,
        { timeoutMs: 5000 },
      );
      for (const [prefix, last] of [
        [GRPC_PREFIX, `${GRPC_PREFIX}${detail}`],
        ["error: ", `error: ${detail}`],
      ] as const) {
        const kind = lines(prefix);
        t.ok(
          kind.length < counted(prefix),
          `${prefix}: ${kind.length} lines for ${counted(prefix)} failures`,
        );
        t.ok(
          kind.every((r) => r.level === "warning"),
          "at warn",
        );
        t.equal(withoutCount(kind.at(-1)!["@message"]), last, "the latest failure's details");
        for (const r of kind) {
          t.match(
            r["@message"],
            new RegExp(`^${escaped(prefix)}redis ${escaped(label)}: no connection is up: `),
            "every line names the deployment",
          );
        }
        const gaps = kind
          .slice(1)
          .map((r, i) => Date.parse(r["@timestamp"]) - Date.parse(kind[i]!["@timestamp"]));
        t.ok(
          gaps.every((gap) => gap >= 990),
          `lines of one kind at least a second apart: ${gaps.join(", ")} ms`,
        );
      }
      t.match(
        (await httpRequest(daemon.debugPort, "/stats")).body,
        new RegExp(
          `^ratelimit\\.service\\.call\\.should_rate_limit\\.redis_error: ${expectedGrpc + jsonFailures}$`,
          "m",
        ),
      );

      await server.restart();
      await pollUntil(
        "decisions again",
        async () =>
          (await grpc.shouldRateLimit(REQUEST).catch(() => undefined))?.overall_code === "OK"
            ? true
            : undefined,
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      await pollUntil(
        "the recovery logged",
        async () => (connectionLines().length === 2 ? true : undefined),
        {
          timeoutMs: 5000,
        },
      );
      const [lost, back] = connectionLines();
      t.equal(lost!["@message"], `redis ${label}: connection lost: connection closed by Redis`);
      t.equal(back!.level, "warning");
      t.match(back!["@message"], new RegExp(`^redis ${escaped(label)}: reconnected after \\d+\\.\\d s$`));
      t.notMatch(daemon.logs(), "s3cret-pw", "credentials never logged");
    },
  );
}
