// The debug port (docs/endpoints.md and "Compatibility notes"): listing, /rlconfig, /stats, Node profiles;
// heap snapshots only with DEBUG_HEAP_SNAPSHOT_ENABLED, one at a time (docs/endpoints.md).
import { type IncomingMessage, request } from "node:http";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";

const RULES = `domain: dbg
descriptors:
  - key: a
    value: "1"
    shadow_mode: true
    rate_limit: { unit: second, requests_per_unit: 5 }
    descriptors:
      - key: b
        rate_limit: { unlimited: true }
  - key: c
    quota_mode: true
    rate_limit: { unit: day, requests_per_unit: 15 }
`;
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const daemon = await startDaemon({ RUNTIME_ROOT: dir });
t.teardown(() => daemon.stop());
const get = (path: string) => httpRequest(daemon.debugPort, path);

const LISTING =
  "/debug/pprof/: root of various pprof endpoints. hit for help.\n" +
  "/debug/pprof/heap: heap snapshot endpoint (off: snapshots hold secrets; DEBUG_HEAP_SNAPSHOT_ENABLED=true)\n" +
  "/debug/pprof/profile: CPU profiling endpoint (?seconds=N, default 30; a .cpuprofile for Chrome DevTools)\n" +
  "/explain: POST a /json request body: the decision it would get and why, counting nothing\n" +
  "/metrics: Prometheus metrics (text format)\n" +
  "/rlconfig: print out the currently loaded configuration for debugging\n" +
  "/stats: print out stats\n";

t.test("/ and unknown paths list the endpoints", async (t) => {
  t.equal((await get("/")).body, LISTING);
  t.equal((await get("/whatever")).body, LISTING);
});

t.test("/rlconfig in the reference's dump format", async (t) => {
  t.equal(
    (await get("/rlconfig")).body,
    "dbg.a_1: unit=SECOND requests_per_unit=5, shadow_mode: true, quota_mode: false\n" +
      "dbg.a_1.b: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n" +
      "dbg.c: unit=DAY requests_per_unit=15, shadow_mode: false, quota_mode: true\n",
  );
});

t.test("/stats shows cumulative counters by the reference's names", async (t) => {
  const body = JSON.stringify({ domain: "dbg", descriptors: [{ entries: [{ key: "c", value: "x" }] }] });
  await httpRequest(daemon.httpPort, "/json", { method: "POST", body });
  await httpRequest(daemon.httpPort, "/json", { method: "POST", body });
  const lines = (await get("/stats")).body.split("\n");
  t.ok(lines.includes("ratelimit.service.rate_limit.dbg.c.total_hits: 2"), "total_hits");
  t.ok(lines.includes("ratelimit.service.rate_limit.dbg.c.within_limit: 2"), "within_limit");
  t.ok(lines.includes("ratelimit.service.config_load_success: 1"), "config_load_success");
  const sorted = lines.filter((l) => l !== "");
  t.strictSame(sorted, [...sorted].sort(), "sorted");
});

t.test("/debug/pprof/ lists the Node profiles; the CPU profile works", async (t) => {
  t.equal(
    (await get("/debug/pprof/")).body,
    "/debug/pprof/heap: heap snapshot endpoint (off: snapshots hold secrets; DEBUG_HEAP_SNAPSHOT_ENABLED=true)\n" +
      "/debug/pprof/profile: CPU profiling endpoint (?seconds=N, default 30; a .cpuprofile for Chrome DevTools)\n",
  );
  const profile = await get("/debug/pprof/profile?seconds=0.2");
  t.equal(profile.status, 200);
  t.ok(Array.isArray(JSON.parse(profile.body).nodes), "a V8 CPU profile");
  t.equal((await get("/debug/pprof/profile?seconds=abc")).status, 400);
});

t.test("heap snapshots are off by default: they hold secrets", async (t) => {
  const heap = await get("/debug/pprof/heap");
  t.strictSame(
    [heap.status, heap.body],
    [
      403,
      "heap snapshots are off: they hold secrets (passwords, credentials of recent requests) and stall " +
        "every request while taken; set DEBUG_HEAP_SNAPSHOT_ENABLED=true to serve them\n",
    ],
  );
});

t.test("DEBUG_HEAP_SNAPSHOT_ENABLED=true: snapshots, one at a time", async (t) => {
  const password = "debug-port-test-admin-password";
  const enabled = await startDaemon({
    RUNTIME_ROOT: dir,
    DEBUG_HEAP_SNAPSHOT_ENABLED: "true",
    ADMIN_EMAIL: "admin@example.com",
    ADMIN_APP_PASSWORD: password,
  });
  t.teardown(() => enabled.stop());
  t.match(
    (await httpRequest(enabled.debugPort, "/debug/pprof/")).body,
    "/debug/pprof/heap: heap snapshot endpoint (a .heapsnapshot for Chrome DevTools; holds secrets, one at a time)\n",
  );
  // A first snapshot whose reader does not read: it cannot finish while another is asked for.
  const first = await new Promise<IncomingMessage>((resolve) =>
    request({ host: "127.0.0.1", port: enabled.debugPort, path: "/debug/pprof/heap" }, resolve).end(),
  );
  t.equal(first.statusCode, 200);
  const second = await httpRequest(enabled.debugPort, "/debug/pprof/heap");
  t.strictSame([second.status, second.body], [409, "a heap snapshot is already being taken\n"]);
  // Its reader goes away mid-snapshot: that frees the slot.
  await new Promise((resolve) => {
    first.socket.once("close", resolve);
    first.socket.destroy();
  });
  // The daemon may accept the next connection before it reads the old one's close: ask until it answers
  // something other than 409, for at most 10 s.
  let after = await httpRequest(enabled.debugPort, "/debug/pprof/heap");
  for (const deadline = Date.now() + 10_000; after.status === 409 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    after = await httpRequest(enabled.debugPort, "/debug/pprof/heap");
  }
  t.equal(after.status, 200, "the next snapshot is served");
  t.match(after.body.slice(0, 40), /^\{"snapshot":/);
  t.ok(after.body.includes(password), "a snapshot holds the secrets in memory, as documented");
});
