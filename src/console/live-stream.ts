import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../transports/http/http-responses.js";
import type { TrafficSampler, TrafficTick } from "./traffic-sampler.js";

/** Options of {@link LiveStream}. */
export interface LiveStreamOptions {
  readonly sampler: TrafficSampler;
  readonly intervalMs: number;
  /** Pages connected at once; more get 503 (each holds a connection and a little memory). */
  readonly maxClients: number;
}

/** A page buffering more than this is too slow to follow: it is dropped and its EventSource reconnects. */
const MAX_BUFFERED_BYTES = 1 << 20;

/**
 * `GET /console/api/events`: Server-Sent Events to the console's pages — `hello` with the history, a `tick`
 * every interval, `rules` after a reload. One timer samples for every page; it runs while the console is on,
 * so a page opened later still gets the last minutes.
 */
export class LiveStream {
  readonly #options: LiveStreamOptions;
  readonly #clients = new Set<ServerResponse>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LiveStreamOptions) {
    this.#options = options;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.#publishTick(), this.#options.intervalMs);
    // The sampler's timer never keeps the process alive on its own.
    this.#timer.unref();
  }

  /** Ends every stream (shutdown must not wait for pages that never hang up) and stops sampling. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const res of this.#clients) res.end();
    this.#clients.clear();
  }

  /** Tells every page that the rules changed. */
  rulesChanged(loadedAtMs: number): void {
    this.#publish("rules", { loadedAtMs });
  }

  handle = (req: IncomingMessage, res: ServerResponse) => {
    const { maxClients, intervalMs, sampler } = this.#options;
    if (req.method !== "GET") return sendJson(res, 405, { error: "Method not allowed" }, { allow: "GET" });
    if (this.#clients.size >= maxClients) {
      const error = `Too many live pages (at most ${maxClients}); try again later.`;
      return sendJson(res, 503, { error }, { "retry-after": "5" });
    }
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    });
    res.write(`retry: 2000\n${frame("hello", { intervalMs, history: sampler.history() })}`);
    this.#clients.add(res);
    const forget = () => this.#clients.delete(res);
    res.on("close", forget);
    res.on("error", forget);
  };

  #publishTick(): void {
    const tick: TrafficTick = this.#options.sampler.sample();
    if (this.#clients.size > 0) this.#publish("tick", tick);
  }

  #publish(event: string, data: unknown): void {
    if (this.#clients.size === 0) return;
    const text = frame(event, data);
    for (const res of this.#clients) {
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        this.#clients.delete(res);
        res.destroy();
        continue;
      }
      res.write(text);
    }
  }
}

/** One SSE event; JSON never contains a raw newline, so `data:` is one line. */
function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
