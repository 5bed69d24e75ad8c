// The failed-login throttle under a concurrent burst of Basic-auth guesses from one address: HTTP/2
// streams multiplexed on one h2c connection, many HTTP/1.1 connections, and gRPC calls on one channel.
// Each attempt is counted before its credentials are checked, so however many arrive at once, exactly
// AUTH_FAILURES_PER_MINUTE of them are checked (401) and the rest are refused (429) — the correct password,
// sent last, included. Failed and throttled logins are logged with the address and user, never the secret.
import { Agent, request } from "node:http";
import { connect } from "node:http2";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import t, { type Test } from "tap";
import { MigrationService } from "../../../src/gen/ratelimitd/migrations/v1/migrations_pb.js";
import { type DaemonProcess, startDaemon } from "../../helpers/daemon-process.js";
import { httpRequest } from "../../helpers/http-request.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { ADMIN, BASE, basic, migrationsEnv } from "./migrations-harness.js";

const BUDGET = 10;
const guess = (i: number) => `wrong-guess-${String(i).padStart(4, "0")}-xyzzy`;

/** The burst's credentials: wrong guesses, and the administrator's real password last. */
function passwords(count: number): string[] {
  return [...Array.from({ length: count - 1 }, (_, i) => guess(i)), ADMIN.password];
}

async function daemonFor(t: Test): Promise<DaemonProcess> {
  const daemon = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: {} }),
    ...migrationsEnv("sqlite::memory:"),
    AUTH_FAILURES_PER_MINUTE: String(BUDGET),
  });
  t.teardown(() => daemon.stop());
  // The burst must not straddle a minute: a new window would give the address a new budget.
  await stayInsideWindow(60, 10);
  return daemon;
}

/** Tallies statuses: `{ "401": 10, "429": 290 }`. */
function tally(statuses: readonly (number | string)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** The daemon's auth-throttle stats, `name: value` lines from /stats. */
async function authStats(daemon: DaemonProcess): Promise<string[]> {
  const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
  return stats.split("\n").filter((line) => /ratelimitd_auth|ratelimit\.auth\./.test(line));
}

/** Checks the log: one line per failed login, one for the first throttled one, and no secret anywhere. */
async function expectLog(t: Test, daemon: DaemonProcess, sent: readonly string[]): Promise<void> {
  // The daemon writes the lines before it answers, but its stderr pipe may be read after the answers.
  const expected = BUDGET + 1;
  const deadline = Date.now() + 10_000;
  const logged = () => daemon.logs().match(/msg="authentication (failed|throttled)/g)?.length ?? 0;
  while (logged() < expected && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  const logs = daemon.logs();
  const failed = logs.match(/^.*msg="authentication failed".*$/gm) ?? [];
  t.equal(failed.length, BUDGET, "every failed login is logged");
  t.strictSame(
    new Set(failed.map((line) => line.replace(/^time="[^"]+" /, ""))),
    new Set(['level=warning msg="authentication failed" address=127.0.0.1 user=admin@example.com']),
  );
  const throttled = logs.match(/^.*msg="authentication throttled.*$/gm) ?? [];
  t.equal(throttled.length, 1, "the first throttled login of the window is logged, not every one");
  t.match(
    throttled[0] ?? "",
    /^time="[^"]+" level=warning msg="authentication throttled: too many failed logins from this address, or too many at once; later throttled logins from it are not logged until the window ends" address=127\.0\.0\.1 retry_after_seconds=\d+ user=admin@example\.com$/,
  );
  const secrets = [...sent, ADMIN.password.replace(/ /g, ""), "abcd"];
  t.strictSame(
    secrets.filter((secret) => logs.includes(secret)),
    [],
    "the log never shows a password",
  );
}

t.test("HTTP/2: one h2c connection, every guess a stream of one burst", async (t) => {
  const daemon = await daemonFor(t);
  const sent = passwords(400);
  const session = connect(`http://127.0.0.1:${daemon.httpPort}`);
  t.teardown(() => session.close());
  const statuses = await Promise.all(
    sent.map(
      (password) =>
        new Promise<number>((resolve, reject) => {
          const stream = session.request({
            ":path": `${BASE}/migrations`,
            authorization: basic(ADMIN.email, password),
          });
          let status = 0;
          stream.on("response", (headers) => (status = Number(headers[":status"])));
          stream.on("error", reject);
          stream.resume();
          stream.on("end", () => resolve(status));
        }),
    ),
  );
  t.strictSame(tally(statuses), { 401: BUDGET, 429: sent.length - BUDGET });
  t.equal(statuses.at(-1), 429, "the correct password, sent after the budget was used, is refused");
  t.strictSame(
    statuses.slice(0, BUDGET),
    Array(BUDGET).fill(401),
    "one connection: the first ones are checked",
  );
  t.strictSame(await authStats(daemon), [
    `ratelimit.service.rate_limit.ratelimitd_auth.remote_address.over_limit: ${sent.length - BUDGET}`,
    `ratelimit.service.rate_limit.ratelimitd_auth.remote_address.total_hits: ${sent.length}`,
  ]);
  await expectLog(t, daemon, sent);
});

t.test("HTTP/1.1: a connection per guess, all sent at once", async (t) => {
  const daemon = await daemonFor(t);
  const sent = passwords(120);
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  t.teardown(() => agent.destroy());
  const statuses = await Promise.all(
    sent.map(
      (password) =>
        new Promise<number>((resolve, reject) => {
          const req = request(
            {
              host: "127.0.0.1",
              port: daemon.httpPort,
              path: `${BASE}/migrations`,
              agent,
              headers: { authorization: basic(ADMIN.email, password) },
            },
            (res) => {
              res.resume();
              res.on("end", () => resolve(res.statusCode ?? 0));
            },
          );
          req.on("error", reject);
          req.end();
        }),
    ),
  );
  t.strictSame(tally(statuses), { 401: BUDGET, 429: sent.length - BUDGET });
  t.equal(statuses.at(-1), 429, "the correct password, sent last, is refused");
  await expectLog(t, daemon, sent);
});

t.test("gRPC: one channel, every guess a concurrent call", async (t) => {
  const daemon = await daemonFor(t);
  const sent = passwords(60);
  const client = createClient(
    MigrationService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${daemon.grpcPort}` }),
  );
  const codes = await Promise.all(
    sent.map((password) =>
      client.listMigrations({}, { headers: { authorization: basic(ADMIN.email, password) } }).then(
        () => "OK",
        (error: ConnectError) => Code[error.code],
      ),
    ),
  );
  t.strictSame(tally(codes), { Unauthenticated: BUDGET, ResourceExhausted: sent.length - BUDGET });
  t.equal(codes.at(-1), "ResourceExhausted", "the correct password, sent last, is refused");
  await expectLog(t, daemon, sent);
});
