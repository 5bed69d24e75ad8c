// GRPC_MAX_CONNECTION_AGE (README, "Connection ageing"; grpc-go keepalive): the age gets ±10 % jitter from an
// injected source; a session gets GOAWAY (close) at the age and is destroyed after the grace; timers end with
// the session.
import { EventEmitter } from "node:events";
import type { Http2Session } from "node:http2";
import t from "tap";
import { jitteredAgeMs, limitSessionAge } from "../../../src/transports/server/connection-age.js";

t.test("jitter spans [-10 %, +10 %) of the age", async (t) => {
  t.equal(
    jitteredAgeMs(1000, () => 0),
    900,
  );
  t.equal(
    jitteredAgeMs(1000, () => 0.5),
    1000,
  );
  t.equal(
    jitteredAgeMs(1000, () => 0.75),
    1050,
  );
  t.ok(jitteredAgeMs(86_400_000, () => 0.999_999) < 86_400_000 * 1.1);
});

/** A stand-in for an Http2Session: records close() and destroy() with their time. */
function fakeSession() {
  const calls: string[] = [];
  const session = Object.assign(new EventEmitter(), {
    destroyed: false,
    close: () => calls.push("close"),
    destroy() {
      calls.push("destroy");
      this.destroyed = true;
      session.emit("close");
    },
  });
  return { session, calls, asHttp2: session as unknown as Http2Session };
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test("GOAWAY at the jittered age, then destroyed after the grace", async (t) => {
  const { calls, asHttp2 } = fakeSession();
  limitSessionAge(asHttp2, { maxAgeMs: 40, graceMs: 40, random: () => 0.5 });
  await settle(20);
  t.strictSame(calls, [], "nothing before the age");
  await settle(40);
  t.strictSame(calls, ["close"], "GOAWAY at the age");
  await settle(60);
  t.strictSame(calls, ["close", "destroy"], "destroyed after the grace");
});

t.test("a session that closes by itself takes its timers along; 0 disables", async (t) => {
  const early = fakeSession();
  limitSessionAge(early.asHttp2, { maxAgeMs: 30, graceMs: 30, random: () => 0.5 });
  early.session.emit("close");
  const disabled = fakeSession();
  limitSessionAge(disabled.asHttp2, { maxAgeMs: 0, graceMs: 30, random: () => 0.5 });
  const noGrace = fakeSession();
  limitSessionAge(noGrace.asHttp2, { maxAgeMs: 20, graceMs: 0, random: () => 0.5 });
  await settle(120);
  t.strictSame(early.calls, [], "closed before its age: no GOAWAY");
  t.strictSame(disabled.calls, [], "GRPC_MAX_CONNECTION_AGE=0: never aged");
  t.strictSame(noGrace.calls, ["close"], "GRPC_MAX_CONNECTION_AGE_GRACE=0: never forced");
});
