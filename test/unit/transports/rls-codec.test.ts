// The hand-written ShouldRateLimit codec against protobuf-es, on random messages: same requests decoded, same
// errors for bad bytes, and every encoded decision decoding to what protobuf-es would have built.
import { create, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import t from "tap";
import type { Decision, DecisionRequest } from "../../../src/engine/decision-request.js";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  decodeRateLimitRequest,
  encodeRateLimitResponseFrame,
} from "../../../src/transports/grpc/rls-codec.js";
import { rateLimitResponseFromDecision } from "../../../src/transports/rate-limit-response.js";

/** A small deterministic PRNG, so a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
const TEXTS = ["", "a", "key", "värde", "路径/*", "x".repeat(200), "10.1.2.3", "_"];

function randomRequest(rnd: () => number) {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const number = () => pick([0, 1, 127, 128, 16383, 16384, 2 ** 31 - 1, 4294967295]);
  return create(RateLimitRequestSchema, {
    domain: pick(TEXTS),
    hitsAddend: number(),
    descriptors: Array.from({ length: Math.floor(rnd() * 5) }, () => ({
      entries: Array.from({ length: Math.floor(rnd() * 4) }, () => ({
        key: pick(TEXTS),
        value: pick(TEXTS),
      })),
      limit: rnd() < 0.3 ? { requestsPerUnit: number(), unit: Math.floor(rnd() * 7) } : undefined,
      hitsAddend: rnd() < 0.3 ? pick([0n, 1n, 300n, 2n ** 40n]) : undefined,
    })),
  });
}

/** Both decoders' results in one comparable shape. */
function normalised(request: DecisionRequest) {
  return {
    domain: request.domain,
    hitsAddend: request.hitsAddend,
    descriptors: request.descriptors.map((d) => ({
      entries: d.entries.map((e) => [e.key, e.value]),
      limit: d.limit ? [d.limit.requestsPerUnit, d.limit.unit] : null,
      hitsAddend: d.hitsAddend === undefined ? null : Number(d.hitsAddend),
    })),
  };
}

t.test("decodes 2000 random requests exactly as protobuf-es does", async (t) => {
  const rnd = random(42);
  let mismatches = 0;
  for (let i = 0; i < 2000; i++) {
    const bytes = Buffer.from(toBinary(RateLimitRequestSchema, randomRequest(rnd)));
    const ours = JSON.stringify(normalised(decodeRateLimitRequest(bytes)));
    const theirs = JSON.stringify(normalised(fromBinary(RateLimitRequestSchema, bytes)));
    if (ours !== theirs) mismatches++;
  }
  t.equal(mismatches, 0);
});

t.test("repeated singular fields: last wins, messages merge (protobuf rules)", async (t) => {
  const a = toBinary(
    RateLimitRequestSchema,
    create(RateLimitRequestSchema, { domain: "first", descriptors: [] }),
  );
  const b = toBinary(
    RateLimitRequestSchema,
    create(RateLimitRequestSchema, { domain: "second", hitsAddend: 7 }),
  );
  const both = Buffer.concat([a, b]);
  t.strictSame(
    normalised(decodeRateLimitRequest(both)),
    normalised(fromBinary(RateLimitRequestSchema, both)),
  );
  t.equal(decodeRateLimitRequest(both).domain, "second");
});

t.test(
  "unknown fields and long varints go to protobuf-es; malformed bytes fail like protobuf-es",
  async (t) => {
    const known = Buffer.from(toBinary(RateLimitRequestSchema, randomRequest(random(7))));
    const withUnknown = Buffer.concat([known, Buffer.from([0xf8, 0x01, 0x05])]); // field 31, varint 5
    t.strictSame(
      normalised(decodeRateLimitRequest(withUnknown)),
      normalised(fromBinary(RateLimitRequestSchema, withUnknown)),
    );
    const longVarint = Buffer.from([0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]); // hits_addend, 10 bytes
    t.equal(
      decodeRateLimitRequest(longVarint).hitsAddend,
      fromBinary(RateLimitRequestSchema, longVarint).hitsAddend,
    );
    // A real U+FFFD (EF BF BD) is valid UTF-8 and stays.
    const replacementChar = Buffer.from([0x0a, 0x03, 0xef, 0xbf, 0xbd]);
    t.equal(decodeRateLimitRequest(replacementChar).domain, "\uFFFD");
    for (const bad of [
      Buffer.from([0x0a, 0x05, 0x61]),
      Buffer.from([0x12, 0xff]),
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      // Strings that are not UTF-8: a domain, an entry value, a sequence cut short at the end.
      Buffer.from([0x0a, 0x02, 0xff, 0xfe]),
      Buffer.from([
        0x12, 0x07, 0x0a, 0x05, 0x0a, 0x01, 0x61, 0x12, 0x00, 0x12, 0x08, 0x0a, 0x06, 0x12, 0x04, 0x61, 0xc3,
        0x78, 0x62,
      ]),
      Buffer.from([0x0a, 0x03, 0x61, 0xe2, 0x82]),
    ]) {
      const theirs = (() => {
        try {
          fromBinary(RateLimitRequestSchema, bad);
          return "accepted";
        } catch (error) {
          return (error as Error).message;
        }
      })();
      t.throws(() => decodeRateLimitRequest(bad), { message: theirs }, bad.toString("hex"));
    }
  },
);

function randomDecision(rnd: () => number): Decision {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  return {
    overallCode: pick([0, 1, 2]),
    statuses: Array.from({ length: Math.floor(rnd() * 6) }, () => ({
      code: pick([0, 1, 2]),
      currentLimit:
        rnd() < 0.7
          ? {
              name: pick(TEXTS),
              requestsPerUnit: pick([0, 1, 20, 4294967295]),
              unit: pick([0, 1, 2, 3, 4, 5, 6, 7]) as 1,
            }
          : undefined,
      limitRemaining: pick([0, 1, 127, 128, 4294967295]),
      durationUntilResetSeconds: pick([0, 1, 59, 3600, 31536000]),
    })),
    responseHeaders:
      rnd() < 0.4
        ? [
            { key: "RateLimit-Limit", value: "10" },
            { key: pick(TEXTS), value: pick(TEXTS) },
          ]
        : [],
    dynamicMetadata: rnd() < 0.1 ? { domain: "d", descriptors: [{ entries: ["k=v"] }] } : undefined,
  };
}

t.test("encodes 2000 random decisions to what protobuf-es decodes as the reference conversion", async (t) => {
  const rnd = random(4242);
  let mismatches = 0;
  for (let i = 0; i < 2000; i++) {
    const decision = randomDecision(rnd);
    const frame = encodeRateLimitResponseFrame(decision);
    if (frame[0] !== 0 || frame.readUInt32BE(1) !== frame.length - 5) mismatches++;
    const decoded = toJson(RateLimitResponseSchema, fromBinary(RateLimitResponseSchema, frame.subarray(5)));
    const expected = toJson(RateLimitResponseSchema, rateLimitResponseFromDecision(decision));
    if (JSON.stringify(decoded) !== JSON.stringify(expected)) mismatches++;
  }
  t.equal(mismatches, 0);
});
