// /json's mapping of decisions and failures to statuses (spec §3.2), including the cases the real service
// cannot produce: an UNKNOWN overall code (500 with the JSON body) and an unexpected exception (400).
import t, { type Test } from "tap";
import type { Decision } from "../../../src/engine/decision-request.js";
import { silentLogger } from "../../../src/observability/logger.js";
import type { RateLimitService } from "../../../src/service/rate-limit-service.js";
import { HttpListener } from "../../../src/transports/http/http-listener.js";
import { exactRoute } from "../../../src/transports/http/http-route.js";
import { jsonHandler } from "../../../src/transports/http/json-handler.js";
import { httpRequest } from "../../helpers/http-request.js";

/** A service answering with a fixed decision or failure: the handler's only collaborator. */
function serviceAnswering(answer: () => Decision): RateLimitService {
  return { shouldRateLimit: async () => answer() } as unknown as RateLimitService;
}

async function serve(t: Test, service: RateLimitService): Promise<number> {
  const listener = new HttpListener([exactRoute("/json", jsonHandler(service, silentLogger))], silentLogger);
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
