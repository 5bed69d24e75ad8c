import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../transports/http/http-responses.js";
import type { LiveEvents } from "./console-contract.js";
import type { TrafficSampler } from "./traffic-sampler.js";

/** Options of {@link LiveStream}. */
export interface LiveStreamOptions {
  readonly sampler: TrafficSampler;
  readonly intervalMs: number;
  /** Pages connected at once; more get 503 (each holds a connection and a little memory). */
  readonly maxClients: number;
  /** The rules' latest load attempt, successful or not: a new one is a `rules` event at the next tick. */
  readonly lastLoad: () => { readonly atMs: number; readonly error: string | undefined } | undefined;
}

/** A page buffering more than this is too slow to follow: it is dropped and its EventSource reconnects. */
const MAX_BUFFERED_BYTES = 1 << 20;

/**
 * `GET /console/api/events`: Server-Sent Events to the console's pages — `hello` with the history, a `tick`
 * every interval, `rules` at the tick after a load attempt (a failed one too). One timer samples for every
 * page; it runs while the console is on, so a page opened later still gets the last minutes.
 */
export class LiveStream {
  readonly #options: LiveStreamOptions;
  readonly #clients = new Set<ServerResponse>();
  #timer: NodeJS.Timeout | undefined;
  #lastLoadAtMs: number | undefined;
  #closed = false;

  constructor(options: LiveStreamOptions) {
    this.#options = options;
    this.#lastLoadAtMs = options.lastLoad()?.atMs;
  }

  start(): void {
    this.#options.sampler.restartClock();
    this.#timer ??= setInterval(() => this.#publishTick(), this.#options.intervalMs);
    // The sampler's timer never keeps the process alive on its own.
    this.#timer.unref();
  }

  /** Ends every stream (shutdown must not wait for pages that never hang up) and stops sampling. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const res of this.#clients) res.end();
    this.#clients.clear();
  }

  handle = (req: IncomingMessage, res: ServerResponse) => {
    const { maxClients, intervalMs, sampler } = this.#options;
    if (req.method !== "GET") return sendJson(res, 405, { error: "Method not allowed" }, { allow: "GET" });
    if (this.#closed) return sendJson(res, 503, { error: "The daemon is shutting down." });
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
    const tick = this.#options.sampler.sample();
    if (this.#clients.size > 0) this.#publish("tick", tick);
    // A reload, or a failed one (the Overview shows its error): pages fetch the rules and the Overview again.
    const load = this.#options.lastLoad();
    if (load !== undefined && load.atMs !== this.#lastLoadAtMs) {
      this.#lastLoadAtMs = load.atMs;
      this.#publish("rules", { loadedAtMs: load.atMs, ok: load.error === undefined });
    }
  }

  #publish<E extends keyof LiveEvents>(event: E, data: LiveEvents[E]): void {
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
function frame<E extends keyof LiveEvents>(event: E, data: LiveEvents[E]): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
