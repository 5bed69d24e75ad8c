// Stopping with clients connected to the gRPC port: idle keep-alive connections, HTTP/1.1
// (Connect, gRPC-Web) as well as HTTP/2, are closed at once instead of holding the exit up until their
// keep-alive timeout (5 s in Node's HTTP/1.1 server).
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import t from "tap";
import { RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";

const dir = t.testdir({ config: { "rules.yaml": "domain: bye\n" } });
const request = { domain: "bye", descriptors: [{ entries: [{ key: "k", value: "v" }] }] };
/** Far below the 5 s keep-alive timeout an idle HTTP/1.1 connection would otherwise wait for. */
const PROMPT_EXIT_MS = 2500;

for (const [name, transportFor] of [
  ["Connect over HTTP/1.1", (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "1.1" })],
  ["gRPC over HTTP/2", (baseUrl: string) => createGrpcTransport({ baseUrl })],
] as const) {
  t.test(`an idle ${name} client does not hold up the exit`, async (t) => {
    const daemon = await startDaemon({ RUNTIME_ROOT: dir });
    const client = createClient(RateLimitService, transportFor(`http://127.0.0.1:${daemon.grpcPort}`));
    t.equal((await client.shouldRateLimit(request)).overallCode, 1);
    const stopping = performance.now();
    t.equal(await daemon.stop(), 0, "exit code 0");
    const tookMs = performance.now() - stopping;
    t.ok(tookMs < PROMPT_EXIT_MS, `stopped in ${Math.round(tookMs)} ms`);
  });
}
