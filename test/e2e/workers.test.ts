import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { type DaemonProcess, startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { startUdpListener } from "../helpers/udp-listener.js";
import { stayInsideWindow } from "../helpers/window-guard.js";
import { config, startManagementServer, xdsEnv } from "../helpers/xds-fixtures.js";

// WORKERS=2 (docs/workers.md, extensions §E8) against the built daemon: every worker thread serves the same
// ports; the memory backend's counters are shared, rules reach every worker, stats are summed, the users and
// migrations APIs answer from any worker, a killed worker is replaced, SIGTERM drains them all.

const CONNECTIONS = 32;
const ADMIN = "admin@example.com";
const PASSWORD = "abcd efgh ijkl mnop qrst uvwx";

function rules(limit: number): string {
  return [
    "domain: w",
    "descriptors:",
    `  - key: fixed\n    rate_limit: { unit: hour, requests_per_unit: ${limit} }`,
    `  - key: sliding\n    rate_limit: { unit: hour, requests_per_unit: ${limit}, algorithm: sliding_window }`,
    `  - key: bucket\n    rate_limit: { unit: hour, requests_per_unit: ${limit}, algorithm: token_bucket }`,
    "",
  ].join("\n");
}

/** Replaces the rule file at once (a rename), as a ConfigMap update does. */
function writeRules(root: string, text: string): void {
  const next = join(root, "config", ".next.yaml");
  writeFileSync(next, text);
  renameSync(next, join(root, "config", "w.yaml"));
}

/** `/json` answers over `CONNECTIONS` keep-alive connections, `perConnection` requests on each, all at once. */
async function decideOverConnections(
  port: number,
  key: string,
  value: string,
  perConnection: number,
): Promise<{ codes: string[]; limits: number[] }> {
  const body = JSON.stringify({ domain: "w", descriptors: [{ entries: [{ key, value }] }] });
  const agents = Array.from({ length: CONNECTIONS }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  const answers = await Promise.all(
    agents.flatMap((agent) =>
      Array.from(
        { length: perConnection },
        () =>
          new Promise<{ overallCode: string; statuses: { currentLimit?: { requestsPerUnit: number } }[] }>(
            (resolve, reject) => {
              const req = request(
                { host: "127.0.0.1", port, path: "/json", method: "POST", agent },
                (res) => {
                  let text = "";
                  res.on("data", (chunk: Buffer) => (text += chunk.toString()));
                  res.on("end", () => resolve(JSON.parse(text)));
                },
              );
              req.on("error", reject);
              req.end(body);
            },
          ),
      ),
    ),
  );
  for (const agent of agents) agent.destroy();
  return {
    codes: answers.map((a) => a.overallCode),
    limits: answers.map((a) => a.statuses[0]?.currentLimit?.requestsPerUnit ?? 0),
  };
}

const count = (codes: readonly string[], code: string) => codes.filter((c) => c === code).length;

interface WorkerRow {
  readonly index: number;
  readonly threadId: number | null;
  readonly requests: number;
  readonly replacements: number;
}

async function workers(debugPort: number): Promise<WorkerRow[]> {
  return JSON.parse((await httpRequest(debugPort, "/workers")).body).workers;
}

async function stat(debugPort: number, name: string): Promise<number> {
  const body = (await httpRequest(debugPort, "/stats")).body;
  const match = new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(body);
  return match === null ? Number.NaN : Number(match[1]);
}

/** Polls until `read` gives `expected` (stats reach the main thread within a few hundred ms). */
async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let value = await read();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

/** Resolves once the main thread logged that every worker listens. */
async function allWorkersListening(daemon: DaemonProcess, workersExpected: number): Promise<void> {
  const until = Date.now() + 20_000;
  while (!new RegExp(`${workersExpected} worker threads serve gRPC`).test(daemon.logs())) {
    if (Date.now() > until) throw new Error(`workers did not all start:\n${daemon.logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test("WORKERS=2 on the memory backend", async (t) => {
  const root = mkdtempSync(join(tmpdir(), "rl-workers-"));
  mkdirSync(join(root, "config"));
  writeRules(root, rules(100));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const daemon = await startDaemon({
    WORKERS: "2",
    RUNTIME_ROOT: root,
    DATABASE_URL: `sqlite:${join(root, "users.db")}`,
    ADMIN_EMAIL: ADMIN,
    ADMIN_APP_PASSWORD: PASSWORD,
    LOG_LEVEL: "info",
  });
  t.teardown(() => daemon.stop("SIGKILL"));
  await allWorkersListening(daemon, 2);

  await t.test("exact counts over 32 connections, every algorithm, both workers serving", async (t) => {
    await stayInsideWindow(3600, 20);
    for (const key of ["fixed", "sliding", "bucket"]) {
      // 32 connections × 7 requests = 224 requests against a limit of 100.
      const { codes } = await decideOverConnections(daemon.httpPort, key, "exact", 7);
      t.equal(count(codes, "OK"), 100, `${key}: exactly the limit admitted`);
      t.equal(count(codes, "OVER_LIMIT"), 124, `${key}: every other request refused`);
    }
    const rows = await eventually(
      async () => (await workers(daemon.debugPort)).reduce((sum, row) => sum + row.requests, 0),
      3 * 224,
    );
    t.equal(rows, 3 * 224, "the workers' requests add up to every request made");
    const served = (await workers(daemon.debugPort)).map((row) => row.requests);
    t.ok(
      served.every((n) => n > 0),
      `both workers served (${served.join(", ")})`,
    );
  });

  await t.test("stats are summed over the workers under the reference's names", async (t) => {
    for (const key of ["fixed", "sliding", "bucket"]) {
      const prefix = `ratelimit.service.rate_limit.w.${key}`;
      t.equal(
        await eventually(() => stat(daemon.debugPort, `${prefix}.total_hits`), 224),
        224,
        `${key}: total_hits`,
      );
      t.equal(await stat(daemon.debugPort, `${prefix}.within_limit`), 100, `${key}: within_limit`);
      t.equal(await stat(daemon.debugPort, `${prefix}.over_limit`), 124, `${key}: over_limit`);
    }
    t.equal(
      await stat(daemon.debugPort, "ratelimit.service.config_load_success"),
      1,
      "one load, counted once",
    );
    const metrics = (await httpRequest(daemon.debugPort, "/metrics")).body;
    t.match(metrics, /^ratelimit_service_rate_limit_total_hits\{domain="w",key1="fixed"\} 224$/m);
    const perWorker = [...metrics.matchAll(/^ratelimit_workers_requests\{worker="(\d)"\} (\d+)$/gm)];
    t.same(
      perWorker.map((m) => m[1]),
      ["1", "2"],
      "a series per worker",
    );
    t.equal(
      perWorker.reduce((sum, m) => sum + Number(m[2]), 0),
      3 * 224,
    );
  });

  await t.test("a reload reaches every worker", async (t) => {
    writeRules(root, rules(300));
    await eventually(() => stat(daemon.debugPort, "ratelimit.service.config_load_success"), 2);
    // Give the workers their second to compile the relayed documents (extensions §E8: within a second).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = (await workers(daemon.debugPort)).map((row) => row.requests);
    const { limits } = await decideOverConnections(daemon.httpPort, "fixed", "after-reload", 3);
    t.same(new Set(limits), new Set([300]), "every answer, from whichever worker, has the new limit");
    const after = await eventually(
      async () => (await workers(daemon.debugPort)).reduce((sum, row) => sum + row.requests, 0),
      before.reduce((a, b) => a + b, 0) + CONNECTIONS * 3,
    );
    t.equal(after, before.reduce((a, b) => a + b, 0) + CONNECTIONS * 3);
    const gained = (await workers(daemon.debugPort)).map((row, i) => row.requests - (before[i] ?? 0));
    t.ok(
      gained.every((n) => n > 0),
      `both workers answered after the reload (${gained.join(", ")})`,
    );
  });

  await t.test(
    "users and migrations APIs answer the same from any worker; a migration runs once",
    async (t) => {
      const json = { "content-type": "application/json" };
      const created = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          httpRequest(daemon.httpPort, "/users", {
            method: "PUT",
            headers: json,
            body: JSON.stringify({
              name: `User ${i}`,
              email: `User${i}@Example.com`,
              password: "correct horse",
            }),
          }),
        ),
      );
      t.same(
        created.map((r) => r.status),
        Array(12).fill(200),
      );
      const again = await Promise.all(
        Array.from({ length: 8 }, () =>
          httpRequest(daemon.httpPort, "/users", {
            method: "PUT",
            headers: json,
            body: JSON.stringify({ name: "Again", email: "user0@example.com", password: "x" }),
          }),
        ),
      );
      t.same(
        again.map((r) => [r.status, r.body]),
        Array(8).fill([403, '{"error":"User with that email already exists"}']),
        "the unique e-mail holds whichever worker answers",
      );
      const lists = await Promise.all(
        Array.from({ length: 8 }, () => httpRequest(daemon.httpPort, "/users?limit=100")),
      );
      t.equal(new Set(lists.map((r) => r.body)).size, 1, "every worker lists the same users");
      t.equal(JSON.parse(lists[0]!.body).length, 13, "the administrator and the 12 users");

      const auth = {
        authorization: `Basic ${Buffer.from(`${ADMIN}:${PASSWORD.replaceAll(" ", "")}`).toString("base64")}`,
      };
      const base = "/ratelimitd/migrations/v1";
      const run = await httpRequest(daemon.httpPort, `${base}/migrations/normalize-user-emails/run`, {
        method: "POST",
        headers: { ...auth, ...json },
        body: '{"batch-size":5}',
      });
      t.equal(run.status, 200, run.body);
      t.equal(JSON.parse(run.body).execution_id, 1);
      const executions = await eventually(
        async () => {
          const reply = await httpRequest(
            daemon.httpPort,
            `${base}/migrations/normalize-user-emails/executions`,
            {
              headers: auth,
            },
          );
          return (JSON.parse(reply.body) as { status: string }[]).map((e) => e.status);
        },
        ["completed"],
        15_000,
      );
      t.same(executions, ["completed"], "one execution, completed once");
      const users = JSON.parse((await httpRequest(daemon.httpPort, "/users?limit=100")).body) as {
        email: string;
      }[];
      t.same(
        users
          .filter((u) => u.email.startsWith("user"))
          .map((u) => u.email)
          .sort(),
        Array.from({ length: 12 }, (_, i) => `user${i}@example.com`).sort(),
        "every address lower-cased by the one run",
      );

      // The failed-login throttle (AUTH_FAILURES_PER_MINUTE, 10) counts for the process, whichever worker.
      const wrong = {
        authorization: `Basic ${Buffer.from(`${ADMIN}:wrongwrongwrongwrongwrong`).toString("base64")}`,
      };
      const agents = Array.from({ length: 24 }, () => new Agent({ keepAlive: false }));
      const statuses = await Promise.all(
        agents.map(
          (agent) =>
            new Promise<number>((resolve, reject) => {
              const req = request(
                {
                  host: "127.0.0.1",
                  port: daemon.httpPort,
                  path: `${base}/migrations`,
                  headers: wrong,
                  agent,
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
      t.same(
        [statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length],
        [10, 14],
        "10 failed logins refused as such, then the address is throttled on every worker",
      );
    },
  );

  await t.test("a killed worker is logged and replaced; the other keeps serving", async (t) => {
    const before = await workers(daemon.debugPort);
    const killed = await httpRequest(daemon.debugPort, "/workers?terminate=2", { method: "POST" });
    t.same([killed.status, killed.body], [202, '{"terminated":2}\n']);
    const replaced = await eventually(
      async () =>
        (await workers(daemon.debugPort)).map((row) => [row.index, row.replacements, row.threadId !== null]),
      [
        [1, 0, true],
        [2, 1, true],
      ],
    );
    t.same(replaced, [
      [1, 0, true],
      [2, 1, true],
    ]);
    const after = await workers(daemon.debugPort);
    t.not(after[1]!.threadId, before[1]!.threadId, "a new thread serves as worker 2");
    t.match(
      daemon.logs(),
      /worker 2 ended unexpectedly \(exit code 1\) after \d+ s; starting a new one in 100 ms/,
    );
    await eventually(async () => /worker 2 replaced/.test(daemon.logs()), true);
    t.match(daemon.logs(), /worker 2 replaced \(thread \d+\)/);
    const crossSite = await httpRequest(daemon.debugPort, "/workers?terminate=1", {
      method: "POST",
      headers: { "sec-fetch-site": "cross-site" },
    });
    t.same(
      [crossSite.status, crossSite.body],
      [403, '{"error":"Cross-site request refused."}'],
      "not from another site's page",
    );
    const missing = await httpRequest(daemon.debugPort, "/workers?terminate=3", { method: "POST" });
    t.same(
      [missing.status, missing.body],
      [404, '{"error":"no running worker \\"3\\": want ?terminate=<index>"}\n'],
    );
    // The replacement shares the counters and has the current rules.
    const { codes, limits } = await decideOverConnections(daemon.httpPort, "fixed", "after-replacement", 10);
    t.equal(count(codes, "OK"), 300);
    t.equal(count(codes, "OVER_LIMIT"), 20);
    t.same(new Set(limits), new Set([300]));
  });

  await t.test("SIGTERM drains every worker, then the process exits 0", async (t) => {
    // A request half sent on each of 32 connections (both workers hold some) when the signal arrives is
    // finished after it, and answered.
    const body = JSON.stringify({
      domain: "w",
      descriptors: [{ entries: [{ key: "fixed", value: "drain" }] }],
    });
    const requests = Array.from({ length: CONNECTIONS }, () => {
      let finish!: () => void;
      const reply = new Promise<{ status: number; code: string }>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: daemon.httpPort,
            path: "/json",
            method: "POST",
            headers: { "content-length": String(body.length) },
          },
          (res) => {
            let text = "";
            res.on("data", (chunk: Buffer) => (text += chunk.toString()));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, code: JSON.parse(text).overallCode }));
          },
        );
        req.on("error", reject);
        req.write(body.slice(0, 10));
        finish = () => req.end(body.slice(10));
      });
      return { reply, finish };
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopped = daemon.stop("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const r of requests) r.finish();
    const replies = await Promise.all(requests.map((r) => r.reply));
    t.same(replies, Array(CONNECTIONS).fill({ status: 200, code: "OK" }), "every request in flight answered");
    t.equal(await stopped, 0, "exit code 0");
    t.match(daemon.logs(), /received SIGTERM/);
    t.equal(
      (daemon.logs().match(/ended unexpectedly/g) ?? []).length,
      1,
      "no worker is replaced while stopping (the one line is the kill's)",
    );
  });
});

t.test("WORKERS=2 with xDS: every worker decides on each pushed rule set", async (t) => {
  const { server, port } = await startManagementServer(t);
  const HOUR = 3;
  server.setSnapshot("v1", [config("w", "w", "fixed", "", 40, HOUR)]);
  const daemon = await startDaemon({ WORKERS: "2", ...xdsEnv(port) });
  t.teardown(() => daemon.stop("SIGKILL"));
  await allWorkersListening(daemon, 2);
  await stayInsideWindow(3600, 20);
  const first = await decideOverConnections(daemon.httpPort, "fixed", "xds", 2);
  t.equal(count(first.codes, "OK"), 40, "the pushed limit, exactly, over both workers");
  t.same(new Set(first.limits), new Set([40]));
  server.setSnapshot("v2", [config("w", "w", "fixed", "", 400, HOUR)]);
  await eventually(() => stat(daemon.debugPort, "ratelimit.service.config_load_success"), 2);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = (await workers(daemon.debugPort)).map((row) => row.requests);
  const second = await decideOverConnections(daemon.httpPort, "fixed", "xds", 3);
  t.same(new Set(second.limits), new Set([400]), "every answer has the second rule set's limit");
  t.equal(count(second.codes, "OK"), 96, "the counter carried on: 64 + 96 within 400");
  const gained = await eventually(
    async () => (await workers(daemon.debugPort)).map((row, i) => row.requests - (before[i] ?? 0) > 0),
    [true, true],
  );
  t.same(gained, [true, true], "both workers answered on the new rules");
});

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("WORKERS=2 on Redis: each worker its own connections, exact counts, statsd summed", async (t) => {
    const server = await startRedis(t);
    const statsd = await startUdpListener();
    t.teardown(() => statsd.close());
    const root = mkdtempSync(join(tmpdir(), "rl-workers-redis-"));
    mkdirSync(join(root, "config"));
    writeRules(root, rules(100));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const daemon = await startDaemon({
      WORKERS: "2",
      BACKEND_TYPE: "redis",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: server.url,
      REDIS_POOL_SIZE: "1",
      LOCAL_CACHE_SIZE_IN_BYTES: "1048576",
      RUNTIME_ROOT: root,
      USE_STATSD: "true",
      STATSD_PROTOCOL: "udp",
      STATSD_HOST: "127.0.0.1",
      STATSD_PORT: String(statsd.port),
      STATS_FLUSH_INTERVAL: "300ms",
    });
    t.teardown(() => daemon.stop("SIGKILL"));
    await allWorkersListening(daemon, 2);
    const clients = /^connected_clients:(\d+)/m.exec(await server.cli("INFO", "clients"))?.[1];
    t.equal(Number(clients) - 1, 3, "one connection for each worker and one for the main thread (/explain)");
    await stayInsideWindow(3600, 20);
    for (const key of ["fixed", "sliding", "bucket"]) {
      const { codes } = await decideOverConnections(daemon.httpPort, key, "redis", 7);
      t.equal(count(codes, "OK"), 100, `${key}: exactly the limit admitted`);
      t.equal(count(codes, "OVER_LIMIT"), 124, `${key}: every other request refused`);
    }
    const served = await eventually(
      async () => (await workers(daemon.debugPort)).reduce((sum, row) => sum + row.requests, 0),
      3 * 224,
    );
    t.equal(served, 3 * 224);
    t.equal(
      await eventually(() => stat(daemon.debugPort, "ratelimit.service.rate_limit.w.fixed.over_limit"), 124),
      124,
      "over_limit summed (the local cache's answers included)",
    );
    // The statsd sink sends each worker's counts once, from the main thread, under the reference's names.
    const sent = (name: string) =>
      statsd.lines
        .filter((l) => l.startsWith(`${name}:`) && l.endsWith("|c"))
        .reduce((sum, l) => sum + Number(l.slice(name.length + 1, -2)), 0);
    const totalHits = await statsd.waitFor("224 total_hits sent to statsd", () => {
      const value = sent("ratelimit.service.rate_limit.w.fixed.total_hits");
      return value >= 224 ? value : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    t.equal(sent("ratelimit.service.rate_limit.w.fixed.total_hits"), totalHits);
    t.equal(totalHits, 224, "total_hits sent once for every request");
    t.equal(sent("ratelimit.service.rate_limit.w.sliding.over_limit"), 124);
  });
}

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "WORKERS=2 with BACKEND_FAILURE_MODE=local: the replica, not each worker, allows the limit",
    async (t) => {
      const server = await startRedis(t);
      const root = mkdtempSync(join(tmpdir(), "rl-workers-local-"));
      mkdirSync(join(root, "config"));
      writeRules(root, rules(40));
      t.teardown(() => rmSync(root, { recursive: true, force: true }));
      const daemon = await startDaemon({
        WORKERS: "2",
        BACKEND_TYPE: "redis",
        REDIS_SOCKET_TYPE: "tcp",
        REDIS_URL: server.url,
        REDIS_POOL_SIZE: "1",
        REDIS_TIMEOUT: "300ms",
        BACKEND_FAILURE_MODE: "local",
        BACKEND_BREAKER_FAILURES: "1",
        BACKEND_BREAKER_COOLDOWN: "30s",
        RUNTIME_ROOT: root,
      });
      t.teardown(() => daemon.stop("SIGKILL"));
      await allWorkersListening(daemon, 2);
      await server.kill();
      await stayInsideWindow(3600, 20);
      // 32 connections × 3 = 96 requests while Redis is gone, against a limit of 40 (fraction 1).
      const { codes } = await decideOverConnections(daemon.httpPort, "fixed", "outage", 3);
      t.equal(count(codes, "OK"), 40, "exactly the limit, counted once for the whole replica");
      t.equal(count(codes, "OVER_LIMIT"), 56);
      await eventually(
        async () => (await workers(daemon.debugPort)).reduce((sum, row) => sum + row.requests, 0),
        96,
      );
      const served = (await workers(daemon.debugPort)).map((row) => row.requests);
      t.ok(
        served.every((n) => n > 0),
        `both workers answered (${served.join(", ")})`,
      );
    },
  );
}

t.test(
  "WORKERS=2 on a port another process holds is refused at start, even one bound with reusePort",
  async (t) => {
    const { createServer } = await import("node:net");
    const { runDaemonToExit } = await import("../helpers/daemon-process.js");
    const holder = createServer();
    await new Promise<void>((resolve) =>
      holder.listen({ host: "127.0.0.1", port: 0, reusePort: true }, resolve),
    );
    t.teardown(() => holder.close());
    const port = (holder.address() as { port: number }).port;
    const { code, logs } = await runDaemonToExit({ WORKERS: "2", PORT: String(port) });
    t.equal(code, 1);
    t.match(
      logs,
      new RegExp(
        `failed to start: PORT ${port} is already in use \\(listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}\\): stop the process listening there \\(another ratelimitd\\?\\) or set PORT to a free port`,
      ),
    );
  },
);

t.test("WORKERS=2 with GRPC_UDS is refused at start, saying why", async (t) => {
  const { runDaemonToExit } = await import("../helpers/daemon-process.js");
  const { code, logs } = await runDaemonToExit({ WORKERS: "2", GRPC_UDS: join(tmpdir(), "rl-workers.sock") });
  t.equal(code, 1);
  t.match(
    logs,
    "ratelimitd: invalid settings:\n  WORKERS=2 serves gRPC from 2 threads on one TCP port; a unix socket (GRPC_UDS) cannot be shared: unset GRPC_UDS or set WORKERS=1\n",
  );
});
