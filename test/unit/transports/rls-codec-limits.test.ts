// The ShouldRateLimit decoder enforces the request limits while decoding — on the hand-written path and,
// through a scan of the bytes, on messages it leaves to protobuf-es — with the engine's exact texts.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import t from "tap";
import type { RequestLimits } from "../../../src/engine/request-limits.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import { RateLimitRequestSchema } from "../../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { decodeRateLimitRequest } from "../../../src/transports/grpc/rls-codec.js";

const LIMITS: RequestLimits = { maxDescriptors: 3, maxEntries: 2, maxEntryBytes: 6 };

type Entries = [string, string][];
const encode = (domain: string, descriptors: Entries[]) =>
  Buffer.from(
    toBinary(
      RateLimitRequestSchema,
      create(RateLimitRequestSchema, {
        domain,
        descriptors: descriptors.map((entries) => ({
          entries: entries.map(([key, value]) => ({ key, value })),
        })),
      }),
    ),
  );
/** Field 15, varint 0: unknown to RateLimitRequest, so the hand-written decoder leaves the message to protobuf-es. */
const UNKNOWN_FIELD = Buffer.from([0x78, 0x00]);
/** Field 14 as a group holding field 1 = 7, unknown: protobuf-es skips it. */
const UNKNOWN_GROUP = Buffer.from([0x73, 0x08, 0x07, 0x74]);
/** A length-delimited field 1 of a declared 100 bytes with none following: truncated. */
const TRUNCATED = Buffer.from([0x0a, 0x64]);

function outcome(bytes: Buffer): string {
  try {
    decodeRateLimitRequest(bytes, LIMITS);
    return "decoded";
  } catch (error) {
    return error instanceof InvalidArgumentError
      ? `limit: ${error.message}`
      : `other: ${(error as Error).name}`;
  }
}

const CASES: [string, Buffer, string][] = [
  [
    "4 descriptors",
    encode("d", [[["k", "v"]], [["k", "v"]], [["k", "v"]], [["k", "v"]]]),
    "rate limit request has more than 3 descriptors",
  ],
  [
    "3 entries in descriptor 1",
    encode("d", [
      [["k", "v"]],
      [
        ["a", ""],
        ["b", ""],
        ["c", ""],
      ],
    ]),
    "descriptor 1 has more than 2 entries",
  ],
  [
    "7-byte key",
    encode("d", [
      [["k", "v"]],
      [
        ["k", "v"],
        ["kkkkkkk", "v"],
      ],
    ]),
    "descriptor 1 entry 1: key is longer than 6 bytes",
  ],
  ["7-byte value", encode("d", [[["k", "vvvvvvv"]]]), "descriptor 0 entry 0: value is longer than 6 bytes"],
  [
    "7-byte UTF-8 value",
    encode("d", [[["k", "värden"]]]),
    "descriptor 0 entry 0: value is longer than 6 bytes",
  ],
  ["7-byte domain", encode("domains", [[["k", "v"]]]), "rate limit domain is longer than 6 bytes"],
];

t.test("each limit refused with the engine's text, on the fast path and on protobuf-es's", async (t) => {
  for (const [name, bytes, message] of CASES) {
    t.equal(outcome(bytes), `limit: ${message}`, name);
    t.equal(
      outcome(Buffer.concat([UNKNOWN_FIELD, bytes])),
      `limit: ${message}`,
      `${name}, unknown field first`,
    );
    t.equal(
      outcome(Buffer.concat([UNKNOWN_GROUP, bytes])),
      `limit: ${message}`,
      `${name}, unknown group first`,
    );
  }
});

t.test("requests at every limit decode exactly as protobuf-es decodes them, on both paths", async (t) => {
  const bytes = encode("domain", [
    [["k", "v"]],
    [
      ["kkkkkk", "vvvvvv"],
      ["路路", ""],
    ],
    [],
  ]);
  for (const variant of [
    bytes,
    Buffer.concat([UNKNOWN_FIELD, bytes]),
    Buffer.concat([UNKNOWN_GROUP, bytes]),
  ]) {
    const decoded = decodeRateLimitRequest(variant, LIMITS);
    const expected = fromBinary(RateLimitRequestSchema, variant);
    t.equal(decoded.domain, expected.domain);
    t.strictSame(
      decoded.descriptors.map((d) => d.entries.map((e) => [e.key, e.value])),
      expected.descriptors.map((d) => d.entries.map((e) => [e.key, e.value])),
    );
  }
});

t.test("the excess is refused where it is read: bytes after it are never looked at", async (t) => {
  const four = encode("d", [[["k", "v"]], [["k", "v"]], [["k", "v"]], [["k", "v"]]]);
  t.equal(outcome(Buffer.concat([four, TRUNCATED])), "limit: rate limit request has more than 3 descriptors");
  t.equal(
    outcome(Buffer.concat([UNKNOWN_FIELD, four, TRUNCATED])),
    "limit: rate limit request has more than 3 descriptors",
  );
  t.match(
    outcome(Buffer.concat([encode("d", [[["k", "v"]]]), TRUNCATED])),
    /^other: /,
    "within the limits: protobuf-es's error",
  );
});

t.test("malformed bytes the scan cannot follow are left to protobuf-es", async (t) => {
  const stray = Buffer.from([0x7c]);
  const four = encode("d", [[["k", "v"]], [["k", "v"]], [["k", "v"]], [["k", "v"]]]);
  t.match(outcome(Buffer.concat([stray, four])), /^other: /, "a stray end-group tag");
  t.match(outcome(Buffer.concat([Buffer.from([0x7f]), four])), /^other: /, "wire type 7");
});

t.test("without limits given, the defaults apply", async (t) => {
  const many = encode(
    "d",
    Array.from({ length: 257 }, () => [["k", "v"]] as Entries),
  );
  t.throws(() => decodeRateLimitRequest(many), {
    message: "rate limit request has more than 256 descriptors",
  });
  t.equal(
    decodeRateLimitRequest(encode("d", many.length ? [[["k", "v".repeat(8192)]]] : [])).descriptors.length,
    1,
  );
});
