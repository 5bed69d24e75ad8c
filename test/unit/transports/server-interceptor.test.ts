// The Connect-side interceptor: errors become statuses once; unexpected ones show clients only
// `server error` while the log keeps the details.
import { Code, ConnectError } from "@connectrpc/connect";
import t from "tap";
import { BackendError, DatabaseError, InvalidArgumentError, NotFoundError } from "../../../src/errors.js";
import { Logger } from "../../../src/observability/logger.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";
import { ThrottledLog } from "../../../src/observability/throttled-log.js";
import { serverInterceptor } from "../../../src/transports/grpc/server-interceptor.js";
import { ServerMetrics } from "../../../src/transports/grpc/server-metrics.js";

/** Runs one unary call through the interceptor, the handler throwing `thrown`. */
async function failedCall(
  thrown: unknown,
  method = { name: "CreateUser", parent: { typeName: "ratelimitd.users.v1.UserService" } },
) {
  const logs: string[] = [];
  const logger = new Logger({ level: "info", format: "text", write: (line) => logs.push(line) });
  const interceptor = serverInterceptor(
    new ServerMetrics(new StatsRegistry({ maxDynamicKeys: 10 })),
    logger,
    new ThrottledLog({ logger }),
  );
  const request = { stream: false, method };
  const call = interceptor(async () => {
    throw thrown;
  });
  try {
    await call(request as unknown as Parameters<typeof call>[0]);
  } catch (error) {
    return { error: error as ConnectError, logs };
  }
  throw new Error("the call did not fail");
}

t.test("an unexpected error: INTERNAL 'server error' to the client, the details in the log", async (t) => {
  const { error, logs } = await failedCall(new TypeError("cannot read properties of undefined (secret)"));
  t.type(error, ConnectError);
  t.equal(error.code, Code.Internal);
  t.equal(error.rawMessage, "server error");
  t.equal(logs.length, 1);
  t.match(logs[0], "ratelimitd.users.v1.UserService/CreateUser failed: TypeError: cannot read properties");
  t.match(logs[0], "(secret)");
});

t.test("a database failure: INTERNAL 'server error', logged", async (t) => {
  const { error, logs } = await failedCall(new DatabaseError("connection refused to 10.0.0.7:5432"));
  t.equal(error.code, Code.Internal);
  t.equal(error.rawMessage, "server error");
  t.match(logs[0], "connection refused to 10.0.0.7:5432");
});

t.test("ratelimitd's own errors keep their status and text, and are not logged", async (t) => {
  const invalid = await failedCall(new InvalidArgumentError("Bad request"));
  t.equal(invalid.error.code, Code.InvalidArgument);
  t.equal(invalid.error.rawMessage, "Bad request");
  const missing = await failedCall(new NotFoundError("User not found"));
  t.equal(missing.error.code, Code.NotFound);
  t.equal(missing.error.rawMessage, "User not found");
  t.strictSame([...invalid.logs, ...missing.logs], []);
});

t.test("a ConnectError thrown by a handler passes through unchanged", async (t) => {
  const { error } = await failedCall(new ConnectError("no credentials", Code.Unauthenticated));
  t.equal(error.code, Code.Unauthenticated);
  t.equal(error.rawMessage, "no credentials");
});

t.test("a backend failure: UNAVAILABLE with the short text; the details logged at warn", async (t) => {
  const { error, logs } = await failedCall(
    new BackendError("redis redis://*****@10.0.0.7:6379: no answer within 300 ms", {
      clientMessage: "redis: no answer within 300 ms",
    }),
    { name: "ShouldRateLimit", parent: { typeName: "envoy.service.ratelimit.v3.RateLimitService" } },
  );
  t.equal(error.code, Code.Unavailable);
  t.equal(error.rawMessage, "redis: no answer within 300 ms");
  t.equal(logs.length, 1);
  t.match(
    logs[0],
    / level=warning msg="envoy\.service\.ratelimit\.v3\.RateLimitService\/ShouldRateLimit failed: redis redis:\/\/\*\*\*\*\*@10\.0\.0\.7:6379: no answer within 300 ms"\n$/,
  );
});
