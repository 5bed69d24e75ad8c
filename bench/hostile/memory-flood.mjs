// A hostile client against the memory backend: one distinct value per descriptor under a value-less rule
// (`k0` in bench/rules), requests sent one after another over plain gRPC, so that every descriptor creates a
// counter. Prints the daemon's RSS as it goes, what it answered, and its `ratelimit.memory.*` stats.
//
//   node bench/hostile/memory-flood.mjs [--root DIR] [--requests 4000] [--value-bytes 1048576]
//                                       [--descriptors 1] [--report-every 400] [--env K=V ...]
//
// Two shapes of the attack:
//   long values:  --requests 4000 --value-bytes 1048576             (1 MiB values, one counter per request)
//   many keys:    --requests 3125 --descriptors 256 --value-bytes 16 (800,000 small counters)
// --root is a built checkout (default: this one): point it at an older build for before/after figures.
import {
  call,
  encodeRequest,
  extraEnv,
  grpcFrame,
  option,
  RLS_PATH,
  rssMiB,
  session,
  startDaemon,
  statLines,
} from "./hostile-daemon.mjs";

const root = option("root", new URL("../..", import.meta.url).pathname);
const requests = Number(option("requests", "4000"));
const valueBytes = Number(option("value-bytes", "1048576"));
const descriptors = Number(option("descriptors", "1"));
const reportEvery = Number(option("report-every", String(Math.max(1, Math.floor(requests / 10)))));

const daemon = await startDaemon(root, extraEnv());
const rssAtStart = rssMiB(daemon.pid);
console.log(
  `${requests} requests × ${descriptors} descriptor(s) with distinct ${valueBytes}-byte values, against ${root}`,
);
console.log(`RSS at start: ${rssAtStart.toFixed(0)} MiB`);

// Every value starts with a 12-digit serial number that makes it distinct; the rest is padding.
const SERIAL = 12;
const pad = "x".repeat(Math.max(0, valueBytes - SERIAL));
const template = grpcFrame(
  encodeRequest(
    "bench",
    Array.from({ length: descriptors }, () => [["k0", `${"#".repeat(SERIAL)}${pad}`]]),
  ),
);
const serialAt = [];
for (
  let at = template.indexOf("#".repeat(SERIAL));
  at >= 0;
  at = template.indexOf("#".repeat(SERIAL), at + SERIAL)
) {
  serialAt.push(at);
}

const client = session(daemon.grpcPort);
const answers = {};
let died;
void daemon.exited.then((exit) => (died = exit));
const started = performance.now();
let sent = 0;
for (; sent < requests && died === undefined; sent++) {
  for (const [j, at] of serialAt.entries()) {
    template.write(String(sent * descriptors + j).padStart(SERIAL, "0"), at, "latin1");
  }
  const answer = await call(client, RLS_PATH, template);
  // A failed stream may mean the daemon is gone: give its exit a moment to be noticed.
  if (answer.code === "error") await new Promise((resolve) => setTimeout(resolve, 500));
  const label = answer.code === 0 ? "OK" : `${answer.code} ${answer.message.slice(0, 120)}`;
  answers[label] = (answers[label] ?? 0) + 1;
  if ((sent + 1) % reportEvery === 0 && died === undefined) {
    console.log(
      `${String(sent + 1).padStart(7)} requests  ${String((sent + 1) * descriptors).padStart(9)} values sent  RSS ${rssMiB(daemon.pid).toFixed(0).padStart(5)} MiB  ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
}
client.close();
await new Promise((resolve) => setTimeout(resolve, 200));
if (died !== undefined) {
  console.log(`daemon DIED after ${sent} requests (${died.code ?? died.signal}); last log lines:`);
  console.log(daemon.logs().trim().split("\n").slice(-8).join("\n"));
} else {
  console.log(`answers: ${JSON.stringify(answers)}`);
  console.log(`RSS at the end: ${rssMiB(daemon.pid).toFixed(0)} MiB`);
  for (const line of await statLines(daemon.debugPort, [
    "ratelimit.memory.",
    "ratelimit.node.heap_used_bytes",
    "ratelimit.service.call.should_rate_limit.service_error",
  ])) {
    console.log(`  ${line}`);
  }
  const warnings = daemon
    .logs()
    .split("\n")
    .filter((line) => /memory/i.test(line));
  if (warnings.length > 0)
    console.log(`log lines about memory (${warnings.length}):\n  ${warnings.slice(0, 3).join("\n  ")}`);
  daemon.child.kill("SIGTERM");
}
process.exit(0);
