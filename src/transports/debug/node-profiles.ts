import type { IncomingMessage, ServerResponse } from "node:http";
import { Session } from "node:inspector/promises";
import { pipeline } from "node:stream";
import { getHeapSnapshot } from "node:v8";

const MAX_PROFILE_SECONDS = 300;
let profiling = false;

/**
 * `/debug/pprof/profile?seconds=N` (default 30, as Go's): a V8 CPU profile of the whole process, as a
 * `.cpuprofile` file (open in Chrome DevTools or speedscope). One profile at a time.
 */
export async function cpuProfileHandler(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requested = new URL(req.url ?? "/", "http://x").searchParams.get("seconds");
  const seconds = requested === null ? 30 : Number(requested);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
    res.writeHead(400, { "content-type": "text/plain; charset=utf-8" });
    res.end(`seconds must be a number in (0, ${MAX_PROFILE_SECONDS}]\n`);
    return;
  }
  if (profiling) {
    res.writeHead(409, { "content-type": "text/plain; charset=utf-8" });
    res.end("a CPU profile is already being taken\n");
    return;
  }
  profiling = true;
  const session = new Session();
  try {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = await session.post("Profiler.stop");
    res.writeHead(200, {
      "content-type": "application/json",
      "content-disposition": 'attachment; filename="ratelimitd.cpuprofile"',
    });
    res.end(JSON.stringify(profile));
  } finally {
    session.disconnect();
    profiling = false;
  }
}

let snapshotting = false;

/**
 * `/debug/pprof/heap`: a V8 heap snapshot (`.heapsnapshot`), streamed. A snapshot holds every string in
 * memory — ADMIN_APP_PASSWORD, backend passwords, credentials of recent requests — so the daemon serves it
 * only with DEBUG_HEAP_SNAPSHOT_ENABLED (see {@link heapSnapshotsOffHandler}). V8 stops the process while
 * it takes one and Node buffers the whole serialised snapshot, so one is taken at a time (409 otherwise).
 */
export function heapSnapshotHandler(_req: IncomingMessage, res: ServerResponse): void {
  if (snapshotting) {
    res.writeHead(409, { "content-type": "text/plain; charset=utf-8" });
    res.end("a heap snapshot is already being taken\n");
    return;
  }
  snapshotting = true;
  res.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-disposition": 'attachment; filename="ratelimitd.heapsnapshot"',
  });
  // Done, failed or abandoned by the client: the next snapshot may start. The response's own close comes
  // first when the client goes away; the pipeline's callback waits for the snapshot stream to wind down too.
  const release = () => {
    snapshotting = false;
  };
  res.once("close", release);
  pipeline(getHeapSnapshot(), res, release);
}

/** `/debug/pprof/heap` while DEBUG_HEAP_SNAPSHOT_ENABLED is off: 403 saying why and how to turn it on. */
export function heapSnapshotsOffHandler(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(403, { "content-type": "text/plain; charset=utf-8" });
  res.end(
    "heap snapshots are off: they hold secrets (passwords, credentials of recent requests) and stall " +
      "every request while taken; set DEBUG_HEAP_SNAPSHOT_ENABLED=true to serve them\n",
  );
}
