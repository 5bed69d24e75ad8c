// The console's cross-site check (src/console/cross-site-guard.ts), case by case.
import type { IncomingMessage } from "node:http";
import t from "tap";
import { isCrossSite } from "../../../src/console/cross-site-guard.js";

const request = (method: string, headers: Record<string, string>) =>
  ({ method, headers }) as unknown as IncomingMessage;
const CONSOLE = { "x-ratelimitd-console": "1", "content-type": "application/json", host: "ops.local:6070" };

t.test("reads are never cross-site requests to refuse", async (t) => {
  t.equal(isCrossSite(request("GET", {})), false);
  t.equal(isCrossSite(request("HEAD", { origin: "http://evil.example" })), false);
});

t.test("a change from the console's own page passes", async (t) => {
  t.equal(isCrossSite(request("POST", CONSOLE)), false);
  t.equal(isCrossSite(request("PUT", { ...CONSOLE, origin: "http://ops.local:6070" })), false);
  t.equal(isCrossSite(request("PUT", { ...CONSOLE, origin: "https://ops.local:6070" })), false);
  t.equal(isCrossSite(request("DELETE", { ...CONSOLE, "sec-fetch-site": "same-origin" })), false);
  t.equal(
    isCrossSite(request("DELETE", { ...CONSOLE, "content-type": "application/json; charset=utf-8" })),
    false,
  );
});

t.test("everything else that changes state is refused", async (t) => {
  const refused: [string, Record<string, string>][] = [
    ["no header", { ...CONSOLE, "x-ratelimitd-console": "" }],
    ["a form", { ...CONSOLE, "content-type": "multipart/form-data; boundary=x" }],
    ["json-like", { ...CONSOLE, "content-type": "application/jsonp" }],
    ["no content type", { "x-ratelimitd-console": "1", host: "ops.local:6070" }],
    ["another origin", { ...CONSOLE, origin: "http://evil.example" }],
    ["the null origin", { ...CONSOLE, origin: "null" }],
    ["another port", { ...CONSOLE, origin: "http://ops.local:8080" }],
    ["cross-site", { ...CONSOLE, "sec-fetch-site": "cross-site" }],
    [
      "cross-site, whatever Origin says",
      { ...CONSOLE, origin: "http://ops.local:6070", "sec-fetch-site": "cross-site" },
    ],
    ["same-site", { ...CONSOLE, "sec-fetch-site": "same-site" }],
  ];
  for (const [why, headers] of refused) t.equal(isCrossSite(request("POST", headers)), true, why);
  const { host: _host, ...noHost } = CONSOLE;
  t.equal(
    isCrossSite(request("POST", { ...noHost, origin: "http://ops.local:6070" })),
    true,
    "an origin and no host",
  );
});
