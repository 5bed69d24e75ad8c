// Self-test of the Redis test helpers: every helper against real redis-server processes, so the backend
// suites built on them can trust what they start (plain, auth, ACL, unix socket, TLS, sentinel, cluster)
// and what the round-trip proxy counts.

import { readFileSync, statSync } from "node:fs";
import { connect as connectTcp, createServer, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import t from "tap";
import { freePort } from "../helpers/free-port.js";
import { startCluster } from "../helpers/redis-cluster.js";
import { makeTempDir, pollUntil, removeTempDir } from "../helpers/redis-process.js";
import { startSentinelGroup } from "../helpers/redis-sentinel.js";
import { redisCli, requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { startRoundTripProxy } from "../helpers/round-trip-proxy.js";
import { generateCertificates } from "../helpers/tls-certificates.js";

t.test("freePort: distinct loopback ports that can be listened on", async (t) => {
  const ports = [await freePort(), await freePort(), await freePort()];
  t.equal(new Set(ports).size, 3);
  for (const port of ports) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    t.equal((server.address() as { port: number }).port, port);
    await new Promise((resolve) => server.close(resolve));
  }
});

t.test("requireBinaries: passes, fails under CI=true, skips elsewhere", async (t) => {
  const calls: string[] = [];
  const hooks = {
    skip: (name: string) => calls.push(`skip: ${name}`),
    fail: (message: string) => calls.push(`fail: ${message}`),
  };
  t.equal(requireBinaries(hooks, ["redis-server", "redis-cli"]), true);
  t.equal(requireBinaries(hooks, ["no-such-binary-xyz"], { PATH: process.env.PATH, CI: "true" }), false);
  t.equal(requireBinaries(hooks, ["no-such-binary-xyz"], { PATH: process.env.PATH }), false);
  const message =
    "missing binaries on PATH: no-such-binary-xyz (Debian: apt-get install -y no-such-binary-xyz)";
  t.same(calls, [`fail: ${message}; CI=true, so this is a failure`, `skip: SKIPPED: ${message}`]);
});

if (requireBinaries(t, ["redis-server", "redis-cli", "openssl"])) {
  t.test("plain server: PING, SET/GET, restart on the same port, kill", async (t) => {
    const redis = await startRedis(t);
    t.equal(redis.url, `127.0.0.1:${redis.port}`);
    t.equal(await redis.cli("PING"), "PONG");
    t.equal(await redis.cli("SET", "k", "v"), "OK");
    t.equal(await redis.cli("GET", "k"), "v");
    t.equal(await redis.cli("CONFIG", "GET", "save"), "save");
    t.equal(await redis.cli("CONFIG", "GET", "appendonly"), "appendonly\nno");
    await redis.restart();
    t.equal(await redis.cli("GET", "k"), "", "persistence is off: the key is gone after a restart");
    t.equal(await redis.cli("SET", "k", "again"), "OK");
    await redis.kill();
    const refused = await redisCli([...redis.cliArgs, "PING"]);
    t.equal(refused.code, 1);
    t.equal(
      refused.stderr.trim(),
      `Could not connect to Redis at 127.0.0.1:${redis.port}: Connection refused`,
    );
    await t.rejects(redis.cli("PING"), /Connection refused/);
  });

  t.test("graceful stop, then restart", async (t) => {
    const redis = await startRedis(t);
    await redis.stop();
    t.match(redis.log(), /Received SIGTERM scheduling shutdown/);
    t.equal((await redisCli([...redis.cliArgs, "PING"])).code, 1);
    await redis.restart();
    t.equal(await redis.cli("PING"), "PONG");
  });

  t.test("password: required, and cli() uses it", async (t) => {
    const redis = await startRedis(t, { password: "s3cret" });
    t.equal(await redis.cli("SET", "k", "v"), "OK");
    t.equal(await redis.cli("GET", "k"), "v");
    const anonymous = await redisCli(["-p", String(redis.port), "GET", "k"]);
    t.equal(anonymous.stdout.trim(), "NOAUTH Authentication required.");
    const wrong = await redisCli(["-p", String(redis.port), "--no-auth-warning", "-a", "nope", "GET", "k"]);
    t.equal(
      wrong.stderr.trim(),
      "AUTH failed: WRONGPASS invalid username-password pair or user is disabled.",
    );
    await t.rejects(redis.cli("NOSUCHCOMMAND"), /ERR unknown command 'NOSUCHCOMMAND'/);
  });

  t.test("ACL user: cli() authenticates as it; the default user is off", async (t) => {
    const redis = await startRedis(t, { aclUser: { name: "alice", password: "wonder" } });
    t.equal(await redis.cli("ACL", "WHOAMI"), "alice");
    t.equal(await redis.cli("SET", "k", "v"), "OK");
    t.equal(await redis.cli("GET", "k"), "v");
    const anonymous = await redisCli(["-p", String(redis.port), "PING"]);
    t.equal(anonymous.stdout.trim(), "NOAUTH Authentication required.");
    t.match(await redis.cli("ACL", "LIST"), /^user default off /m);
  });

  t.test("ACL user next to a password: both log in", async (t) => {
    const redis = await startRedis(t, { password: "pw", aclUser: { name: "alice", password: "wonder" } });
    t.equal(await redis.cli("ACL", "WHOAMI"), "alice");
    const asDefault = await redisCli([
      "-p",
      String(redis.port),
      "--no-auth-warning",
      "-a",
      "pw",
      "ACL",
      "WHOAMI",
    ]);
    t.equal(asDefault.stdout.trim(), "default");
  });

  t.test("unix socket: mode 700, same data as over TCP", async (t) => {
    const redis = await startRedis(t, { unixSocket: true });
    const socketPath = redis.socketPath!;
    t.equal(socketPath, `${redis.dir}/redis.sock`);
    t.equal(statSync(socketPath).mode & 0o777, 0o700);
    t.equal((await redisCli(["-s", socketPath, "SET", "k", "via-socket"])).stdout.trim(), "OK");
    t.equal(await redis.cli("GET", "k"), "via-socket");
  });

  t.test("TLS", async (t) => {
    // Not t.testdir(): its path is fixed per test name, and every test process must get its own CA.
    const dir = makeTempDir("tls");
    t.teardown(() => removeTempDir(dir));
    const certs = await generateCertificates(dir);
    const withoutCert = (port: number, ca = certs.caCert) =>
      redisCli(["-p", String(port), "--tls", "--cacert", ca, "PING"]);

    t.test("client certificates required: only our CA's client gets in", async (t) => {
      const redis = await startRedis(t, { tls: { certificates: certs, requireClientCert: true } });
      t.equal(await redis.cli("SET", "k", "v"), "OK");
      t.equal(await redis.cli("GET", "k"), "v");
      // The client-side wording races with the server's close (TLS 1.3 finishes the client's handshake
      // before the server checks its certificate); the server log names the reason.
      const refused = /^Error: (Connection reset by peer|Server closed the connection)\n$/;
      const refusedBecause = async (args: string[], reason: string) => {
        const result = await redisCli(["-p", String(redis.port), ...args, "PING"]);
        t.equal(result.code, 1);
        t.equal(result.stdout, "");
        t.match(result.stderr, refused);
        await pollUntil(reason, async () => (redis.log().includes(reason) ? true : undefined), {
          timeoutMs: 2000,
        });
        t.pass(`server logged: ${reason}`);
      };
      await refusedBecause(["--tls", "--cacert", certs.caCert], "peer did not return a certificate");
      await refusedBecause(
        ["--tls", "--cacert", certs.caCert, "--cert", certs.otherClientCert, "--key", certs.otherClientKey],
        "SSL routines::certificate verify failed",
      );
      await refusedBecause([], "SSL routines::wrong version number");
    });

    t.test("client certificates optional: a CA file is enough; the server is verified", async (t) => {
      const redis = await startRedis(t, { tls: { certificates: certs, requireClientCert: false } });
      t.equal(await redis.cli("PING"), "PONG");
      t.same(await withoutCert(redis.port), { code: 0, stdout: "PONG\n", stderr: "" });
      t.same(await withoutCert(redis.port, certs.otherCaCert), {
        code: 1,
        stdout: "",
        stderr: `Could not connect to Redis at 127.0.0.1:${redis.port}: SSL_connect failed: certificate verify failed\n`,
      });
    });

    t.test("Node's TLS client accepts the server certificate for 127.0.0.1 and localhost only", async (t) => {
      const redis = await startRedis(t, { tls: { certificates: certs, requireClientCert: true } });
      const options = {
        host: "127.0.0.1",
        port: redis.port,
        ca: readFileSync(certs.caCert),
        cert: readFileSync(certs.clientCert),
        key: readFileSync(certs.clientKey),
      };
      for (const servername of ["localhost", undefined]) {
        const socket = connectTls({ ...options, ...(servername ? { servername } : {}) });
        t.equal(await exchange(socket, "PING\r\n", 7), "+PONG\r\n", `servername ${servername}`);
        socket.destroy();
      }
      const wrongName = connectTls({ ...options, servername: "redis.example" });
      const error = await new Promise<NodeJS.ErrnoException>((resolve) => wrongName.once("error", resolve));
      t.equal(error.code, "ERR_TLS_CERT_ALTNAME_INVALID");
    });
  });

  t.test("sentinel group with passwords: failover moves the primary", async (t) => {
    const group = await startSentinelGroup(t, { password: "pw", sentinelPassword: "spw" });
    const [s1, s2, s3] = group.sentinels;
    t.equal(group.sentinelUrl, `mymaster,${s1!.url},${s2!.url},${s3!.url}`);
    t.equal(
      await s1!.cli("SENTINEL", "get-master-addr-by-name", "mymaster"),
      `127.0.0.1\n${group.primary.port}`,
    );
    t.match(await group.replica.cli("ROLE"), /^slave\n127\.0\.0\.1\n/);
    t.equal(await group.primary.cli("SET", "before", "failover"), "OK");
    t.equal(await group.primary.cli("WAIT", "1", "2000"), "1");
    const started = Date.now();
    const next = await group.failover();
    t.comment(`failover took ${Date.now() - started} ms`);
    t.not(next.port, group.primary.port);
    t.same(next, { host: "127.0.0.1", port: group.replica.port });
    t.equal(await group.replica.cli("GET", "before"), "failover");
    t.equal(await group.replica.cli("SET", "after", "failover"), "OK");
    t.equal(await group.replica.cli("GET", "after"), "failover");
  });

  t.test("cluster with a password: keys in different slots live on different nodes", async (t) => {
    const cluster = await startCluster(t, { password: "pw" });
    t.equal(cluster.url, cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(","));
    const owners = parseSlotOwners(await cluster.cli(cluster.nodes[0]!.port, "CLUSTER", "NODES"));
    t.equal(new Set(owners.map((owner) => owner.port)).size, 3);
    t.equal(
      owners.reduce((sum, owner) => sum + owner.to - owner.from + 1, 0),
      16384,
    );
    const ownerOf = async (key: string) => {
      const slot = Number(await cluster.cli(cluster.nodes[0]!.port, "CLUSTER", "KEYSLOT", key));
      return { slot, port: owners.find((owner) => owner.from <= slot && slot <= owner.to)!.port };
    };
    const a = await ownerOf("{user}:1");
    const b = await ownerOf("{tenant}:1");
    t.equal(a.slot, 5474);
    t.equal(b.slot, 14419);
    t.not(b.port, a.port, "slots 5474 and 14419 belong to different primaries");
    t.equal(await cluster.cli(a.port, "SET", "{user}:1", "a"), "OK");
    await t.rejects(cluster.cli(b.port, "SET", "{user}:1", "x"), {
      message: new RegExp(`: MOVED ${a.slot} 127\\.0\\.0\\.1:${a.port} $`),
    });
    t.equal(await cluster.cli(b.port, "SET", "{tenant}:1", "b"), "OK");
    t.equal(await cluster.cli(b.port, "-c", "GET", "{user}:1"), "a");
  });

  t.test("cluster and sentinel group without passwords", async (t) => {
    const [cluster, group] = await Promise.all([startCluster(t), startSentinelGroup(t)]);
    for (const node of cluster.nodes) t.match(await node.cli("CLUSTER", "INFO"), /^cluster_state:ok$/m);
    const first = cluster.nodes[0]!.port;
    t.equal(await cluster.cli(first, "-c", "SET", "{tenant}:1", "v"), "OK");
    t.equal(await cluster.cli(first, "-c", "GET", "{tenant}:1"), "v");
    t.equal(await group.primary.cli("SET", "k", "v"), "OK");
    t.equal(await group.primary.cli("WAIT", "1", "2000"), "1");
    t.equal(await group.replica.cli("GET", "k"), "v");
    for (const sentinel of group.sentinels) {
      t.equal(
        await sentinel.cli("SENTINEL", "get-master-addr-by-name", "mymaster"),
        `127.0.0.1\n${group.primary.port}`,
      );
    }
  });

  t.test("round-trip proxy", async (t) => {
    const redis = await startRedis(t);
    const proxy = await startRoundTripProxy(t, redis);
    t.equal(proxy.url, `127.0.0.1:${proxy.port}`);

    const pipelined =
      "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    const socket = await openTcp(proxy.port);
    t.equal(await exchange(socket, pipelined, 18), "+PONG\r\n+OK\r\n$1\r\nv\r\n");
    t.equal(proxy.roundTrips(), 1, "one write of three commands is one round trip");

    proxy.reset();
    t.equal(await exchange(socket, "*1\r\n$4\r\nPING\r\n", 7), "+PONG\r\n");
    t.equal(await exchange(socket, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 7), "$1\r\nv\r\n");
    t.equal(proxy.roundTrips(), 2, "two sequential commands are two round trips");

    proxy.reset();
    const second = await openTcp(proxy.port);
    t.equal(await exchange(second, "*1\r\n$4\r\nPING\r\n", 7), "+PONG\r\n");
    t.equal(await exchange(socket, "*1\r\n$4\r\nPING\r\n", 7), "+PONG\r\n");
    t.equal(proxy.roundTrips(), 2, "turns are summed over connections");
    t.equal(proxy.connections(), 1);
    socket.destroy();
    second.destroy();

    proxy.reset();
    t.equal((await redisCli(["-p", String(proxy.port), "INCR", "n"])).stdout.trim(), "1");
    t.equal(proxy.roundTrips(), 1);
    t.equal(proxy.connections(), 1);
  });
}

/** A TCP connection to 127.0.0.1:port, once connected. */
function openTcp(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Writes `payload` in one write and resolves with the first `replyBytes` bytes that come back. */
function exchange(socket: Socket, payload: string, replyBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let reply = "";
    const onData = (chunk: Buffer) => {
      reply += chunk.toString("latin1");
      if (reply.length < replyBytes) return;
      socket.off("data", onData);
      socket.off("error", reject);
      resolve(reply);
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(payload);
  });
}

/** Slot ranges of the primaries in a `CLUSTER NODES` reply. */
function parseSlotOwners(nodes: string): { port: number; from: number; to: number }[] {
  return nodes.split("\n").flatMap((line) => {
    const fields = line.trim().split(" ");
    const port = Number(/:(\d+)@/.exec(fields[1] ?? "")?.[1]);
    return fields.slice(8).map((range) => {
      const [from, to = from] = range.split("-").map(Number);
      return { port, from: from!, to: to! };
    });
  });
}
