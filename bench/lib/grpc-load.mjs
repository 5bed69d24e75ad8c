// An open-loop gRPC load on node:http2 that records every call: when it was sent, how long its answer took and
// what the answer was (the overall code, or the gRPC error and its message). The outage benchmark needs this per
// phase; h2load cannot tell, since a gRPC error arrives as HTTP 200 with a grpc-status trailer.
import { connect } from "node:http2";

/** What a recorded call got. SKIPPED: not sent, `maxInFlight` calls were already waiting. */
export const OUTCOME = { OK: 1, OVER_LIMIT: 2, ERROR: 3, SKIPPED: 4 };

const GRPC_HEADERS = { ":method": "POST", "content-type": "application/grpc", te: "trailers" };
const TICK_MS = 5;

/**
 * Sends `rps` unary calls a second to 127.0.0.1:`port``path`, cycling through `bodies` (gRPC frames), spread
 * over `sessions` HTTP/2 connections, whatever the answers take (open loop: a slow server gets more calls in
 * flight, as it would from Envoy). Returns `stop()`, which waits up to `drainMs` for the calls in flight and
 * resolves with the records: { sentMs, ms, outcome, message } (times from performance.now()).
 */
export function startLoad({ port, path, bodies, rps, sessions = 4, maxInFlight = 20_000 }) {
  const records = [];
  const clients = Array.from({ length: sessions }, () => undefined);
  let inFlight = 0;
  let sent = 0;
  const startedMs = performance.now();
  const session = (i) => {
    if (clients[i] === undefined || clients[i].destroyed || clients[i].closed) {
      clients[i] = connect(`http://127.0.0.1:${port}`);
      // A lost connection shows in the calls it fails; the next call opens a new one.
      clients[i].on("error", () => {});
    }
    return clients[i];
  };
  const send = () => {
    const sentMs = performance.now();
    const stream = session(sent % sessions).request({ ...GRPC_HEADERS, ":path": path });
    const body = bodies[sent % bodies.length];
    inFlight++;
    const chunks = [];
    let status;
    let message = "";
    let failure;
    const take = (headers) => {
      if (headers["grpc-status"] === undefined) return;
      status = headers["grpc-status"];
      message = decodeURIComponent(headers["grpc-message"] ?? "");
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", (chunk) => chunks.push(chunk));
    stream.on("error", (error) => (failure = error.message));
    stream.on("close", () => {
      inFlight--;
      const ms = performance.now() - sentMs;
      if (status !== "0" || failure !== undefined)
        return records.push({
          sentMs,
          ms,
          outcome: OUTCOME.ERROR,
          message: failure ?? `${status} ${message}`,
        });
      records.push({ sentMs, ms, outcome: overallCode(Buffer.concat(chunks)), message: "" });
    });
    stream.end(body);
  };
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - startedMs) / 1000) * rps);
    while (sent < due) {
      if (inFlight >= maxInFlight)
        records.push({ sentMs: performance.now(), ms: 0, outcome: OUTCOME.SKIPPED });
      else send();
      sent++;
    }
  }, TICK_MS);
  return {
    inFlight: () => inFlight,
    async stop(drainMs = 5000) {
      clearInterval(timer);
      const deadline = performance.now() + drainMs;
      while (inFlight > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const client of clients) client?.destroy();
      return records;
    },
  };
}

/** RateLimitResponse.overall_code (field 1, varint) from a gRPC frame; OK or OVER_LIMIT, else ERROR. */
function overallCode(frame) {
  if (frame.length < 7 || frame[5] !== 0x08) return OUTCOME.ERROR;
  return frame[6] === 1 ? OUTCOME.OK : frame[6] === 2 ? OUTCOME.OVER_LIMIT : OUTCOME.ERROR;
}
