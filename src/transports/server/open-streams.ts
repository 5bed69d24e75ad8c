import { constants, type Http2Session, type ServerHttp2Stream } from "node:http2";

/**
 * GRPC_MAX_TOTAL_STREAMS: the HTTP/2 streams open at once in the whole process, over every connection and
 * port (docs/production.md "Hostile clients"). GRPC_MAX_CONCURRENT_STREAMS bounds one connection; without
 * this, many connections each full of half-sent streams hold about 7.5 KB per stream and stall every
 * client (issue 29).
 *
 * Once the bound is reached, a new stream is refused when its connection already holds its fair share —
 * the bound divided among the connections with open streams — so that the connections that filled the
 * process are refused, not a client with a few calls in flight. Those may still open streams up to their
 * share, which keeps the total under twice the bound; past that, every new stream is refused. A refused
 * stream is reset at once with REFUSED_STREAM, which tells the client that nothing of it was processed and
 * that it may retry (RFC 9113 §8.7).
 */
export class OpenStreams {
  #open = 0;
  /** Open streams of each connection that has any. */
  readonly #bySession = new Map<Http2Session, number>();

  /**
   * @param max most streams open at once; 0 = no bound.
   * @param onRefused called for each refused stream (a stat and a rate-limited log line).
   */
  constructor(
    readonly max: number,
    private readonly onRefused: () => void,
  ) {}

  /** Streams open now. */
  get open(): number {
    return this.#open;
  }

  /** Counts `stream` until it closes and returns true, or refuses it (REFUSED_STREAM) and returns false. */
  admit(stream: ServerHttp2Stream): boolean {
    const session = stream.session;
    const held = session === undefined ? 0 : (this.#bySession.get(session) ?? 0);
    if (this.max > 0 && this.#open >= this.max) {
      const share = this.max / (this.#bySession.size + (held === 0 ? 1 : 0));
      if (held >= share || this.#open >= 2 * this.max) {
        // Closing with an error code destroys the stream with ERR_HTTP2_STREAM_ERROR: expected, not a fault.
        stream.on("error", ignore);
        stream.close(constants.NGHTTP2_REFUSED_STREAM);
        this.onRefused();
        return false;
      }
    }
    this.#open++;
    if (session !== undefined) this.#bySession.set(session, held + 1);
    stream.once("close", () => this.#release(session));
    return true;
  }

  #release(session: Http2Session | undefined): void {
    this.#open--;
    if (session === undefined) return;
    const held = (this.#bySession.get(session) ?? 1) - 1;
    if (held === 0) this.#bySession.delete(session);
    else this.#bySession.set(session, held);
  }
}

function ignore(): void {}
