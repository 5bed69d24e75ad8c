// Shared pieces of the hostile-client scripts: a daemon from any built checkout, its memory, and a raw
// HTTP/2 client that writes frames by hand (so it can ignore SETTINGS, as a hostile client would).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";

const root = new URL("../..", import.meta.url).pathname;

/** `--name value` from the command line, or `fallback`. */
export function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
}

/** The checkout whose `dist/` runs: `--checkout DIR` (another clone, built), else this one. */
export function checkout() {
  const dir = option("checkout", root);
  return dir.endsWith("/") ? dir : `${dir}/`;
}

/**
 * Starts `<checkout>/dist/cmd/ratelimitd.js` on ephemeral loopback ports with the memory backend and the
 * bench rules, plus `env`. Resolves once it listens, with its ports, pid, log size and a stop function.
 */
export function startDaemon(env = {}) {
  const child = spawn(process.execPath, [`${checkout()}dist/cmd/ratelimitd.js`], {
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
      RUNTIME_ROOT: `${root}bench/rules`,
      RUNTIME_SUBDIRECTORY: "",
      RUNTIME_WATCH_ROOT: "false",
      DATABASE_URL: "sqlite::memory:",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  process.on("exit", () => child.kill("SIGKILL"));
  let logs = "";
  let logBytes = 0;
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`daemon exited with ${code}:\n${logs}`)));
    child.stderr.on("data", (chunk) => {
      logBytes += chunk.length;
      if (logs.length < 1_000_000) logs += chunk.toString();
      const port = (what) => Number(new RegExp(`Listening for ${what} on '[^']*:(\\d+)'`).exec(logs)?.[1]);
      if (!/Listening for HTTP/.test(logs) || child.listening) return;
      child.listening = true;
      resolve({
        pid: child.pid,
        grpcPort: port("gRPC"),
        httpPort: port("HTTP"),
        debugPort: port("debug"),
        logBytes: () => logBytes,
        logs: () => logs,
        stop: () =>
          new Promise((done) => {
            child.removeAllListeners("exit");
            child.once("exit", done);
            child.kill("SIGKILL");
          }),
      });
    });
  });
}

/** Resident set size of a process in MiB, from /proc. */
export function rssMb(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
  return Math.round(kb / 1024);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const RLS_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7 };
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

function frame(type, flags, streamId, payload = Buffer.alloc(0)) {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** HPACK: a literal field without indexing, name given by static-table index (RFC 7541 §6.2.2). */
function literal(index, value) {
  const name = index < 15 ? Buffer.from([index]) : Buffer.from([15, index - 15]);
  return Buffer.concat([name, Buffer.from([value.length]), Buffer.from(value)]);
}

/** A gRPC request's header block: POST, http, `path`, application/grpc, te: trailers. */
function grpcHeaderBlock(path) {
  return Buffer.concat([
    Buffer.from([0x83, 0x86]), // :method POST, :scheme http (static table 3 and 6)
    literal(4, path), // :path
    literal(1, "localhost"), // :authority
    literal(31, "application/grpc"), // content-type
    Buffer.from([0x00, 2]),
    Buffer.from("te"),
    Buffer.from([8]),
    Buffer.from("trailers"),
  ]);
}

/**
 * A hand-written HTTP/2 client connection: sends the preface and empty SETTINGS, acknowledges the
 * server's SETTINGS, and counts what comes back (`received.goaway` holds the GOAWAY error code, if any).
 */
export function rawConnection(port) {
  const socket = connect(port, "127.0.0.1");
  const received = {
    settings: undefined,
    rstStreams: 0,
    rstCodes: {},
    goaway: undefined,
    closed: false,
    bytes: 0,
  };
  let pending = Buffer.alloc(0);
  let settled;
  const ready = new Promise((resolve) => (settled = resolve));
  socket.on("error", () => {});
  socket.on("close", () => {
    received.closed = true;
    settled();
  });
  socket.on("data", (chunk) => {
    received.bytes += chunk.length;
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const [type, flags] = [pending[3], pending[4]];
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      if (type === FRAME.SETTINGS && (flags & 1) === 0) {
        received.settings = {};
        for (let at = 0; at + 6 <= payload.length; at += 6)
          received.settings[payload.readUInt16BE(at)] = payload.readUInt32BE(at + 2);
        socket.write(frame(FRAME.SETTINGS, 1, 0));
        settled();
      } else if (type === FRAME.RST_STREAM) {
        received.rstStreams++;
        const code = payload.readUInt32BE(0);
        received.rstCodes[code] = (received.rstCodes[code] ?? 0) + 1;
      } else if (type === FRAME.GOAWAY) received.goaway ??= payload.readUInt32BE(4);
      else if (type === FRAME.PING && (flags & 1) === 0) socket.write(frame(FRAME.PING, 1, 0, payload));
    }
  });
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  let nextStreamId = 1;
  return {
    socket,
    received,
    /** Resolves once the server's SETTINGS arrived (and were acknowledged) or the connection closed. */
    ready,
    /** Opens a gRPC stream with HEADERS only (no END_STREAM): a request that never completes. */
    openStream(path = RLS_PATH) {
      const id = nextStreamId;
      nextStreamId += 2;
      return { id, flushed: socket.write(frame(FRAME.HEADERS, 4, id, grpcHeaderBlock(path))) };
    },
    /** Waits until the socket's write buffer drained (or the connection closed). */
    drain: () =>
      new Promise((resolve) => {
        if (!socket.writableNeedDrain || socket.destroyed) return resolve();
        socket.once("drain", resolve);
        socket.once("close", resolve);
      }),
    close: () => socket.destroy(),
  };
}
