// Sliding-window and token-bucket requests on the wire (single and sentinel deployments): the commands each
// operation sends, and how their replies become the store's flat values.
import t from "tap";
import { encodeIncrements } from "../../../../src/backends/redis/resp-commands.js";
import {
  encodeOperations,
  encodeReleases,
  encodeScriptRetries,
  fillScriptRetries,
  valuesOfReplies,
} from "../../../../src/backends/redis/resp-operations.js";
import { RespError } from "../../../../src/backends/redis/resp-reply-reader.js";
import {
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_SCRIPT_SHA1,
} from "../../../../src/backends/redis/token-bucket-script.js";
import type {
  BucketOperation,
  FixedOperation,
  SlidingOperation,
} from "../../../../src/engine/algorithms/counter-operation.js";

const fixed: FixedOperation = { key: "f", hits: 2, ttlSeconds: 60, perSecond: false };
const sliding: SlidingOperation = {
  kind: "sliding",
  key: "s_2",
  previousKey: "s_1",
  hits: 3,
  ttlSeconds: 120,
  perSecond: false,
};
const bucket: BucketOperation = {
  kind: "bucket",
  key: "b",
  hits: 4,
  emissionIntervalUs: 100_000,
  burst: 10,
  perSecond: false,
};
const evalsha = (hits: string) =>
  `*7\r\n$7\r\nEVALSHA\r\n$40\r\n${TOKEN_BUCKET_SCRIPT_SHA1}\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n${hits}\r\n$6\r\n100000\r\n$2\r\n10\r\n`;

t.test(
  "counting: fixed as the reference, sliding adds a GET of the previous window, bucket EVALSHA",
  async (t) => {
    const { commands, replies } = encodeOperations([fixed, sliding, bucket], false);
    t.equal(replies, 2 + 3 + 1);
    t.equal(
      commands,
      encodeIncrements([fixed]) +
        "*3\r\n$6\r\nINCRBY\r\n$3\r\ns_2\r\n$1\r\n3\r\n*3\r\n$6\r\nEXPIRE\r\n$3\r\ns_2\r\n$3\r\n120\r\n" +
        "*2\r\n$3\r\nGET\r\n$3\r\ns_1\r\n" +
        evalsha("4"),
    );
  },
);

t.test("reading: GET per counter, the script with 0 hits for a bucket", async (t) => {
  const { commands, replies } = encodeOperations([fixed, sliding, bucket], true);
  t.equal(replies, 1 + 2 + 1);
  t.equal(
    commands,
    "*2\r\n$3\r\nGET\r\n$1\r\nf\r\n*2\r\n$3\r\nGET\r\n$3\r\ns_2\r\n*2\r\n$3\r\nGET\r\n$3\r\ns_1\r\n" +
      evalsha("0"),
  );
});

t.test("replies become resultCountOf values per operation, in order", async (t) => {
  const replies = [5, 1, 7, 1, "4", [1, "400000", 1_700_000_000_000_000]];
  t.strictSame(valuesOfReplies([fixed, sliding, bucket], replies, false), {
    values: [5, 7, 4, 1, 400_000],
    unknownScript: [],
    offsets: [0, 1, 3],
  });
  t.strictSame(valuesOfReplies([sliding, bucket], [3, null, [0, "250", 1]], true).values, [3, 0, 1, 250]);
  t.strictSame(valuesOfReplies([bucket], [[0, "250", 1]], false).values, [0, 250], "refused");
});

t.test("every bucket of a request goes in one EVALSHA, after the other commands", async (t) => {
  const other: BucketOperation = { ...bucket, key: "b2", hits: 1, burst: 3 };
  const { commands, replies } = encodeOperations([bucket, fixed, other], false);
  t.equal(replies, 2 + 1);
  t.equal(
    commands,
    `${encodeIncrements([fixed])}*11\r\n$7\r\nEVALSHA\r\n$40\r\n${TOKEN_BUCKET_SCRIPT_SHA1}\r\n$1\r\n2\r\n` +
      "$1\r\nb\r\n$2\r\nb2\r\n$1\r\n4\r\n$6\r\n100000\r\n$2\r\n10\r\n$1\r\n1\r\n$6\r\n100000\r\n$1\r\n3\r\n",
  );
  const values = valuesOfReplies([bucket, fixed, other], [3, 1, [1, "400000", 0, "250", 7]], false);
  t.strictSame(values, { values: [1, 400_000, 3, 0, 250], unknownScript: [], offsets: [0, 2, 3] });
});

t.test(
  "a NOSCRIPT reply marks the buckets for EVAL; only the buckets are sent again, in one call",
  async (t) => {
    const other: BucketOperation = { ...bucket, key: "b2" };
    const noscript = new RespError("NOSCRIPT No matching script. Please use EVAL.");
    const result = valuesOfReplies([bucket, fixed, other], [3, 1, noscript], false);
    t.strictSame(result.unknownScript, [0, 2]);
    const retries = encodeScriptRetries([bucket, fixed, other], result.unknownScript, false);
    t.equal(retries.replies, 1);
    t.equal(retries.commands.match(/\*11\r\n\$4\r\nEVAL\r\n/g)?.length, 1);
    t.notMatch(retries.commands, /INCRBY|EVALSHA/);
    t.ok(retries.commands.includes(TOKEN_BUCKET_SCRIPT));
    fillScriptRetries(result, [[1, "400000", 1, "800000.5", 1]], false);
    t.strictSame(result.values, [1, 400_000, 3, 1, 800_000.5]);
  },
);

t.test("any other error reply, or a counter that is not a number, fails the request", async (t) => {
  t.throws(() => valuesOfReplies([fixed, bucket], [new RespError("WRONGTYPE x"), 1, [1, "0", 1]], false), {
    message: "WRONGTYPE x",
    clientReason: "WRONGTYPE x",
  });
  t.throws(() => valuesOfReplies([sliding], [1, 1, "abc"], false), {
    message: 'unexpected reply "abc" for a counter',
  });
  const result = valuesOfReplies([bucket], [new RespError("NOSCRIPT none")], false);
  t.throws(() => fillScriptRetries(result, [new RespError("ERR script failed")], false), {
    message: "ERR script failed",
  });
});

t.test(
  "a release is DECRBY key hits, with EXPIRE so that a counter gone meanwhile does not stay",
  async (t) => {
    t.equal(
      encodeReleases([sliding]),
      "*3\r\n$6\r\nDECRBY\r\n$3\r\ns_2\r\n$1\r\n3\r\n*3\r\n$6\r\nEXPIRE\r\n$3\r\ns_2\r\n$3\r\n120\r\n",
    );
  },
);
