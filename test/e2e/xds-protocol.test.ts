// The xDS rule source's protocol (go-control-plane's pkg/client/sotw/v3, as the reference uses it):
// subscription with node id, metadata and headers; ACK of updates and removals; NACK with the reason, old
// rules kept; a management-server restart; merging.
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import t, { type Test } from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import {
  config,
  eventually,
  rlconfig,
  startManagementServer,
  statValue,
  xdsEnv,
} from "../helpers/xds-fixtures.js";

const FOO_3 = "foo.k1_v1: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false\n";

t.test("subscription, updates, removal, NACK, and a management-server restart", async (t) => {
  const { server, port } = await startManagementServer(t);
  server.setSnapshot("v1", [config("foo-1", "foo", "k1", "v1", 3)]);
  const daemon = await startDaemon(
    xdsEnv(port, {
      CONFIG_GRPC_XDS_NODE_ID: "test-node",
      CONFIG_GRPC_XDS_NODE_METADATA: "zone=eu-1,team=edge",
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "x-token:abc",
    }),
  );
  t.teardown(() => daemon.stop());

  t.equal(await rlconfig(daemon.debugPort), FOO_3, "the initial snapshot is active once the daemon listens");
  const [subscription, ack] = server.received;
  t.strictSame(
    {
      node: subscription?.nodeId,
      metadata: subscription?.nodeMetadata,
      version: subscription?.versionInfo,
      nonce: subscription?.responseNonce,
    },
    { node: "test-node", metadata: { zone: "eu-1", team: "edge" }, version: "", nonce: "" },
    "subscription: node, metadata, empty version and nonce",
  );
  t.equal(subscription?.headers["x-token"], "abc", "extra headers as gRPC metadata");
  t.strictSame(
    [ack?.versionInfo, ack?.responseNonce, ack?.errorMessage],
    ["v1", "1", undefined],
    "ACK of v1",
  );

  server.setSnapshot("v2", [config("foo-1", "foo", "k2", "v2", 5)]);
  await eventually("v2 active", async () =>
    (await rlconfig(daemon.debugPort)).startsWith("foo.k2_v2: unit=MINUTE requests_per_unit=5,"),
  );
  await eventually("v2 ACKed", () => server.received.at(-1)?.versionInfo === "v2");

  server.setSnapshot("v3", []);
  await eventually("removal active", async () => (await rlconfig(daemon.debugPort)) === "");
  const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => client.close());
  const gone = await client.shouldRateLimit({
    domain: "foo",
    descriptors: [{ entries: [{ key: "k2", value: "v2" }] }],
  });
  t.strictSame(gone, { overall_code: "OK", statuses: [{ code: "OK" }] }, "a removed domain answers OK only");

  server.setSnapshot("v4", [config("foo-1", "foo", "k1", "v1", 3)]);
  await eventually("v4 active", async () => (await rlconfig(daemon.debugPort)) === FOO_3);
  const errorsBefore = await statValue(daemon.debugPort, "ratelimit.service.config_load_error");
  server.setSnapshot("v5", [config("bad", "foo", "k1", "v1", 3, 0)]);
  await eventually("NACK", () => server.received.at(-1)?.errorMessage !== undefined);
  const nack = server.received.at(-1)!;
  t.strictSame(
    [nack.versionInfo, nack.errorMessage],
    ["v4", "bad: invalid rate limit unit 'UNKNOWN'"],
    "NACK: the last ACKed version and the reason",
  );
  t.equal(await rlconfig(daemon.debugPort), FOO_3, "old rules kept");
  t.equal(await statValue(daemon.debugPort, "ratelimit.service.config_load_error"), errorsBefore + 1);
  t.match(daemon.logs(), /Error loading new configuration: bad: invalid rate limit unit 'UNKNOWN'/);

  const nackNonce = nack.responseNonce;
  server.close();
  const { server: restarted } = await startManagementServerOn(t, port);
  restarted.setSnapshot("r1", [config("bad", "foo", "k1", "v1", 3, 0)]);
  await eventually("reconnected and NACKed", () => restarted.received.length >= 2, 10_000);
  const [reconnect, nackAfter] = restarted.received;
  t.strictSame(
    [reconnect?.versionInfo, reconnect?.responseNonce],
    ["v5", nackNonce],
    "after a reconnect the first request carries the last received version and nonce (the reference's client)",
  );
  t.strictSame(
    [nackAfter?.versionInfo, nackAfter?.errorMessage],
    ["v5", "bad: invalid rate limit unit 'UNKNOWN'"],
    "that reconnect ACKed v5: a NACK after it carries v5 (go-control-plane's InitConnect is an Ack)",
  );
  t.equal(await rlconfig(daemon.debugPort), FOO_3, "old rules kept across the restart");
  restarted.setSnapshot("r2", [config("foo-1", "foo", "k1", "v1", 42)]);
  await eventually("r2 active", async () =>
    (await rlconfig(daemon.debugPort)).includes("requests_per_unit=42"),
  );
  await eventually("r2 ACKed", () => restarted.received.at(-1)?.versionInfo === "r2");
  t.match(daemon.logs(), /Failed to receive configuration from xDS Management Server: /);
});

async function startManagementServerOn(t: Test, port: number) {
  const { RulesManagementServer } = await import("../../src/xds-server/rules-management-server.js");
  const server = new RulesManagementServer();
  await server.listen("127.0.0.1", port);
  t.teardown(() => server.close());
  return { server };
}

t.test("a resource that does not unmarshal is NACKed without a config event", async (t) => {
  const { server, port } = await startManagementServer(t);
  server.setSnapshot("v1", [config("foo-1", "foo", "k1", "v1", 3)]);
  const daemon = await startDaemon(xdsEnv(port));
  t.teardown(() => daemon.stop());
  const errorsBefore = await statValue(daemon.debugPort, "ratelimit.service.config_load_error");
  // An Any of the right type whose bytes are not a message.
  const broken = create(AnySchema, {
    typeUrl: "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig",
    value: new Uint8Array([0xff, 0xff]),
  });
  server.setRawSnapshot("v2", [broken]);
  await eventually("NACK", () => server.received.some((r) => r.errorMessage !== undefined));
  t.match(server.received.find((r) => r.errorMessage)!.errorMessage, /premature EOF|invalid|wire type/i);
  t.equal(
    await statValue(daemon.debugPort, "ratelimit.service.config_load_error"),
    errorsBefore,
    "no config event",
  );
});

t.test("two resources with one domain: NACK without MERGE_DOMAIN_CONFIG, merged with it", async (t) => {
  const { server, port } = await startManagementServer(t);
  const both = [config("foo-1", "foo", "k1", "v1", 10), config("foo-2", "foo", "k1", "v2", 100)];
  server.setSnapshot("v1", both);
  const plain = await startDaemon(xdsEnv(port));
  t.teardown(() => plain.stop());
  await eventually("NACK", () => server.received.some((r) => r.errorMessage !== undefined));
  t.equal(
    server.received.find((r) => r.errorMessage)!.errorMessage,
    "foo-2: duplicate domain 'foo' in config file",
  );
  const merged = await startDaemon(xdsEnv(port, { MERGE_DOMAIN_CONFIG: "true" }));
  t.teardown(() => merged.stop());
  t.equal(
    await rlconfig(merged.debugPort),
    "foo.k1_v1: unit=MINUTE requests_per_unit=10, shadow_mode: false, quota_mode: false\n" +
      "foo.k1_v2: unit=MINUTE requests_per_unit=100, shadow_mode: false, quota_mode: false\n",
  );
});
