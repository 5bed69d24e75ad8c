import { constants, type ServerHttp2Stream } from "node:http2";

/**
 * GRPC_MAX_TOTAL_STREAMS: the HTTP/2 streams open at once in the whole process, over every connection and
 * port (docs/production.md "Hostile clients"). GRPC_MAX_CONCURRENT_STREAMS bounds one connection; without
 * this, many connections each full of half-sent streams hold about 7.5 KB per stream and stall every
 * client (issue 29). A stream beyond the bound is reset at once with REFUSED_STREAM, which tells the
 * client that nothing of it was processed and that it may retry (RFC 9113 §8.7).
 */
export class OpenStreams {
  #open = 0;
  readonly #release = () => {
    this.#open--;
  };

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
    if (this.max > 0 && this.#open >= this.max) {
      // Closing with an error code destroys the stream with ERR_HTTP2_STREAM_ERROR: expected, not a fault.
      stream.on("error", ignore);
      stream.close(constants.NGHTTP2_REFUSED_STREAM);
      this.onRefused();
      return false;
    }
    this.#open++;
    stream.once("close", this.#release);
    return true;
  }
}

function ignore(): void {}
