import { constants, type Http2Session, type ServerHttp2Stream } from "node:http2";

/**
 * GRPC_MAX_TOTAL_STREAMS: the HTTP/2 streams open at once in the whole process, over every connection and
 * port (docs/production.md "Hostile clients"). GRPC_MAX_CONCURRENT_STREAMS bounds one connection; without
 * this, many connections each full of half-sent streams hold about 7.5 KB per stream and stall every
 * client (issue 29).
 *
 * Once the bound is reached, every connection is sent SETTINGS_MAX_CONCURRENT_STREAMS of its fair share
 * (the bound divided among the connections, at least 1): clients that keep to SETTINGS, as gRPC clients and
 * Envoy do, wait, and nghttp2 refuses what others send beyond it before any stream exists. Once the streams
 * open are back under half the bound, connections get GRPC_MAX_CONCURRENT_STREAMS again.
 *
 * Streams that arrive before a client has seen the lower SETTINGS reach {@link admit}: while the bound is
 * reached, a new stream is refused when its connection already holds its fair share, so that the
 * connections that filled the process are refused, not a client with a few calls in flight; those may
 * still open streams up to their share, which keeps the total under twice the bound, and past that every
 * new stream is refused. A refused stream is reset at once with REFUSED_STREAM, which tells the client
 * that nothing of it was processed and that it may retry (RFC 9113 §8.7).
 */
export class OpenStreams {
  #open = 0;
  /** Open streams of each connection that has any. */
  readonly #bySession = new Map<Http2Session, number>();
  /** Every open connection, with the SETTINGS_MAX_CONCURRENT_STREAMS it was given at first (0 = none). */
  readonly #sessions = new Map<Http2Session, number>();
  /** Whether connections were last sent their fair share (the bound was reached). */
  #narrowed = false;

  /**
   * @param max most streams open at once; 0 = no bound.
   * @param onRefused called for each stream refused here (a stat and a rate-limited log line).
   * @param onNarrowed called when connections are sent their fair share (`perConnection`).
   */
  constructor(
    readonly max: number,
    private readonly onRefused: () => void,
    private readonly onNarrowed: (perConnection: number) => void = () => {},
  ) {}

  /** Streams open now. */
  get open(): number {
    return this.#open;
  }

  /**
   * Follows `session` until it closes; `advertised` is its SETTINGS_MAX_CONCURRENT_STREAMS (0 = none). A
   * connection opened while the bound is reached is sent its fair share at once.
   */
  track(session: Http2Session, advertised: number): void {
    if (this.max <= 0) return;
    this.#sessions.set(session, advertised);
    session.once("close", () => this.#sessions.delete(session));
    if (this.#narrowed) sendLimit(session, this.#share());
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
    if (this.max > 0 && !this.#narrowed && this.#open >= this.max) this.#narrow();
    return true;
  }

  #release(session: Http2Session | undefined): void {
    this.#open--;
    if (session !== undefined) {
      const held = (this.#bySession.get(session) ?? 1) - 1;
      if (held === 0) this.#bySession.delete(session);
      else this.#bySession.set(session, held);
    }
    if (this.#narrowed && this.#open <= this.max / 2) this.#widen();
  }

  #share(): number {
    return Math.max(1, Math.floor(this.max / Math.max(1, this.#sessions.size)));
  }

  #narrow(): void {
    this.#narrowed = true;
    const share = this.#share();
    for (const session of this.#sessions.keys()) sendLimit(session, share);
    this.onNarrowed(share);
  }

  #widen(): void {
    this.#narrowed = false;
    // 0 (none advertised at first) goes back to Node's default, 2³²−1: no limit.
    for (const [session, advertised] of this.#sessions) sendLimit(session, advertised || 2 ** 32 - 1);
  }
}

/** Sends SETTINGS_MAX_CONCURRENT_STREAMS; a session closing, or with too many SETTINGS unacknowledged, is left. */
function sendLimit(session: Http2Session, maxConcurrentStreams: number): void {
  if (session.closed || session.destroyed) return;
  try {
    session.settings({ maxConcurrentStreams });
  } catch {
    // ERR_HTTP2_MAX_PENDING_SETTINGS_ACK: a peer that does not acknowledge SETTINGS; its streams beyond
    // the bound are refused by admit() all the same.
  }
}

function ignore(): void {}
