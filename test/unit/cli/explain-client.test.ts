// ratelimit-client -explain (docs/cli.md "ratelimit-client"): the body it POSTs to /explain, and its one-line errors.
// A real HTTP server on a loopback port stands in for the daemon's debug port.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import t, { type Test } from "tap";
import { isDebugAddress, runExplain } from "../../../src/cli/explain-client.js";
import { freePort } from "../../helpers/free-port.js";

type Handler = (body: string, res: ServerResponse, req: IncomingMessage) => void;

async function serve(t: Test, handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk));
    req.on("end", () => handler(body, res, req));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function explain(debugAddress: string, json = false, timeoutMs = 5000) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runExplain(
    {
      debugAddress,
      domain: "api",
      descriptors: [
        [["path", "/upload"]],
        [
          ["a", "1"],
          ["b", "2"],
        ],
      ],
      hitsAddend: 3,
      timeoutMs,
      json,
    },
    (text) => out.push(text),
    (text) => err.push(text),
  );
  return { code, out, err };
}

const ANSWER = {
  domain: "api",
  overallCode: "OK",
  rules: { source: "file", loadedAt: "2026-11-26T14:00:00.000Z" },
  store: "memory",
  descriptors: [],
};

t.test("POSTs the /json body to /explain and prints the tree, or with -json the answer", async (t) => {
  const seen: { method?: string; url?: string; type?: string; body: string }[] = [];
  const address = await serve(t, (body, res, req) => {
    seen.push({ method: req.method, url: req.url, type: req.headers["content-type"], body });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(ANSWER));
  });
  t.strictSame(await explain(address), {
    code: 0,
    out: ['domain "api": OK (rules: file, loaded 2026-11-26T14:00:00.000Z; store: memory)'],
    err: [],
  });
  t.strictSame(await explain(address, true), { code: 0, out: [JSON.stringify(ANSWER, null, 2)], err: [] });
  const body =
    '{"domain":"api","descriptors":[{"entries":[{"key":"path","value":"/upload"}]},' +
    '{"entries":[{"key":"a","value":"1"},{"key":"b","value":"2"}]}],"hitsAddend":3}';
  t.strictSame(seen, [
    { method: "POST", url: "/explain", type: "application/json", body },
    { method: "POST", url: "/explain", type: "application/json", body },
  ]);
});

t.test("a refused request prints the daemon's {error} on one line and exits 1", async (t) => {
  const address = await serve(t, (_body, res) =>
    res
      .writeHead(400, { "content-type": "application/json" })
      .end('{"error":"rate limit domain must not be empty"}'),
  );
  t.strictSame(await explain(address), {
    code: 1,
    out: [],
    err: [`explain error: POST http://${address}/explain: HTTP 400: rate limit domain must not be empty`],
  });
});

t.test("a body that is not {error} is shown on one line; a 200 that is not JSON is an error", async (t) => {
  const address = await serve(t, (_body, res, req) => {
    if (req.headers["x-never"] !== undefined) return;
    res.writeHead(404).end("Not Found\n\nno such route\n");
  });
  t.strictSame(await explain(address), {
    code: 1,
    out: [],
    err: [`explain error: POST http://${address}/explain: HTTP 404: Not Found no such route`],
  });
  const html = await serve(t, (_body, res) => res.writeHead(200).end("<html>debug</html>"));
  t.strictSame(await explain(html, true), {
    code: 1,
    out: [],
    err: [`explain error: POST http://${html}/explain: the answer is not a JSON object: <html>debug</html>`],
  });
  const empty = await serve(t, (_body, res) => res.writeHead(500).end());
  t.strictSame((await explain(empty)).err, [
    `explain error: POST http://${empty}/explain: HTTP 500: (empty body)`,
  ]);
});

t.test("a closed port and a server that never answers fail with one line", async (t) => {
  const port = await freePort();
  t.strictSame(await explain(`127.0.0.1:${port}`), {
    code: 1,
    out: [],
    err: [`explain error: POST http://127.0.0.1:${port}/explain: connect ECONNREFUSED 127.0.0.1:${port}`],
  });
  const silent = await serve(t, () => {});
  t.strictSame(await explain(silent, false, 200), {
    code: 1,
    out: [],
    err: [`explain error: POST http://${silent}/explain: no answer within 200 ms`],
  });
});

t.test("-debug_addr takes host:port, IPv6 in brackets", async (t) => {
  for (const good of ["localhost:6070", "127.0.0.1:1", "[::1]:6070", "debug.internal:65535"])
    t.ok(isDebugAddress(good), good);
  for (const bad of [
    "localhost",
    ":6070",
    "::1:6070",
    "h:0",
    "h:65536",
    "http://h:1",
    "a/b:1",
    "u@h:1",
    "h:1/x",
  ])
    t.notOk(isDebugAddress(bad), bad);
});
