// Each kind of counter operation in Redis (src/backends/redis/operation-shapes.ts): its commands when
// counting and when reading, which replies give its values, and the command count the trace span and
// REDIS_PIPELINE_LIMIT use, which must agree with the commands sent.
import t from "tap";
import {
  commandCountOf,
  operationCommandsOf,
  resultsOf,
} from "../../../../src/backends/redis/operation-shapes.js";
import {
  type BucketOperation,
  type CounterOperation,
  type FixedOperation,
  resultCountOf,
  type SlidingOperation,
} from "../../../../src/engine/algorithms/counter-operation.js";

const reference: FixedOperation = { key: "r_60", hits: 1, ttlSeconds: 61, perSecond: false };
const fixed: FixedOperation = { kind: "fixed", key: "f_60_x2", hits: 2, ttlSeconds: 120, perSecond: true };
const sliding: SlidingOperation = {
  kind: "sliding",
  key: "s_120",
  previousKey: "s_60",
  hits: 3,
  ttlSeconds: 121,
  perSecond: false,
};
const bucket: BucketOperation = {
  kind: "bucket",
  key: "bgcra100000",
  hits: 4,
  emissionIntervalUs: 100_000,
  burst: 10,
  perSecond: false,
};

t.test(
  "counting: the reference's INCRBY + EXPIRE, a sliding window's GET of the previous window",
  async (t) => {
    t.strictSame(operationCommandsOf(reference, false), {
      commands: [
        ["INCRBY", "r_60", "1"],
        ["EXPIRE", "r_60", "61"],
      ],
      replyOf: [0],
      bucket: undefined,
    });
    t.strictSame(operationCommandsOf(fixed, false).commands, [
      ["INCRBY", "f_60_x2", "2"],
      ["EXPIRE", "f_60_x2", "120"],
    ]);
    t.strictSame(operationCommandsOf(sliding, false), {
      commands: [
        ["INCRBY", "s_120", "3"],
        ["EXPIRE", "s_120", "121"],
        ["GET", "s_60"],
      ],
      replyOf: [0, 2],
      bucket: undefined,
    });
    t.strictSame(operationCommandsOf(bucket, false), { commands: [], replyOf: [], bucket });
  },
);

t.test("reading: a GET per counter, the bucket's script step", async (t) => {
  t.strictSame(operationCommandsOf(reference, true), {
    commands: [["GET", "r_60"]],
    replyOf: [0],
    bucket: undefined,
  });
  t.strictSame(operationCommandsOf(sliding, true), {
    commands: [
      ["GET", "s_120"],
      ["GET", "s_60"],
    ],
    replyOf: [0, 1],
    bucket: undefined,
  });
  t.strictSame(operationCommandsOf(bucket, true), { commands: [], replyOf: [], bucket });
});

t.test("every kind: one reply per value, and the command count matches the commands sent", async (t) => {
  const all: CounterOperation[] = [reference, fixed, sliding, bucket];
  for (const operation of all) {
    const counting = operationCommandsOf(operation, false);
    const reading = operationCommandsOf(operation, true);
    const scriptCalls = counting.bucket === undefined ? 0 : 1;
    t.equal(commandCountOf(operation), counting.commands.length + scriptCalls, `${operation.key}: commands`);
    const valuesFromScript = counting.bucket === undefined ? 0 : 2;
    t.equal(
      counting.replyOf.length + valuesFromScript,
      resultCountOf(operation),
      `${operation.key}: counted`,
    );
    t.equal(reading.replyOf.length + valuesFromScript, resultCountOf(operation), `${operation.key}: read`);
  }
  t.equal(resultsOf(all), 6, "1 + 1 + 2 + 2");
});
