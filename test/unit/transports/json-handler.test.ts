// /json's mapping of decisions and failures to statuses (the reference's src/server/server_impl.go),
// including the cases the real service cannot produce: an UNKNOWN overall code (500 with the JSON body) and
// an unexpected exception (400).
import t, { type Test } from "tap";
import type { Decision } from "../../../src/engine/decision-request.js";
import { DEFAULT_REQUEST_LIMITS } from "../../../src/engine/request-limits.js";
import { BackendError, ServiceError } from "../../../src/errors.js";
import { Logger, silentLogger } from "../../../src/observability/logger.js";
import { ThrottledLog } from "../../../src/observability/throttled-log.js";
import type { RateLimitService } from "../../../src/service/rate-limit-service.js";
import { HttpListener } from "../../../src/transports/http/http-listener.js";
import { exactRoute } from "../../../src/transports/http/http-route.js";
import { jsonHandler } from "../../../src/transports/http/json-handler.js";
import { httpRequest } from "../../helpers/http-request.js";

/** A service answering with a fixed decision or failure: the handler's only collaborator. */
function serviceAnswering(answer: () => Decision): RateLimitService {
  return { shouldRateLimit: async () => answer() } as unknown as RateLimitService;
}

async function serve(t: Test, service: RateLimitService, log = new ThrottledLog({ logger: silentLogger })) {
  const listener = new HttpListener(
    [exactRoute("/json", jsonHandler(service, log, DEFAULT_REQUEST_LIMITS))],
    silentLogger,
  );
  const port = await listener.listen("127.0.0.1", 0);
  t.teardown(() => listener.close(100));
  return port;
}

const BODY = '{"domain":"d","descriptors":[{"entries":[{"key":"k","value":"v"}]}]}';
const decision = (overallCode: number): Decision => ({
  overallCode,
  statuses: [],
  responseHeaders: [],
  dynamicMetadata: undefined,
});

t.test("overall codes map to 200, 429 and 500 with the JSON body", async (t) => {
  for (const [code, status, body] of [
    [1, 200, '{"overallCode":"OK"}'],
    [2, 429, '{"overallCode":"OVER_LIMIT"}'],
    [0, 500, "{}"],
  ] as const) {
    const port = await serve(
      t,
      serviceAnswering(() => decision(code)),
    );
    const reply = await httpRequest(port, "/json", { method: "POST", body: BODY });
    t.strictSame(
      {
        status: reply.status,
        body: reply.body,
        type: reply.headers["content-type"],
        length: reply.headers["content-length"],
      },
      { status, body, type: "application/json", length: String(body.length) },
    );
  }
});

t.test("an unexpected failure of the service is a 400, like any service error", async (t) => {
  const port = await serve(
    t,
    serviceAnswering(() => {
      throw new TypeError("boom");
    }),
  );
  const reply = await httpRequest(port, "/json", { method: "POST", body: BODY });
  t.strictSame({ status: reply.status, body: reply.body }, { status: 400, body: "Bad Request\n" });
});

t.test(
  "failures are logged at warn with the reference's `error: …`, the backend's with its details",
  async (t) => {
    const lines: string[] = [];
    const logger = new Logger({
      level: "info",
      format: "json",
      write: (line) => {
        const record = JSON.parse(line) as { level: string; "@message": string };
        lines.push(`${record.level}: ${record["@message"]}`);
      },
    });
    const failures: Error[] = [
      new BackendError("redis 10.0.0.7:6379: no connection is up: connect ECONNREFUSED 10.0.0.7:6379", {
        clientMessage: "redis: connection refused",
      }),
      new ServiceError("rate limit domain must not be empty"),
      new TypeError("boom"),
    ];
    let next = 0;
    const log = new ThrottledLog({ logger });
    const port = await serve(
      t,
      serviceAnswering(() => {
        throw failures[next++]!;
      }),
      log,
    );
    for (let i = 0; i < failures.length; i++) {
      const reply = await httpRequest(port, "/json", { method: "POST", body: BODY });
      t.strictSame({ status: reply.status, body: reply.body }, { status: 400, body: "Bad Request\n" });
    }
    const bad = await httpRequest(port, "/json", { method: "POST", body: "{nope" });
    t.equal(bad.status, 400);
    t.equal(lines.length, 3);
    t.strictSame(lines.slice(0, 2), [
      "warning: error: redis 10.0.0.7:6379: no connection is up: connect ECONNREFUSED 10.0.0.7:6379",
      "warning: error: rate limit domain must not be empty",
    ]);
    t.match(
      lines[2],
      /^error: \/json: unexpected error: TypeError: boom\n {4}at /,
      "a bug: error level, with its stack",
    );
    // The bad body and the service error share a kind: within the second, the later one is held.
    log.flush();
    t.match(
      lines[3],
      /^warning: error: cannot decode message envoy\.service\.ratelimit\.v3\.RateLimitRequest from JSON: /,
    );
  },
);
