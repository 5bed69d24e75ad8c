import type { IncomingMessage, ServerResponse } from "node:http";
import { Session } from "node:inspector/promises";
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

/** `/debug/pprof/heap`: a V8 heap snapshot (`.heapsnapshot`), streamed. */
export function heapSnapshotHandler(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-disposition": 'attachment; filename="ratelimitd.heapsnapshot"',
  });
  getHeapSnapshot().pipe(res);
}
