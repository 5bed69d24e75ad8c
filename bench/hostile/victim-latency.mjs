// What one hostile client costs every other (issue 29): a well-behaved client sends one-descriptor
// ShouldRateLimit calls over plain gRPC at a steady rate, first alone, then while an attack runs; prints
// its p50/p99/max latency and failures in each phase, the daemon's RSS peak (VmHWM) and the refusal stats.
//
//   node bench/hostile/victim-latency.mjs --attack connect|streams [--root DIR] [--seconds 8]
//                                         [--victim-rps 200] [--env K=V ...]
//   connect:  --attackers 2 --descriptors 140000 --transport connect
//             each attacker sends, one after another, requests of that many descriptors (140,000: 3.5 MB)
//             over Connect binary on HTTP/1.1 (`connect`, a new connection each), or over plain gRPC on
//             HTTP/2 (`grpc`: the fast path, the yardstick the others should match); `--pause-ms N` waits
//             between an attacker's requests (the same attack rate for builds that answer at different speeds)
//   streams:  --connections 60 --streams 990        each connection opens that many ShouldRateLimit streams
//             and sends half a message on each, never ending it (the attack); with
//             `--reopen-ms N`, a stream that closes (refused, or answered after GRPC_REQUEST_READ_TIMEOUT)
//             is opened again N ms later (an attacker that retries)
//
// --root is a built checkout (default: this one): point it at an older build for before/after figures, e.g.
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
// The daemon is pinned to CPU 1 when `taskset` exists (run this script on CPU 0: `taskset -c 0 node …`).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request as http1Request } from "node:http";
import { connect } from "node:http2";
import { fileURLToPath } from "node:url";
import {
  call,
  encodeRequest,
  extraEnv,
  grpcFrame,
  option,
  quantile,
  RLS_PATH,
  rssMiB,
  session,
  startDaemon,
  statLines,
} from "./hostile-daemon.mjs";

const ATTACK = option("attack", "connect");
const ROOT = option("root", fileURLToPath(new URL("../..", import.meta.url)));
const SECONDS = Number(option("seconds", 8));
const VICTIM_RPS = Number(option("victim-rps", 200));

const hasTaskset = (() => {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
const daemon = await startDaemon(ROOT, extraEnv(), hasTaskset ? 1 : undefined);
const peakMiB = () =>
  Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${daemon.pid}/status`, "utf8"))?.[1]) / 1024;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The victim: calls at VICTIM_RPS on one connection for `seconds`; latencies and failures. */
async function victim(seconds) {
  const s = session(daemon.grpcPort);
  const body = grpcFrame(encodeRequest("bench", [[["k0", ""]]]));
  await call(s, RLS_PATH, body);
  const latencies = [];
  const failures = {};
  const pending = [];
  const endAt = performance.now() + seconds * 1000;
  while (performance.now() < endAt) {
    pending.push(
      call(s, RLS_PATH, body).then((r) => {
        if (r.code === 0) latencies.push(r.ms);
        else failures[`${r.code} ${r.message}`] = (failures[`${r.code} ${r.message}`] ?? 0) + 1;
      }),
    );
    await sleep(1000 / VICTIM_RPS);
  }
  await Promise.all(pending);
  s.close();
  return { latencies, failures };
}

/** One HTTP/1.1 Connect binary call on a new connection; resolves with the status and time. */
function connectCall(body) {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http1Request(
      {
        host: "127.0.0.1",
        port: daemon.grpcPort,
        method: "POST",
        path: RLS_PATH,
        headers: { "content-type": "application/proto" },
        agent: false,
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode, text, ms: performance.now() - started }));
      },
    );
    req.on("error", (error) => resolve({ status: "error", text: error.message, ms: 0 }));
    req.end(body);
  });
}

/** One plain gRPC call on a new HTTP/2 connection; resolves like {@link connectCall}. */
async function grpcCall(message) {
  const s = session(daemon.grpcPort);
  const reply = await call(s, RLS_PATH, grpcFrame(message));
  s.close();
  return { status: reply.code, text: reply.message, ms: reply.ms };
}

/** Starts the attack; resolves with a function that stops it and returns what the attackers saw. */
function startAttack() {
  let running = true;
  const seen = {};
  const note = (what) => (seen[what] = (seen[what] ?? 0) + 1);
  if (ATTACK === "connect") {
    const count = Number(option("descriptors", 140_000));
    const bomb = encodeRequest(
      "bench",
      Array.from({ length: count }, () => [["k0", "v".repeat(15)]]),
    );
    const times = [];
    const overGrpc = option("transport", "connect") === "grpc";
    const attackers = Array.from({ length: Number(option("attackers", 2)) }, async () => {
      while (running) {
        const reply = overGrpc ? await grpcCall(bomb) : await connectCall(bomb);
        times.push(reply.ms);
        note(`${reply.status} ${reply.text.slice(0, 90)}`);
        await sleep(Number(option("pause-ms", 0)));
      }
    });
    return async () => {
      running = false;
      await Promise.all(attackers);
      return { sizeMB: (bomb.length / 1e6).toFixed(2), answers: seen, p50ms: quantile(times, 0.5) };
    };
  }
  if (ATTACK === "streams") {
    const sessions = [];
    const reopenMs = option("reopen-ms", undefined) === undefined ? undefined : Number(option("reopen-ms"));
    const half = grpcFrame(encodeRequest("bench", [[["k0", ""]]])).subarray(0, 8);
    const open = (s) => {
      if (!running || s.destroyed || s.closed) return;
      const stream = s.request({ ":method": "POST", ":path": RLS_PATH, "content-type": "application/grpc" });
      stream.on("error", () => {});
      stream.on("response", (h) => note(`grpc-status ${h["grpc-status"]}`));
      stream.on("close", () => {
        note(`closed rst ${stream.rstCode}`);
        if (reopenMs !== undefined) setTimeout(open, reopenMs, s);
      });
      stream.resume();
      stream.write(half);
    };
    for (let c = 0; c < Number(option("connections", 60)); c++) {
      const s = connect(`http://127.0.0.1:${daemon.grpcPort}`);
      s.on("error", () => {});
      s.on("goaway", (code) => note(`goaway ${code}`));
      sessions.push(s);
      for (let i = 0; i < Number(option("streams", 990)); i++) open(s);
    }
    return async () => {
      running = false;
      for (const s of sessions) s.destroy();
      return { answers: seen };
    };
  }
  throw new Error(`--attack connect|streams, not ${ATTACK}`);
}

function summary(name, { latencies, failures }) {
  const f = (v) => v.toFixed(1);
  return {
    phase: name,
    calls: latencies.length,
    p50ms: f(quantile(latencies, 0.5)),
    p99ms: f(quantile(latencies, 0.99)),
    maxms: f(Math.max(...latencies)),
    failures,
  };
}

const rssBefore = rssMiB(daemon.pid);
const alone = summary("victim alone", await victim(Math.min(3, SECONDS)));
const stop = startAttack();
const attacked = summary(`victim during ${ATTACK} attack`, await victim(SECONDS));
const attackers = await stop();
const result = {
  root: ROOT,
  node: process.version,
  attack: ATTACK,
  args: process.argv.slice(2).join(" "),
  alone,
  attacked,
  attackers,
  rssBeforeMiB: Number(rssBefore.toFixed(0)),
  rssPeakMiB: Number(peakMiB().toFixed(0)),
  stats: await statLines(daemon.debugPort, ["ratelimit_server.", "ratelimit.service.call."]).catch(() => []),
};
console.log(JSON.stringify(result, null, 2));
daemon.child.kill("SIGTERM");
await daemon.exited.catch(() => {});
process.exit(0);
