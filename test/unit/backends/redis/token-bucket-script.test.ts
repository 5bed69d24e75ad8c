// The token bucket script's arguments and the parsing of its reply (the script itself runs against a real
// Redis in test/integration/backends/token-bucket-script.test.ts).
import { createHash } from "node:crypto";
import t from "tap";
import {
  parseTokenBucketReply,
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_SCRIPT_SHA1,
  tokenBucketScriptArgs,
} from "../../../../src/backends/redis/token-bucket-script.js";
import type { BucketOperation } from "../../../../src/engine/algorithms/counter-operation.js";

const OPERATION: BucketOperation = {
  kind: "bucket",
  key: "d_k_v_gcra333333.3333333333",
  hits: 2,
  emissionIntervalUs: 1_000_000 / 3,
  burst: 5,
  perSecond: true,
};

t.test("arguments: numkeys 1, the key, hits, T as JS writes it, burst; a read passes hits 0", async (t) => {
  t.strictSame(tokenBucketScriptArgs(OPERATION), ["1", OPERATION.key, "2", "333333.3333333333", "5"]);
  t.strictSame(tokenBucketScriptArgs(OPERATION, 0), ["1", OPERATION.key, "0", "333333.3333333333", "5"]);
});

t.test("the SHA1 is the script's, 40 hex digits", async (t) => {
  t.equal(TOKEN_BUCKET_SCRIPT_SHA1, createHash("sha1").update(TOKEN_BUCKET_SCRIPT).digest("hex"));
  t.match(TOKEN_BUCKET_SCRIPT_SHA1, /^[0-9a-f]{40}$/);
});

t.test("replies from the RESP reader and from ioredis (text or Buffer) parse alike", async (t) => {
  const expected = { allowed: 1, debtUs: 666666.6666666666, nowUs: 1_779_962_400_123_457 };
  t.strictSame(parseTokenBucketReply([1, "666666.66666666663", 1_779_962_400_123_457]), expected);
  t.strictSame(
    parseTokenBucketReply([1, Buffer.from("666666.66666666663"), 1_779_962_400_123_457]),
    expected,
  );
  t.strictSame(parseTokenBucketReply([0, "0", 5]), { allowed: 0, debtUs: 0, nowUs: 5 });
});

t.test("anything else is a BackendError naming the reply", async (t) => {
  const cases: unknown[] = [
    null,
    "OK",
    [1, "5"],
    [2, "5", 1],
    [1, "", 1],
    [1, "-3", 1],
    [1, "x", 1],
    [1, "5", 1.5],
  ];
  for (const reply of cases) {
    t.throws(
      () => parseTokenBucketReply(reply),
      { name: "BackendError", clientMessage: "redis: unexpected reply to the token bucket script" },
      JSON.stringify(reply),
    );
  }
  t.throws(() => parseTokenBucketReply([2, "5", 1]), {
    name: "BackendError",
    message: 'redis: unexpected reply to the token bucket script: [2,"5",1]',
  });
});
