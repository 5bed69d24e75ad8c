// Hostile clients sending requests with a huge number of descriptors (default 140,000, about 3.6 MB on the
// wire), while a well-behaved client sends one-descriptor requests at a steady rate: how long each huge
// request takes, and what latency everyone else sees, first without the attack, then during it.
//
//   node bench/hostile/descriptor-flood.mjs [--root DIR] [--descriptors 140000] [--attackers 4]
//                                           [--seconds 10] [--victim-rps 200] [--transport grpc]
//                                           [--env K=V ...]
//
// --transport is how the attackers send: grpc (plain gRPC, the fast path Envoy uses), grpc-unknown-field
// (the same with an unknown field first, which the fast decoder leaves to protobuf-es), connect (the
// Connect protocol, binary) or json (/json). The victim always uses plain gRPC. The daemon is pinned to CPU 1
// and this script should run on CPU 0 (`taskset -c 0 node …`), as `npm run bench` does.
// --root is a built checkout (default: this one): point it at an older build for before/after figures.
import { connect } from "node:http2";
import {
  call,
  encodeRequest,
  extraEnv,
  grpcFrame,
  option,
  quantile,
  RLS_PATH,
  session,
  startDaemon,
  statLines,
} from "./hostile-daemon.mjs";

const root = option("root", new URL("../..", import.meta.url).pathname);
const descriptorCount = Number(option("descriptors", "140000"));
const attackers = Number(option("attackers", "4"));
const seconds = Number(option("seconds", "10"));
const victimRps = Number(option("victim-rps", "200"));
const transport = option("transport", "grpc");

const daemon = await startDaemon(root, extraEnv(), 1);
// Ten value-less rules (k0…k9): the huge request counts ten counters, so what it costs is per descriptor.
const descriptors = Array.from({ length: descriptorCount }, (_, i) => [[`k${i % 10}`, "v".repeat(16)]]);
const message = encodeRequest("bench", descriptors);
const attack = {
  grpc: () => ({ port: daemon.grpcPort, path: RLS_PATH, body: grpcFrame(message) }),
  // Field 15, varint 0: unknown to RateLimitRequest, skipped by any decoder.
  "grpc-unknown-field": () => ({
    port: daemon.grpcPort,
    path: RLS_PATH,
    body: grpcFrame(Buffer.concat([Buffer.from([0x78, 0x00]), message])),
  }),
  connect: () => ({
    port: daemon.grpcPort,
    path: RLS_PATH,
    body: message,
    headers: { "content-type": "application/proto", "connect-protocol-version": "1" },
  }),
  json: () => ({
    port: daemon.httpPort,
    path: "/json",
    body: Buffer.from(
      JSON.stringify({
        domain: "bench",
        descriptors: descriptors.map((entries) => ({
          entries: entries.map(([key, value]) => ({ key, value })),
        })),
      }),
    ),
    headers: { "content-type": "application/json" },
  }),
}[transport]?.();
if (attack === undefined) throw new Error(`unknown --transport ${transport}`);
console.log(
  `${attackers} attackers × ${descriptorCount}-descriptor requests (${(attack.body.length / 1e6).toFixed(1)} MB, ${transport}) against ${root}`,
);

const victimFrame = grpcFrame(encodeRequest("bench", [[["k1", "victim"]]]));
const victim = session(daemon.grpcPort);
await call(victim, RLS_PATH, victimFrame);

/** Steady one-descriptor requests for `ms`: their latencies, and how many failed. */
async function victimLoad(ms) {
  const latencies = [];
  let failed = 0;
  const pending = [];
  const until = performance.now() + ms;
  for (let next = performance.now(); next < until; next += 1000 / victimRps) {
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      call(victim, RLS_PATH, victimFrame).then((answer) => {
        if (answer.code === 0) latencies.push(answer.ms);
        else failed++;
      }),
    );
  }
  await Promise.all(pending);
  return { latencies, failed };
}

const line = (label, { latencies, failed }) =>
  console.log(
    `${label}: ${latencies.length} answered${failed ? `, ${failed} FAILED` : ""}; p50 ${quantile(latencies, 0.5).toFixed(1)} ms  p90 ${quantile(latencies, 0.9).toFixed(1)} ms  p99 ${quantile(latencies, 0.99).toFixed(1)} ms  max ${Math.max(...latencies).toFixed(1)} ms`,
  );

line("victim, no attack    ", await victimLoad(seconds * 1000));

const h2 = (port) => {
  const s = connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 16 * 1024 * 1024 } });
  s.on("error", () => {});
  return s;
};
let attacking = true;
const attackAnswers = {};
const attackMs = [];
const attackerLoops = Array.from({ length: attackers }, async () => {
  const s = h2(attack.port);
  while (attacking) {
    const answer = await call(s, attack.path, attack.body, attack.headers);
    const label = answer.code === 0 ? "OK" : `${answer.code} ${answer.message}`.trim();
    attackAnswers[label] = (attackAnswers[label] ?? 0) + 1;
    attackMs.push(answer.ms);
  }
  s.close();
});
line("victim, during attack", await victimLoad(seconds * 1000));
attacking = false;
await Promise.all(attackerLoops);
console.log(`attack answers: ${JSON.stringify(attackAnswers)}`);
console.log(
  `attack request time: median ${quantile(attackMs, 0.5).toFixed(1)} ms, max ${Math.max(...attackMs).toFixed(1)} ms`,
);
// One huge request alone, nothing else in flight: how long the daemon is busy with it.
const alone = await call(h2(attack.port), attack.path, attack.body, attack.headers);
console.log(`one attack request alone: ${alone.ms.toFixed(1)} ms`);
for (const l of await statLines(daemon.debugPort, [
  "ratelimit.service.call.should_rate_limit.service_error",
])) {
  console.log(`  ${l}`);
}
victim.close();
daemon.child.kill("SIGTERM");
process.exit(0);
