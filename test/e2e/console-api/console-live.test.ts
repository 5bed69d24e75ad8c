// The console's live stream (README "Operator console"): `hello` with the history, a `tick` a second with
// the rates and totals of the rules that moved (from the stats the engine keeps anyway), `rules` after a
// reload with the Overview's last load, the page limit, and a daemon that stops with pages still open.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { httpRequest } from "../../helpers/http-request.js";
import { openEventStream, type StreamEvent } from "./event-stream-reader.js";

interface Tick {
  atMs: number;
  hits: number;
  ok: number;
  over: number;
  near: number;
  shadow: number;
  healthy: boolean;
  breaker: string;
  rules: Record<
    string,
    { hits: number; over: number; near: number; totalHits: number; totalOver: number; totalNear: number }
  >;
}

const RULES = `domain: shop
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: tier
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
`;
const rulesDir = t.testdir({ config: { "shop.yaml": RULES } });
const daemon = await startDaemon({ RUNTIME_ROOT: rulesDir });
t.teardown(() => daemon.stop());
const decide = (key: string, value: string) =>
  httpRequest(daemon.httpPort, "/json", {
    method: "POST",
    body: JSON.stringify({ domain: "shop", descriptors: [{ entries: [{ key, value }] }] }),
  });
const isTick = (event: StreamEvent) => event.event === "tick";

t.test("hello, then ticks: a burst's rates and totals, over-limit and shadow counted", async (t) => {
  const stream = await openEventStream(daemon.debugPort);
  t.teardown(() => stream.close());
  t.equal(stream.response.statusCode, 200);
  t.equal(stream.response.headers["content-type"], "text/event-stream; charset=utf-8");
  t.equal(stream.response.headers["cache-control"], "no-store");
  const hello = (await stream.next((e) => e.event === "hello")).data as {
    intervalMs: number;
    history: Tick[];
  };
  t.equal(hello.intervalMs, 1000);
  t.ok(Array.isArray(hello.history), "the history is a list");
  for (const tick of hello.history) t.strictSame(tick.rules, {}, "history ticks carry no per-rule detail");
  const before = (await stream.next(isTick)).data as Tick;
  // Seven for a limit of five: two over the limit; and two shadowed over-limit hits of another rule.
  await Promise.all([...Array(7)].map(() => decide("user", "ann")));
  await Promise.all([...Array(3)].map(() => decide("tier", "gold")));
  const seen: Tick[] = [];
  const last = await stream.next((event) => {
    if (!isTick(event)) return false;
    seen.push(event.data as Tick);
    return (
      seen.some((s) => s.rules["shop.user"]?.totalHits === 7) &&
      seen.some((s) => s.rules["shop.tier"]?.totalHits === 3)
    );
  });
  // Rates are per second over each tick's own interval: rate × interval gives the counts back.
  const sum = (pick: (tick: Tick) => number) =>
    seen.reduce(
      (total, tick, i) => total + (pick(tick) * (tick.atMs - (seen[i - 1] ?? before).atMs)) / 1000,
      0,
    );
  const user = seen.find((s) => s.rules["shop.user"]?.totalHits === 7)!.rules["shop.user"]!;
  t.equal(user.totalHits, 7);
  t.equal(user.totalOver, 2);
  t.equal(user.totalNear, 1);
  t.equal(Math.round(sum((tick) => tick.hits)), 10, "ten hits over the ticks");
  t.equal(Math.round(sum((tick) => tick.over)), 2, "two refused; the two shadowed ones were answered OK");
  t.equal(Math.round(sum((tick) => tick.shadow)), 2);
  t.equal(Math.round(sum((tick) => tick.ok)), 8);
  t.equal((last.data as Tick).healthy, true);
  t.equal((last.data as Tick).breaker, "off");
  const quiet = (await stream.next(isTick)).data as Tick;
  t.strictSame(quiet.rules, {}, "a quiet second: no rule moved");
  t.equal(quiet.hits, 0);
});

t.test(
  "every load attempt is a rules event; the Overview's last load (a failed one keeps the rules)",
  async (t) => {
    const stream = await openEventStream(daemon.debugPort);
    t.teardown(() => stream.close());
    await stream.next((e) => e.event === "hello");
    writeFileSync(
      join(rulesDir, "config", "shop.yaml"),
      `${RULES}  - key: added\n    rate_limit: { unit: day, requests_per_unit: 9 }\n`,
    );
    const event = await stream.next((e) => e.event === "rules");
    t.match(event.data, { loadedAtMs: Number, ok: true });
    let overview = JSON.parse((await httpRequest(daemon.debugPort, "/console/api/overview")).body);
    t.equal(overview.rules.rules, 3);
    t.equal(overview.rules.loadSuccesses, 2);
    writeFileSync(
      join(rulesDir, "config", "shop.yaml"),
      "domain: shop\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n",
    );
    const failed = await stream.next((e) => e.event === "rules");
    t.match(failed.data, { loadedAtMs: Number, ok: false }, "a failed load is an event too");
    overview = JSON.parse((await httpRequest(daemon.debugPort, "/console/api/overview")).body);
    t.equal(overview.rules.loadErrors, 1);
    t.equal(overview.rules.lastLoad.ok, false);
    t.match(overview.rules.lastLoad.error, /shop\.yaml: invalid rate limit unit 'fortnight'/);
    t.equal(overview.rules.rules, 3, "the rules in force stay");
    t.equal(overview.health.healthy, true);
  },
);

t.test("at most 32 live pages; the 33rd is told to come back", async (t) => {
  const streams = await Promise.all([...Array(32)].map(() => openEventStream(daemon.debugPort)));
  t.teardown(() => {
    for (const stream of streams) stream.close();
  });
  // The streams of the tests above are closed: wait until the daemon has seen them go and all 32 are in.
  const deadline32 = Date.now() + 5_000;
  while (streams.some((s) => s.response.statusCode !== 200) && Date.now() < deadline32) {
    const at = streams.findIndex((s) => s.response.statusCode !== 200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    streams[at] = await openEventStream(daemon.debugPort);
  }
  t.strictSame(
    streams.map((s) => s.response.statusCode),
    Array(32).fill(200),
  );
  let refused = await httpRequest(daemon.debugPort, "/console/api/events");
  t.equal(refused.status, 503);
  t.equal(refused.headers["retry-after"], "5");
  t.equal(refused.body, '{"error":"Too many live pages (at most 32); try again later."}');
  streams.pop()?.close();
  const deadline = Date.now() + 5_000;
  let again = await openEventStream(daemon.debugPort);
  while (again.response.statusCode === 503 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    again = await openEventStream(daemon.debugPort);
  }
  t.equal(again.response.statusCode, 200, "a page that leaves frees its place");
  streams.push(again);
  refused = await httpRequest(daemon.debugPort, "/console/api/events");
  t.equal(refused.status, 503);
});

t.test("SIGTERM with live pages open: the streams end and the daemon exits at once", async (t) => {
  const other = await startDaemon({ RUNTIME_ROOT: rulesDir, SHUTDOWN_GRACE_PERIOD: "30s" });
  const stream = await openEventStream(other.debugPort);
  await stream.next((e) => e.event === "hello");
  const started = Date.now();
  const code = await other.stop("SIGTERM");
  await stream.ended;
  t.equal(code, 0);
  t.ok(Date.now() - started < 5_000, `stopped in ${Date.now() - started} ms, not after the 30 s grace`);
});
