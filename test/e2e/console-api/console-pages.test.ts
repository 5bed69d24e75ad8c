// The operator console's pages, bundle and read-only API on the debug port (README "Operator console"):
// the headers every answer carries, the HTML shell and the hashed bundle files, `/` for browsers and for
// other clients, the Overview and Rules JSON (rule files and xDS), and CONSOLE_ENABLED=false. The pages in
// a real browser: test/e2e/console/.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { httpRequest } from "../../helpers/http-request.js";
import { config, eventually, startManagementServer, xdsEnv } from "../../helpers/xds-fixtures.js";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const RULES = `domain: shop
descriptors:
  - key: user
    rate_limit: { unit: minute, requests_per_unit: 5 }
    descriptors:
      - key: path
        value: "/cart*"
        rate_limit: { unit: hour, requests_per_unit: 50, unit_multiplier: 2, algorithm: sliding_window }
  - key: tier
    value: free
    shadow_mode: true
    rate_limits:
      - { name: burst, unit: second, requests_per_unit: 3, algorithm: token_bucket, burst: 6 }
      - { name: daily, unit: day, requests_per_unit: 1000 }
  - key: healthz
    rate_limit: { unlimited: true }
`;
const manifest = JSON.parse(
  readFileSync(new URL("../../../dist/console-ui/manifest.json", import.meta.url), "utf8"),
) as { js: string; css: string };

const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "shop.yaml": RULES } }) });
t.teardown(() => daemon.stop());
const debug = daemon.debugPort;
const json = async (path: string) =>
  JSON.parse((await httpRequest(debug, path)).body) as Record<string, unknown>;

t.test("every page is the same HTML shell, with the console's headers", async (t) => {
  for (const path of [
    "/console",
    "/console/rules",
    "/console/explain",
    "/console/users",
    "/console/migrations",
  ]) {
    const reply = await httpRequest(debug, path);
    t.equal(reply.status, 200, path);
    t.equal(reply.headers["content-type"], "text/html; charset=utf-8", path);
    t.equal(reply.headers["content-security-policy"], CSP, path);
    t.equal(reply.headers["x-content-type-options"], "nosniff", path);
    t.equal(reply.headers["x-frame-options"], "DENY", path);
    t.equal(reply.headers["referrer-policy"], "no-referrer", path);
    t.equal(reply.headers["cross-origin-opener-policy"], "same-origin", path);
    t.equal(reply.headers["cache-control"], "no-store", path);
    t.match(reply.body, `<script type="module" src="/console/assets/${manifest.js}"></script>`, path);
    t.match(reply.body, `<link rel="stylesheet" href="/console/assets/${manifest.css}">`, path);
    t.notMatch(reply.body, /<script>|<style|style=/, `${path}: nothing inline`);
  }
  const post = await httpRequest(debug, "/console", { method: "POST", body: "{}" });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, "GET, HEAD");
  const unknown = await httpRequest(debug, "/console/nothing-here");
  t.equal(unknown.status, 404);
  t.equal(unknown.body, '{"error":"Not found"}');
});

t.test("the bundle's files: exact bytes, gzip when asked, cached for good, nothing else", async (t) => {
  for (const [name, type] of [
    [manifest.js, "text/javascript; charset=utf-8"],
    [manifest.css, "text/css; charset=utf-8"],
  ] as const) {
    const onDisk = readFileSync(new URL(`../../../dist/console-ui/${name}`, import.meta.url));
    const plain = await httpRequest(debug, `/console/assets/${name}`);
    t.equal(plain.status, 200, name);
    t.equal(plain.headers["content-type"], type, name);
    t.equal(plain.headers["cache-control"], "public, max-age=31536000, immutable", name);
    t.equal(plain.headers["content-security-policy"], CSP, name);
    t.equal(plain.body, onDisk.toString("utf8"), name);
    const zipped = await gzipFetch(debug, `/console/assets/${name}`);
    t.equal(zipped.encoding, "gzip", name);
    t.same(gunzipSync(zipped.body), onDisk, name);
  }
  for (const path of [
    "/console/assets/manifest.json",
    "/console/assets/../manifest.json",
    "/console/assets/x.js",
  ])
    t.equal((await httpRequest(debug, path)).status, 404, path);
});

t.test("/ sends browsers to the console; other clients keep the reference's listing", async (t) => {
  const browser = await httpRequest(debug, "/", { headers: { accept: "text/html,application/xhtml+xml" } });
  t.equal(browser.status, 302);
  t.equal(browser.headers.location, "/console");
  const curl = await httpRequest(debug, "/", { headers: { accept: "*/*" } });
  const listing = await httpRequest(debug, "/no-such-page");
  t.equal(curl.status, 200);
  t.equal(curl.headers["content-type"], "text/plain; charset=utf-8");
  t.equal(curl.body, listing.body);
  t.match(curl.body, /^\/debug\/pprof\/: /);
});

t.test("the Overview: health, store, rule source and version, last load, database, sinks", async (t) => {
  const overview = await json("/console/api/overview");
  const rules = overview.rules as Record<string, unknown>;
  const files = rules.files as { name: string; sha256: string }[];
  t.equal(
    overview.version,
    JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")).version,
  );
  t.strictSame(overview.health, { healthy: true, components: { backend: true, sigterm: true } });
  t.strictSame(overview.store, { type: "memory", failureMode: "error", breaker: "off", pending: null });
  t.equal(rules.source, "file");
  t.match(rules.location, /\/config$/);
  t.strictSame(
    files.map((f) => f.name),
    ["shop.yaml"],
  );
  t.match(files[0]?.sha256, /^[0-9a-f]{64}$/);
  t.match(rules.version, /^[0-9a-f]{12}$/);
  t.equal(rules.domains, 1);
  t.equal(rules.rules, 4);
  t.equal((rules.lastLoad as Record<string, unknown>).ok, true);
  t.equal((rules.lastLoad as Record<string, unknown>).error, null);
  t.equal(rules.loadSuccesses, 1);
  t.equal(rules.loadErrors, 0);
  t.strictSame(overview.management, { database: "sqlite", ready: true });
  t.strictSame(overview.sinks, { statsd: false, dogstatsd: false, prometheus: false, tracing: false });
  const post = await httpRequest(debug, "/console/api/overview", { method: "POST", body: "{}" });
  t.equal(post.status, 403, "a POST without the console's header is refused before anything else");
});

t.test("the Rules JSON: the tree, limits, algorithms, flags and totals", async (t) => {
  for (let i = 0; i < 7; i++)
    await httpRequest(daemon.httpPort, "/json", {
      method: "POST",
      body: JSON.stringify({ domain: "shop", descriptors: [{ entries: [{ key: "user", value: "ann" }] }] }),
    });
  const tree = await json("/console/api/rules");
  const counts = (hits: number, over: number, near: number, within: number) => ({
    hits,
    over,
    near,
    overWithLocalCache: 0,
    within,
    shadow: 0,
  });
  const limit = (fields: Record<string, unknown>) => ({
    name: null,
    unitMultiplier: 1,
    algorithm: "fixed_window",
    burst: null,
    reservation: null,
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    replaces: [],
    stacked: [],
    ...fields,
  });
  const node = (fields: Record<string, unknown>) => ({
    value: "",
    source: "shop.yaml",
    wildcard: false,
    shareThreshold: false,
    valueToMetric: false,
    children: [],
    ...fields,
  });
  t.strictSame(tree.domains, [
    {
      domain: "shop",
      rules: [
        node({
          key: "user",
          fullKey: "shop.user",
          limit: limit({ requestsPerUnit: 5, unit: "MINUTE" }),
          totals: counts(7, 2, 1, 5),
          children: [
            node({
              key: "path",
              value: "/cart*",
              fullKey: "shop.user.path_/cart*",
              wildcard: true,
              limit: limit({
                requestsPerUnit: 50,
                unit: "HOUR",
                unitMultiplier: 2,
                algorithm: "sliding_window",
              }),
              totals: counts(0, 0, 0, 0),
            }),
          ],
        }),
        node({
          key: "tier",
          value: "free",
          fullKey: "shop.tier_free",
          limit: limit({
            name: "burst",
            requestsPerUnit: 3,
            unit: "SECOND",
            algorithm: "token_bucket",
            burst: 6,
            shadowMode: true,
            stacked: [limit({ name: "daily", requestsPerUnit: 1000, unit: "DAY", shadowMode: true })],
          }),
          totals: counts(0, 0, 0, 0),
        }),
        node({
          key: "healthz",
          fullKey: "shop.healthz",
          limit: limit({ requestsPerUnit: 0, unit: null, unlimited: true }),
          totals: counts(0, 0, 0, 0),
        }),
      ],
    },
  ]);
});

t.test(
  "the Rules JSON: filtered by ?q= (with ancestors and children), bounded at 2000 descriptors",
  async (t) => {
    const filtered = await json("/console/api/rules?q=CART");
    t.equal(filtered.total, 4);
    t.equal(filtered.shown, 2);
    t.equal(filtered.truncated, false);
    const rules = (filtered.domains as { rules: { fullKey: string; children: { fullKey: string }[] }[] }[])[0]
      ?.rules;
    t.strictSame(
      rules?.map((r) => [r.fullKey, r.children.map((c) => c.fullKey)]),
      [["shop.user", ["shop.user.path_/cart*"]]],
    );
    const parent = await json("/console/api/rules?q=shop.user");
    t.equal(parent.shown, 2, "a match brings its children");
    const none = await json("/console/api/rules?q=nothing-like-this");
    t.strictSame(none.domains, []);
    t.equal(none.shown, 0);
    const many = ["domain: big", "descriptors:"];
    for (let i = 0; i < 2500; i++)
      many.push(`  - { key: k, value: v${i}, rate_limit: { unit: second, requests_per_unit: 1 } }`);
    const big = await startDaemon({
      RUNTIME_ROOT: t.testdir({ config: { "big.yaml": `${many.join("\n")}\n` } }),
    });
    t.teardown(() => big.stop());
    const all = JSON.parse((await httpRequest(big.debugPort, "/console/api/rules")).body);
    t.equal(all.total, 2500);
    t.equal(all.shown, 2000);
    t.equal(all.truncated, true);
    t.equal(all.domains[0].rules.length, 2000);
    const one = JSON.parse((await httpRequest(big.debugPort, "/console/api/rules?q=k_v2499")).body);
    t.equal(one.truncated, false);
    t.strictSame(
      one.domains[0].rules.map((r: { fullKey: string }) => r.fullKey),
      ["big.k_v2499"],
    );
  },
);

t.test("rules pushed over xDS: the Overview names the server and the snapshot's version", async (t) => {
  const { server, port } = await startManagementServer(t);
  server.setSnapshot("v7", [config("shop-rules", "shop", "user", "", 100, 3)]);
  const pushed = await startDaemon(xdsEnv(port));
  t.teardown(() => pushed.stop());
  let overview: { rules: Record<string, unknown> } = { rules: {} };
  await eventually("the snapshot applied", async () => {
    overview = JSON.parse((await httpRequest(pushed.debugPort, "/console/api/overview")).body);
    return overview.rules.version === "v7";
  });
  t.match(overview.rules, {
    source: "xds",
    location: `127.0.0.1:${port}`,
    version: "v7",
    files: [],
    domains: 1,
    rules: 1,
    lastLoad: { ok: true, error: null },
  });
  const tree = JSON.parse((await httpRequest(pushed.debugPort, "/console/api/rules")).body);
  t.equal(tree.domains[0].rules[0].source, "shop-rules", "each rule names the xDS resource it came in");
});

t.test("CONSOLE_ENABLED=false: no console, / is the listing for everyone", async (t) => {
  const off = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "shop.yaml": RULES } }),
    CONSOLE_ENABLED: "false",
  });
  t.teardown(() => off.stop());
  const listing = (await httpRequest(off.debugPort, "/no-such-page")).body;
  for (const path of ["/console", "/console/api/overview", "/console/api/events"]) {
    const reply = await httpRequest(off.debugPort, path);
    t.equal(reply.status, 200, path);
    t.equal(reply.body, listing, `${path} is the reference's listing`);
    t.equal(reply.headers["content-security-policy"], undefined, path);
  }
  const browser = await httpRequest(off.debugPort, "/", { headers: { accept: "text/html" } });
  t.equal(browser.status, 200);
  t.equal(browser.body, listing);
});

/** GET with `Accept-Encoding: gzip`, the raw bytes and their encoding. */
async function gzipFetch(port: number, path: string): Promise<{ encoding: unknown; body: Buffer }> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, headers: { "accept-encoding": "gzip, br" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}
