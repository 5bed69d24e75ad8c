// The HTTP port exactly as the reference's src/server/server_impl.go serves it: /json statuses, bodies and
// headers, /healthcheck, Go's 404.
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

const RULES = `domain: web
descriptors:
  - key: k
    value: two
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: k
    value: free
    rate_limit: { unlimited: true }
`;
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const daemon = await startDaemon({ RUNTIME_ROOT: dir });
t.teardown(() => daemon.stop());
const json = (body: string, method = "POST") => httpRequest(daemon.httpPort, "/json", { method, body });
const BAD_REQUEST = { status: 400, body: "Bad Request\n" };

t.test("200 then 429, with proto3 JSON bodies", async (t) => {
  await stayInsideWindow(3600);
  const body = JSON.stringify({ domain: "web", descriptors: [{ entries: [{ key: "k", value: "two" }] }] });
  const first = await json(body);
  t.equal(first.status, 200);
  t.equal(first.headers["content-type"], "application/json");
  const parsed = JSON.parse(first.body);
  t.match(parsed.statuses[0].durationUntilReset, /^\d+s$/);
  delete parsed.statuses[0].durationUntilReset;
  t.strictSame(parsed, {
    overallCode: "OK",
    statuses: [{ code: "OK", currentLimit: { requestsPerUnit: 2, unit: "HOUR" }, limitRemaining: 1 }],
  });
  t.equal((await json(body)).status, 200);
  const over = await json(body);
  t.equal(over.status, 429);
  t.equal(JSON.parse(over.body).overallCode, "OVER_LIMIT");
});

t.test("no rule and unlimited: the reference's bodies", async (t) => {
  const none = await json(
    JSON.stringify({ domain: "web", descriptors: [{ entries: [{ key: "x", value: "y" }] }] }),
  );
  t.strictSame(
    { status: none.status, body: none.body },
    { status: 200, body: '{"overallCode":"OK","statuses":[{"code":"OK"}]}' },
  );
  const free = await json(
    JSON.stringify({ domain: "web", descriptors: [{ entries: [{ key: "k", value: "free" }] }] }),
  );
  t.equal(free.body, '{"overallCode":"OK","statuses":[{"code":"OK","limitRemaining":4294967295}]}');
});

t.test("both field spellings and any method are accepted", async (t) => {
  const body =
    '{"domain":"web","hits_addend":0,"descriptors":[{"entries":[{"key":"k","value":"free"}],"hitsAddend":"0"}]}';
  t.equal((await json(body, "PUT")).status, 200);
  t.equal((await json(body, "GET")).status, 200);
});

t.test("400 Bad Request for anything that does not parse or is refused", async (t) => {
  for (const body of ["", "}", '{"domain":"web","nope":1}', "[1,2]", '{"domain":5}', "\u0000\u0001"]) {
    const reply = await json(body);
    t.strictSame({ status: reply.status, body: reply.body }, BAD_REQUEST, `body ${JSON.stringify(body)}`);
    t.equal(reply.headers["content-type"], "text/plain; charset=utf-8");
    t.equal(reply.headers["x-content-type-options"], "nosniff");
  }
  const emptyDomain = await json(
    JSON.stringify({ domain: "", descriptors: [{ entries: [{ key: "k", value: "v" }] }] }),
  );
  t.strictSame({ status: emptyDomain.status, body: emptyDomain.body }, BAD_REQUEST, "service error");
  const badUnit = await json(
    JSON.stringify({
      domain: "web",
      descriptors: [{ entries: [{ key: "k", value: "v" }], limit: { requestsPerUnit: 1, unit: "UNKNOWN" } }],
    }),
  );
  t.strictSame({ status: badUnit.status, body: badUnit.body }, BAD_REQUEST, "invalid override unit");
  const tooBig = await json(`{"domain":"${"x".repeat(5 * 1024 * 1024)}"}`);
  t.equal(tooBig.status, 400, "body over 4 MiB");
});

t.test("/healthcheck and 404", async (t) => {
  const health = await httpRequest(daemon.httpPort, "/healthcheck");
  t.strictSame(
    { status: health.status, body: health.body, type: health.headers["content-type"] },
    {
      status: 200,
      body: "OK",
      type: "text/plain; charset=utf-8",
    },
  );
  const missing = await httpRequest(daemon.httpPort, "/nope");
  t.strictSame({ status: missing.status, body: missing.body }, { status: 404, body: "404 page not found\n" });
  t.equal((await httpRequest(daemon.httpPort, "/json/extra")).status, 404);
});
