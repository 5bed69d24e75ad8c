// The xDS rule source around the protocol: start-up with and without FORCE_START_WITHOUT_INITIAL_CONFIG,
// health, TLS to the management server, the message size limit, and reloads under load.
import { spawn } from "node:child_process";
import t from "tap";
import { RulesManagementServer } from "../../src/xds-server/rules-management-server.js";
import { BASE_ENV, distEntry, startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { freePort } from "../helpers/free-port.js";
import { httpRequest } from "../helpers/http-request.js";
import { makeTempDir, removeTempDir } from "../helpers/redis-process.js";
import { generateCertificates } from "../helpers/tls-certificates.js";
import {
  config,
  eventually,
  rlconfig,
  startManagementServer,
  statValue,
  xdsEnv,
} from "../helpers/xds-fixtures.js";

t.test("without FORCE_START the daemon waits for its first rules; with it, it serves at once", async (t) => {
  const port = await freePort();
  let logs = "";
  const waiting = spawn(process.execPath, [distEntry("ratelimitd")], {
    env: { PATH: process.env.PATH ?? "", ...BASE_ENV, ...xdsEnv(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  t.teardown(() => waiting.kill("SIGKILL"));
  waiting.stderr.on("data", (chunk: Buffer) => (logs += chunk));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.notMatch(logs, /Listening for HTTP/, "not listening while no rules arrived");
  const server = new RulesManagementServer();
  server.setSnapshot("v1", [config("a", "late", "k", "", 5)]);
  await server.listen("127.0.0.1", port);
  t.teardown(() => server.close());
  await eventually("listening once rules arrived", () => /Listening for HTTP/.test(logs), 10_000);

  const forced = await startDaemon(xdsEnv(await freePort(), { FORCE_START_WITHOUT_INITIAL_CONFIG: "true" }));
  t.teardown(() => forced.stop());
  const client = envoyRlsClient(`127.0.0.1:${forced.grpcPort}`);
  t.teardown(() => client.close());
  await t.rejects(
    client.shouldRateLimit({ domain: "late", descriptors: [{ entries: [{ key: "k", value: "x" }] }] }),
    {
      code: 2,
      details: "no rate limit configuration loaded",
    },
  );
});

t.test("HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED follows the pushed rules", async (t) => {
  const { server, port } = await startManagementServer(t);
  server.setSnapshot("v1", []);
  const daemon = await startDaemon(xdsEnv(port, { HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: "true" }));
  t.teardown(() => daemon.stop());
  const health = async () => (await httpRequest(daemon.httpPort, "/healthcheck")).status;
  t.equal(await health(), 500, "no domain yet");
  server.setSnapshot("v2", [config("a", "d", "k", "", 5)]);
  await eventually("healthy", async () => (await health()) === 200);
  server.setSnapshot("v3", []);
  await eventually("unhealthy again", async () => (await health()) === 500);
});

t.test("mTLS to the management server, with a server-name override", async (t) => {
  const dir = makeTempDir("xds-tls");
  t.teardown(() => removeTempDir(dir));
  const certs = await generateCertificates(dir);
  const server = new RulesManagementServer();
  server.setSnapshot("v1", [config("a", "secure", "k", "", 7)]);
  const port = await server.listen("127.0.0.1", 0, {
    certFile: certs.serverCert,
    keyFile: certs.serverKey,
    caFile: certs.caCert,
    requireClientCert: true,
  });
  t.teardown(() => server.close());
  const tls = {
    CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
    CONFIG_GRPC_XDS_SERVER_TLS_CACERT: certs.caCert,
    CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.clientCert,
    CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.clientKey,
    CONFIG_GRPC_XDS_SERVER_TLS_SAN: "localhost",
  };
  const daemon = await startDaemon(xdsEnv(port, tls));
  t.teardown(() => daemon.stop());
  t.match(await rlconfig(daemon.debugPort), /^secure\.k: unit=MINUTE requests_per_unit=7,/);
  const wrong = await startDaemon(
    xdsEnv(port, {
      ...tls,
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.otherClientCert,
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.otherClientKey,
      FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
    }),
  );
  t.teardown(() => wrong.stop());
  await eventually("a retry logged", () =>
    /Failed to receive configuration from xDS Management Server/.test(wrong.logs()),
  );
  t.equal(await rlconfig(wrong.debugPort), "", "a client certificate from another CA gets nothing");
});

t.test("XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: an oversized response is refused, old rules kept", async (t) => {
  const { server, port } = await startManagementServer(t);
  server.setSnapshot("v1", [config("a", "small", "k", "", 1)]);
  const daemon = await startDaemon(xdsEnv(port, { XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: "400" }));
  t.teardown(() => daemon.stop());
  const small = await rlconfig(daemon.debugPort);
  server.setSnapshot(
    "v2",
    Array.from({ length: 20 }, (_, i) => config(`r${i}`, `domain-${i}`, "k", "x".repeat(20), i + 1)),
  );
  await eventually("the refusal logged", () => /larger than max/i.test(daemon.logs()));
  t.equal(await rlconfig(daemon.debugPort), small);
});

t.test("100 reloads under a steady load of decisions: no failed request", async (t) => {
  const { server, port } = await startManagementServer(t);
  server.setSnapshot("v0", [config("a", "load", "k", "", 1_000_000, 3)]);
  const daemon = await startDaemon(xdsEnv(port));
  t.teardown(() => daemon.stop());
  const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => client.close());
  let running = true;
  let decided = 0;
  let failed = 0;
  const worker = async () => {
    while (running) {
      try {
        const reply = await client.shouldRateLimit({
          domain: "load",
          descriptors: [{ entries: [{ key: "k", value: "v" }] }],
        });
        if (reply.overall_code === "OK" && reply.statuses[0]?.current_limit) decided++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  const workers = Array.from({ length: 8 }, worker);
  for (let version = 1; version <= 100; version++) {
    server.setSnapshot(`v${version}`, [config("a", "load", "k", "", 1_000_000 + version, 3)]);
    await eventually(`v${version} ACKed`, () => server.received.at(-1)?.versionInfo === `v${version}`);
  }
  running = false;
  await Promise.all(workers);
  t.equal(failed, 0, `${decided} decisions, none failed`);
  t.ok(decided > 100, `${decided} decisions during the reloads`);
  t.equal(await statValue(daemon.debugPort, "ratelimit.service.config_load_success"), 101);
  t.match(await rlconfig(daemon.debugPort), /requests_per_unit=1000100,/);
});
