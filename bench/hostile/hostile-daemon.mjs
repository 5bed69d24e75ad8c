// Shared by the hostile-client scripts in this folder: a ratelimitd daemon on loopback with the benchmark
// rules (bench/rules: domain `bench`, value-less rules `k0`…`k9` at 4e9 per hour), a gRPC client on
// node:http2, and RateLimitRequest bodies encoded by hand (so that huge requests cost the script little).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:http2";
import { join } from "node:path";

export const RLS_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
const benchRules = new URL("../rules", import.meta.url).pathname;

/** `--name value` from the command line, else `fallback`. */
export function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
}

/** Every `--env K=V` of the command line, as an object. */
export function extraEnv() {
  return Object.fromEntries(
    process.argv.flatMap((arg, i) =>
      process.argv[i - 1] === "--env" ? [arg.split(/=(.*)/s).slice(0, 2)] : [],
    ),
  );
}

/**
 * Starts `<root>/dist/cmd/ratelimitd.js` (memory backend, loopback, ephemeral ports, `env` on top), pinned to
 * CPU `cpu` with taskset when given. Resolves once every port listens.
 */
export function startDaemon(root, env = {}, cpu = undefined) {
  const args = [join(root, "dist/cmd/ratelimitd.js")];
  const [command, argv] =
    cpu === undefined
      ? [process.execPath, args]
      : ["taskset", ["-c", String(cpu), process.execPath, ...args]];
  const child = spawn(command, argv, {
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
      LOG_LEVEL: "warn",
      RUNTIME_ROOT: benchRules,
      RUNTIME_SUBDIRECTORY: "",
      RUNTIME_WATCH_ROOT: "false",
      DATABASE_URL: "sqlite::memory:",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  process.on("exit", () => child.kill("SIGKILL"));
  let logs = "";
  child.stderr.on("data", (chunk) => {
    logs += chunk;
    if (logs.length > 100_000) logs = logs.slice(-50_000);
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const check = () => {
      const port = (what) => Number(new RegExp(`Listening for ${what} on '[^']*:(\\d+)'`).exec(logs)?.[1]);
      if (!/Listening for HTTP on/.test(logs)) return;
      child.stderr.off("data", check);
      resolve({
        child,
        pid: child.pid,
        grpcPort: port("gRPC"),
        httpPort: port("HTTP"),
        debugPort: port("debug"),
        exited,
        logs: () => logs,
      });
    };
    child.stderr.on("data", check);
    void exited.then(({ code, signal }) => reject(new Error(`daemon exited (${code ?? signal}):\n${logs}`)));
  });
}

/** Resident set size of a process, in MiB (from /proc). */
export function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** `/stats` lines of the debug port whose name starts with one of `prefixes`. */
export async function statLines(debugPort, prefixes) {
  const text = await fetch(`http://127.0.0.1:${debugPort}/stats`).then((r) => r.text());
  return text.split("\n").filter((line) => prefixes.some((p) => line.startsWith(p)));
}

function varint(value) {
  const bytes = [];
  let v = value;
  while (v >= 0x80) {
    bytes.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

const field = (tag, payload) => Buffer.concat([Buffer.from([tag]), varint(payload.length), payload]);

/** A RateLimitRequest: `domain`, and one descriptor per item of `descriptors` (each a list of [key, value]). */
export function encodeRequest(domain, descriptors) {
  const parts = [field(0x0a, Buffer.from(domain))];
  for (const entries of descriptors) {
    const encoded = entries.map(([key, value]) =>
      field(0x0a, Buffer.concat([field(0x0a, Buffer.from(key)), field(0x12, Buffer.from(value))])),
    );
    parts.push(field(0x12, Buffer.concat(encoded)));
  }
  return Buffer.concat(parts);
}

/** The message as one uncompressed gRPC frame. */
export function grpcFrame(message) {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/**
 * One unary call on `session`: resolves with the gRPC status code (or the HTTP status when the answer is
 * not gRPC), the message, and the time taken in ms; `{ code: "error" }` when the stream fails.
 */
export function call(session, path, body, headers = { "content-type": "application/grpc", te: "trailers" }) {
  const started = performance.now();
  return new Promise((resolve) => {
    if (session.destroyed) return resolve({ code: "error", message: "session destroyed", ms: 0 });
    const stream = session.request({ ":method": "POST", ":path": path, ...headers });
    let code;
    let message = "";
    let httpStatus;
    const take = (h) => {
      if (h[":status"] !== undefined) httpStatus = h[":status"];
      if (h["grpc-status"] !== undefined) {
        code = Number(h["grpc-status"]);
        message = decodeURIComponent(h["grpc-message"] ?? "");
      }
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", () => {});
    stream.on("end", () => resolve({ code: code ?? httpStatus, message, ms: performance.now() - started }));
    stream.on("error", (error) =>
      resolve({ code: "error", message: error.message, ms: performance.now() - started }),
    );
    stream.end(body);
  });
}

/** An HTTP/2 session to 127.0.0.1:`port`, with room for large requests. */
export function session(port) {
  const s = connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 16 * 1024 * 1024 } });
  s.on("error", () => {});
  return s;
}

/** p-th quantile (0…1) of `values`. */
export function quantile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}
