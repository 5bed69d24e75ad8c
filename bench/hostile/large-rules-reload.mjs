// A legitimate but large rules file (200,000 descriptors, about 17 MB of YAML) is written while a client
// asks for decisions every 2 ms: how long the reload takes, and the decisions' latency (p50, p99, max)
// while it runs, against the latency before it.
//
//   node bench/hostile/large-rules-reload.mjs [--root DIR] [--descriptors 200000]
//
// --root is a built checkout (default: this one) — point it at an older build for before/after figures.
// The machine's other load shows in every figure: compare builds run one after another.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const root = option("root", new URL("../..", import.meta.url).pathname);
const descriptors = Number(option("descriptors", "200000"));

const dir = mkdtempSync(join(tmpdir(), "large-rules-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "config"));
writeFileSync(
  join(dir, "config", "small.yaml"),
  "domain: small\ndescriptors:\n  - key: k\n    rate_limit: { unit: second, requests_per_unit: 1000000 }\n",
);
const daemon = spawn(
  process.execPath,
  [...(process.env.DAEMON_NODE_FLAGS ?? "").split(" ").filter(Boolean), join(root, "dist/cmd/ratelimitd.js")],
  {
    env: {
      PATH: process.env.PATH,
      BACKEND_TYPE: "memory",
      HOST: "127.0.0.1",
      PORT: "0",
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      DEBUG_HOST: "127.0.0.1",
      DEBUG_PORT: "0",
      USE_STATSD: "false",
      RUNTIME_ROOT: dir,
      RUNTIME_SUBDIRECTORY: "",
      RUNTIME_WATCH_ROOT: "false",
      DATABASE_URL: "sqlite::memory:",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", process.env.DAEMON_NODE_FLAGS ? "inherit" : "ignore", "pipe"],
  },
);
process.on("exit", () => daemon.kill("SIGKILL"));
let logs = "";
const ports = await new Promise((resolve, reject) => {
  daemon.stderr.on("data", (chunk) => {
    logs += chunk;
    const http = /Listening for HTTP on '[^']*:(\d+)'/.exec(logs);
    const debug = /Listening for debug on '[^']*:(\d+)'/.exec(logs);
    if (http && debug) resolve({ http: Number(http[1]), debug: Number(debug[1]) });
  });
  daemon.once("exit", (code) => reject(new Error(`daemon exited with ${code}:\n${logs}`)));
});

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
let failures = 0;
/** The response body; a failed request (a kept-alive socket the server closed meanwhile) is counted. */
function get(port, path, body) {
  return new Promise((resolve) => {
    const req = request({ port, path, method: body ? "POST" : "GET", agent }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve(text));
    });
    req.on("error", () => {
      failures++;
      resolve("");
    });
    req.end(body);
  });
}
const decisionBody = JSON.stringify({
  domain: "small",
  descriptors: [{ entries: [{ key: "k", value: "v" }] }],
});
// From the log, not /stats: /stats lists six counters per rule, 1.2 million lines once the file is loaded.
const loads = async () => logs.split("Successfully loaded new configuration").length - 1;

/**
 * A decision sent every 2 ms on its own schedule (a stalled daemon delays the answers, not the sending) until
 * `until()` is true; their latencies in ms.
 */
async function probe(until) {
  const latencies = [];
  const pending = [];
  const timer = setInterval(() => {
    const start = performance.now();
    pending.push(
      get(ports.http, "/json", decisionBody).then(() => latencies.push(performance.now() - start)),
    );
  }, 2);
  while (!(await until())) await new Promise((resolve) => setTimeout(resolve, 50));
  clearInterval(timer);
  await Promise.all(pending);
  return latencies;
}
const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
  return `n=${sorted.length} p50=${at(0.5)} ms p99=${at(0.99)} ms max=${sorted.at(-1).toFixed(1)} ms`;
};

const lines = ["domain: big", "descriptors:"];
for (let i = 0; i < descriptors; i++) {
  lines.push(
    `  - key: header_${i}`,
    `    value: value-${i}`,
    `    rate_limit: { unit: minute, requests_per_unit: ${(i % 1000) + 1} }`,
  );
}
const text = `${lines.join("\n")}\n`;
const quietUntil = performance.now() + 2000;
const before = await probe(async () => performance.now() > quietUntil);
const loadsBefore = await loads();
const written = performance.now();
// Written by a child process: a 30 MB synchronous write here would delay the probes and be counted.
const writer = spawn(
  process.execPath,
  [
    "-e",
    "require('fs').writeFileSync(process.argv[1], require('fs').readFileSync(0))",
    join(dir, "config", "big.yaml"),
  ],
  { stdio: ["pipe", "ignore", "inherit"] },
);
writer.stdin.end(text);
const during = await probe(
  async () => (await loads()) > loadsBefore || performance.now() - written > 120_000,
);
const reloadMs = performance.now() - written;
console.log(`root: ${root}`);
console.log(`file: ${descriptors} descriptors, ${(text.length / 1e6).toFixed(1)} MB`);
console.log(`reload (write to 'Successfully loaded new configuration'): ${(reloadMs / 1000).toFixed(2)} s`);
console.log(`decisions before: ${summary(before)}`);
console.log(`decisions during: ${summary(during)}`);
console.log(`failed requests: ${failures}`);
daemon.kill("SIGTERM");
await new Promise((resolve) => daemon.once("exit", resolve));
process.exit(0);
