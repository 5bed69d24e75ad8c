// A hostile client floods the users API with creates carrying long passwords, each one an scrypt hash:
// how many are accepted (200) or shed (503), how long the slowest answer takes, and whether rate-limit
// decisions (/json, probed throughout) keep being answered quickly meanwhile.
//
//   node bench/hostile/hash-flood.mjs [--root DIR] [--creates 600] [--password-chars 1024] [--env K=V ...]
//
// --root is a built checkout (default: this one) — point it at an older build for before/after figures.
// The daemon runs with its defaults (USERS_PASSWORD_SCRYPT_LOG_N 15) on a fresh SQLite file.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const root = option("root", new URL("../..", import.meta.url).pathname);
const creates = Number(option("creates", "600"));
const passwordChars = Number(option("password-chars", "1024"));
const extraEnv = Object.fromEntries(
  process.argv.flatMap((arg, i) =>
    process.argv[i - 1] === "--env" ? [arg.split(/=(.*)/s).slice(0, 2)] : [],
  ),
);

const dir = mkdtempSync(join(tmpdir(), "hash-flood-"));
mkdirSync(join(dir, "config"));
const daemon = spawn(process.execPath, [join(root, "dist/cmd/ratelimitd.js")], {
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
    DATABASE_URL: `sqlite:${join(dir, "users.db")}`,
    ...extraEnv,
  },
  stdio: ["ignore", "ignore", "pipe"],
});
process.on("exit", () => daemon.kill("SIGKILL"));
const port = await new Promise((resolve, reject) => {
  let logs = "";
  daemon.stderr.on("data", (chunk) => {
    logs += chunk;
    const found = /Listening for HTTP on '[^']*:(\d+)'/.exec(logs);
    if (found) resolve(Number(found[1]));
  });
  daemon.once("exit", (code) => reject(new Error(`daemon exited with ${code}:\n${logs}`)));
});

const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
function send(path, method, body) {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, path, method, agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            status: res.statusCode,
            retryAfter: res.headers["retry-after"],
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on("error", (error) => resolve({ status: error.code, ms: performance.now() - started }));
    req.end(body);
  });
}

// Rate-limit decisions while the flood is on: one /json call every 100 ms.
const decisionMs = [];
let flooding = true;
const probe = (async () => {
  const body = JSON.stringify({ domain: "bench", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });
  while (flooding) {
    decisionMs.push((await send("/json", "POST", body)).ms);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
})();

const password = "p".repeat(passwordChars);
const started = performance.now();
const replies = await Promise.all(
  Array.from({ length: creates }, (_, i) =>
    send("/users", "PUT", JSON.stringify({ name: `U${i}`, email: `u${i}@example.com`, password })),
  ),
);
const wallMs = performance.now() - started;
flooding = false;
await probe;
daemon.kill("SIGTERM");

const statuses = {};
for (const { status } of replies) statuses[status] = (statuses[status] ?? 0) + 1;
const sorted = (values) => [...values].sort((a, b) => a - b);
const percentile = (values, p) => sorted(values)[Math.min(values.length - 1, Math.floor(values.length * p))];
const byStatus = (status) => replies.filter((r) => r.status === status).map((r) => r.ms);
const seconds = (ms) => (ms === undefined ? "-" : `${(ms / 1000).toFixed(2)} s`);
console.log(`${creates} concurrent creates, ${passwordChars}-character passwords, against ${root}`);
console.log(`answers: ${JSON.stringify(statuses)} in ${seconds(wallMs)}`);
console.log(
  `slowest answer: ${seconds(Math.max(...replies.map((r) => r.ms)))}; 200s: median ${seconds(percentile(byStatus(200), 0.5))}, slowest ${seconds(sorted(byStatus(200)).at(-1))}; 503s: slowest ${seconds(sorted(byStatus(503)).at(-1))}`,
);
const retryAfter = [...new Set(replies.map((r) => r.retryAfter).filter(Boolean))].sort();
if (retryAfter.length > 0) console.log(`Retry-After values: ${retryAfter.join(", ")}`);
console.log(
  `/json decisions meanwhile: ${decisionMs.length}, median ${percentile(decisionMs, 0.5).toFixed(1)} ms, slowest ${Math.max(...decisionMs).toFixed(1)} ms`,
);
