import type { IncomingMessage, ServerResponse } from "node:http";
import { exactRoute, type HttpRoute } from "../http/http-route.js";
import { metricsHandler } from "./metrics-handler.js";
import { cpuProfileHandler, heapSnapshotHandler, heapSnapshotsOffHandler } from "./node-profiles.js";

/** A debug endpoint with its one-line help for the `/` listing. */
export interface DebugEndpoint {
  readonly path: string;
  readonly help: string;
  readonly handle: HttpRoute["handle"];
}

function text(res: ServerResponse, body: string): void {
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
  res.end(body);
}

/**
 * The debug port's endpoints; `/rlconfig`, `/stats` and `/metrics` read through the given functions, and
 * `/debug/pprof/heap` serves snapshots only when `heapSnapshots` (DEBUG_HEAP_SNAPSHOT_ENABLED) is on.
 */
export function debugEndpoints(sources: {
  rlconfig: () => string;
  stats: () => string[];
  metrics: () => Promise<string>;
  /** `POST /explain` (README "Explain a decision"). */
  explain: HttpRoute["handle"];
  heapSnapshots: boolean;
  /** WORKERS > 1 (docs/workers.md): `/workers` ({@link workersHandler}), listing the threads, ending one. */
  workers?: HttpRoute["handle"] | undefined;
}): DebugEndpoint[] {
  const endpoints: DebugEndpoint[] = [
    {
      path: "/rlconfig",
      help: "print out the currently loaded configuration for debugging",
      handle: (_req, res) => text(res, sources.rlconfig()),
    },
    {
      path: "/stats",
      help: "print out stats",
      handle: (_req, res) =>
        text(
          res,
          sources
            .stats()
            .map((line) => `${line}\n`)
            .join(""),
        ),
    },
    {
      path: "/metrics",
      help: "Prometheus metrics (text format)",
      handle: metricsHandler(sources.metrics),
    },
    {
      path: "/explain",
      help: "POST a /json request body: the decision it would get and why, counting nothing",
      handle: sources.explain,
    },
    {
      path: "/debug/pprof/profile",
      help: "CPU profiling endpoint (?seconds=N, default 30; a .cpuprofile for Chrome DevTools)",
      handle: cpuProfileHandler,
    },
    sources.heapSnapshots
      ? {
          path: "/debug/pprof/heap",
          help: "heap snapshot endpoint (a .heapsnapshot for Chrome DevTools; holds secrets, one at a time)",
          handle: heapSnapshotHandler,
        }
      : {
          path: "/debug/pprof/heap",
          help: "heap snapshot endpoint (off: snapshots hold secrets; DEBUG_HEAP_SNAPSHOT_ENABLED=true)",
          handle: heapSnapshotsOffHandler,
        },
  ];
  const workers = sources.workers;
  if (workers !== undefined) {
    endpoints.push({
      path: "/workers",
      help: "the worker threads as JSON (requests, replacements); POST ?terminate=N ends worker N, which is replaced",
      handle: workers,
    });
  }
  const profiles = endpoints.filter((e) => e.path.startsWith("/debug/pprof/"));
  endpoints.push({
    path: "/debug/pprof/",
    help: "root of various pprof endpoints. hit for help.",
    handle: (_req, res) => text(res, listing(profiles)),
  });
  return endpoints;
}

/** What `/workers` reads and does (docs/workers.md). */
export interface WorkersEndpointSource {
  readonly status: () => unknown;
  readonly terminate: (index: number) => Promise<boolean>;
}

/** `GET /workers` lists the worker threads; `POST /workers?terminate=N` ends worker N (it is replaced). */
export function workersHandler(workers: WorkersEndpointSource): HttpRoute["handle"] {
  return (req, res) => workersEndpoint(workers, req, res);
}

async function workersEndpoint(
  workers: WorkersEndpointSource,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const json = (status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(`${JSON.stringify(body)}\n`);
  };
  if (req.method === "GET" || req.method === "HEAD") return json(200, { workers: workers.status() });
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "GET, HEAD, POST", "content-type": "text/plain; charset=utf-8" });
    res.end("method not allowed\n");
    return;
  }
  const wanted = new URL(req.url ?? "/", "http://x").searchParams.get("terminate") ?? "";
  const index = /^[1-9][0-9]{0,2}$/.test(wanted) ? Number(wanted) : 0;
  if (index === 0 || !(await workers.terminate(index))) {
    return json(404, { error: `no running worker ${JSON.stringify(wanted)}: want ?terminate=<index>` });
  }
  json(202, { terminated: index });
}

/** `<path>: <help>` lines sorted byte-wise, as the reference's `/` page. */
export function listing(endpoints: readonly DebugEndpoint[]): string {
  return [...endpoints]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((e) => `${e.path}: ${e.help}\n`)
    .join("");
}

/** Routes for the endpoints plus the catch-all listing (any other path, like Go's ServeMux `/`). */
export function debugRoutes(endpoints: readonly DebugEndpoint[]): {
  routes: HttpRoute[];
  fallback: (req: IncomingMessage, res: ServerResponse) => void;
} {
  return {
    routes: endpoints.map((e) => exactRoute(e.path, e.handle)),
    fallback: (_req, res) => text(res, listing(endpoints)),
  };
}
