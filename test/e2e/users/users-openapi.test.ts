// The OpenAPI document describes exactly the routes served; USERS_BASE_PATH moves both; HTTP/2 (h2c)
// reaches the same routes as HTTP/1.1.
import { connect } from "node:http2";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { call } from "./users-api-cases.js";

type Operation = { responses: Record<string, unknown> };
type Document = { openapi: string; paths: Record<string, Record<string, Operation | unknown>> };
const METHODS = ["get", "put", "post", "patch", "delete", "head", "options", "trace"];

const dir = t.testdir({ config: {} });

for (const base of ["", "/api/v1"]) {
  t.test(`USERS_BASE_PATH=${JSON.stringify(base)}`, async (t) => {
    const daemon = await startDaemon({ RUNTIME_ROOT: dir, USERS_BASE_PATH: base });
    t.teardown(() => daemon.stop());
    const served = await call(daemon.httpPort, "GET", `${base}/users/openapi.json`);
    t.equal(served.status, 200);
    t.equal(served.headers["content-type"], "application/json");
    const doc = served.json as Document;
    t.equal(doc.openapi, "3.1.0");
    t.same(Object.keys(doc.paths), [`${base}/users`, `${base}/users/{user_id}`]);
    // A user for the {user_id} routes; the create itself exercises PUT.
    const samples: Record<string, unknown> = {
      put: { name: "Doc", email: "doc@example.com", password: "pw" },
      patch: { name: "Doc 2" },
    };
    for (const [template, item] of Object.entries(doc.paths)) {
      const documented = METHODS.filter((m) => m in item);
      const path = template.replace("{user_id}", "1");
      // GET before DELETE, so the user still exists when read.
      for (const method of ["put", "get", "patch", "delete"].filter((m) => documented.includes(m))) {
        const reply = await call(daemon.httpPort, method.toUpperCase(), path, samples[method]);
        const responses = Object.keys((item[method] as Operation).responses);
        t.ok(responses.includes(String(reply.status)), `${method} ${path}: ${reply.status} is documented`);
        t.equal(reply.status, 200, `${method} ${path} is served`);
      }
      for (const method of METHODS.filter((m) => !documented.includes(m) && m !== "head")) {
        const reply = await call(daemon.httpPort, method.toUpperCase(), path);
        t.equal(reply.status, 405, `${method} ${path} is not served`);
        t.same(
          String(reply.headers.allow)
            .split(", ")
            .map((m) => m.toLowerCase())
            .sort(),
          [...documented].sort(),
          `Allow of ${path} lists the documented methods`,
        );
      }
    }
    if (base !== "") {
      const outside = await call(daemon.httpPort, "GET", "/users");
      t.equal(outside.status, 404);
      t.equal(outside.body, "404 page not found\n");
    }
  });
}

t.test("the users routes over cleartext HTTP/2", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: dir });
  t.teardown(() => daemon.stop());
  const session = connect(`http://127.0.0.1:${daemon.httpPort}`);
  t.teardown(() => session.close());
  const exchange = (headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const stream = session.request(headers);
      let status = 0;
      let text = "";
      stream.on("response", (h) => (status = Number(h[":status"])));
      stream.on("data", (chunk) => (text += chunk));
      stream.on("end", () => resolve({ status, body: text }));
      stream.on("error", reject);
      stream.end(body);
    });
  const created = await exchange(
    { ":method": "PUT", ":path": "/users", "content-type": "application/json" },
    JSON.stringify({ name: "H2", email: "h2@example.com", password: "pw" }),
  );
  t.same(created, { status: 200, body: '{"id":1,"name":"H2","email":"h2@example.com"}' });
  t.same(await exchange({ ":method": "GET", ":path": "/users/1" }), {
    status: 200,
    body: '{"id":1,"name":"H2","email":"h2@example.com"}',
  });
  t.same(await exchange({ ":method": "GET", ":path": "/users/abc" }), {
    status: 404,
    body: '{"error":"User with that id does not exist"}',
  });
  const tooLarge = await exchange(
    { ":method": "PUT", ":path": "/users", "content-type": "application/json" },
    JSON.stringify({ name: "n", email: "big@example.com", password: "p".repeat(70_000) }),
  );
  t.same(tooLarge, { status: 413, body: '{"error":"Request entity too large"}' });
  t.same(await exchange({ ":method": "GET", ":path": "/healthcheck" }), { status: 200, body: "OK" });
});
