// GRPC_MAX_TOTAL_STREAMS (docs/production.md "Hostile clients", issue 29): streams counted over every
// connection; once the bound is reached, connections are sent their fair share as
// SETTINGS_MAX_CONCURRENT_STREAMS, streams of connections holding their share are refused with
// REFUSED_STREAM, every new one past twice the bound, and the cap comes back under half the bound.
import { EventEmitter } from "node:events";
import { constants, type Http2Session, type ServerHttp2Stream } from "node:http2";
import t from "tap";
import { OpenStreams } from "../../../src/transports/server/open-streams.js";

/** A stand-in for an Http2Session: records the SETTINGS sent to it. */
function fakeSession() {
  const settings: number[] = [];
  const session = Object.assign(new EventEmitter(), {
    closed: false,
    destroyed: false,
    settings: (s: { maxConcurrentStreams: number }) => settings.push(s.maxConcurrentStreams),
  });
  return { settings, session: session as unknown as Http2Session, emitter: session };
}

/** A stand-in for a ServerHttp2Stream of `session`: records the code it was closed with. */
function fakeStream(session: Http2Session) {
  const stream = Object.assign(new EventEmitter(), {
    session,
    closedWith: undefined as number | undefined,
    close(code: number) {
      this.closedWith = code;
    },
  });
  return stream as typeof stream & ServerHttp2Stream;
}

function setup(max: number) {
  const events: string[] = [];
  const streams = new OpenStreams(
    max,
    () => events.push("refused"),
    (share) => events.push(`narrowed to ${share}`),
  );
  return { streams, events };
}

t.test("fair shares once the bound is reached, the cap back under half of it", async (t) => {
  const { streams, events } = setup(10);
  const a = fakeSession();
  const b = fakeSession();
  streams.track(a.session, 1000);
  streams.track(b.session, 1000);
  const opened = Array.from({ length: 10 }, () => fakeStream(a.session));
  t.strictSame(
    opened.map((s) => streams.admit(s)),
    Array(10).fill(true),
  );
  t.strictSame([a.settings, b.settings, events], [[5], [5], ["narrowed to 5"]], "each sent 10 / 2");
  const refused = fakeStream(a.session);
  t.equal(streams.admit(refused), false, "a connection holding its share (and more) is refused");
  t.equal(refused.closedWith, constants.NGHTTP2_REFUSED_STREAM);
  t.equal(refused.listenerCount("error"), 1, "its stream error is expected");
  const others = Array.from({ length: 6 }, () => fakeStream(b.session));
  t.strictSame(
    others.map((s) => streams.admit(s)),
    [true, true, true, true, true, false],
    "the other connection gets up to its share",
  );
  t.equal(streams.open, 15);
  const late = fakeSession();
  streams.track(late.session, 1000);
  t.strictSame(late.settings, [3], "a connection opened meanwhile is sent its share (10 / 3) at once");
  for (const s of opened.slice(0, 9)) s.emit("close");
  t.equal(streams.open, 6);
  t.strictSame(a.settings, [5], "still narrowed above half the bound");
  others[0]!.emit("close");
  t.equal(streams.open, 5);
  t.strictSame(
    [a.settings, b.settings, late.settings],
    [
      [5, 1000],
      [5, 1000],
      [3, 1000],
    ],
    "widened",
  );
  t.strictSame(events, ["narrowed to 5", "refused", "refused"]);
});

t.test("past twice the bound every new stream is refused", async (t) => {
  const { streams } = setup(2);
  const sessions = Array.from({ length: 6 }, () => fakeSession().session);
  const results = sessions.map((s) => streams.admit(fakeStream(s)));
  t.strictSame(results, [true, true, true, true, false, false]);
  t.equal(streams.open, 4);
});

t.test("0 bounds nothing and sends no SETTINGS", async (t) => {
  const { streams, events } = setup(0);
  const a = fakeSession();
  streams.track(a.session, 1000);
  for (let i = 0; i < 100; i++) t.equal(streams.admit(fakeStream(a.session)), true);
  t.strictSame([a.settings, events, streams.open], [[], [], 100]);
});

t.test("a connection that advertised no cap gets Node's default back", async (t) => {
  const { streams } = setup(1);
  const a = fakeSession();
  streams.track(a.session, 0);
  const stream = fakeStream(a.session);
  streams.admit(stream);
  stream.emit("close");
  t.strictSame(a.settings, [1, 2 ** 32 - 1]);
});
