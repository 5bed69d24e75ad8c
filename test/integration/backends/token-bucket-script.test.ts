// The token bucket's Redis script against a real redis-server, through the daemon's own RESP connection.
// The script reads its clock with TIME and reports it; every answer is compared, exactly, with the
// in-process GCRA step (applyBucketOperation) evaluated at that same microsecond, over random sequences.
// Time is not pinned: the clock moves by itself between round trips (a few hundred µs), and emission
// intervals of 50 µs … 1 ms make that motion refill tokens, so allowed, refused and exactly fitting
// requests all occur.
import t, { type Test } from "tap";
import { RespConnection } from "../../../src/backends/redis/resp-connection.js";
import {
  parseTokenBucketReply,
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_SCRIPT_SHA1,
  tokenBucketScriptArgs,
} from "../../../src/backends/redis/token-bucket-script.js";
import { applyBucketOperation, type CounterCells } from "../../../src/engine/algorithms/apply-operation.js";
import type { BucketOperation } from "../../../src/engine/algorithms/counter-operation.js";
import { tokenBucketOperation } from "../../../src/engine/algorithms/token-bucket.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { between, limitOf, seededRandom } from "../../unit/engine/algorithms/algorithm-fixtures.js";

async function connectTo(t: Test, port: number): Promise<RespConnection> {
  const connection = new RespConnection({
    locate: async () => ({ host: "127.0.0.1", port }),
    tls: undefined,
    username: undefined,
    password: undefined,
    timeoutMs: 5000,
    reconnect: false,
  });
  await connection.open();
  t.teardown(() => connection.close());
  return connection;
}

function bucket(rate: number, unit: string, burst: number, key: string): BucketOperation {
  return { ...tokenBucketOperation(limitOf("token_bucket", rate, unit, { burst }), "", 0, 1)!, key };
}

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "the script's SHA1 is Redis's; EVALSHA answers NOSCRIPT until it is loaded or run by EVAL",
    async (t) => {
      const server = await startRedis(t);
      const redis = await connectTo(t, server.port);
      const operation = bucket(10, "second", 10, "b_sha");
      await t.rejects(
        redis.command(["EVALSHA", TOKEN_BUCKET_SCRIPT_SHA1, ...tokenBucketScriptArgs(operation)]),
        /^NOSCRIPT /,
      );
      const first = parseTokenBucketReply(
        await redis.command(["EVAL", TOKEN_BUCKET_SCRIPT, ...tokenBucketScriptArgs(operation)]),
      );
      t.match(first, { allowed: 1, debtUs: 100_000 });
      t.equal(await redis.command(["SCRIPT", "LOAD", TOKEN_BUCKET_SCRIPT]), TOKEN_BUCKET_SCRIPT_SHA1);
      const second = parseTokenBucketReply(
        await redis.command(["EVALSHA", TOKEN_BUCKET_SCRIPT_SHA1, ...tokenBucketScriptArgs(operation)]),
      );
      t.equal(second.allowed, 1);
      t.ok(second.nowUs >= first.nowUs, "TIME moves forward");
    },
  );

  t.test("one allowed hit stores `<whole µs>:<fraction>` with PX = ceil(debt / 1000) + 1", async (t) => {
    const server = await startRedis(t);
    const redis = await connectTo(t, server.port);
    // 7 per minute: T = 8 571 428.57142857 µs; 2 hits leave a fraction that must survive the text round trip.
    const operation = bucket(7, "minute", 5, "b_stored");
    const reply = parseTokenBucketReply(
      await redis.command(["EVAL", TOKEN_BUCKET_SCRIPT, ...tokenBucketScriptArgs(operation, 2)]),
    );
    const cells: CounterCells = new Map();
    t.strictSame(
      [reply.allowed, reply.debtUs],
      applyBucketOperation(cells, { ...operation, hits: 2 }, reply.nowUs),
    );
    const cell = cells.get("b_stored")!;
    const [whole, fraction] = String(await redis.command(["GET", "b_stored"]))
      .split(":")
      .map(Number);
    t.strictSame([whole, fraction], [cell.value, cell.fractionUs]);
    t.strictSame([whole! - reply.nowUs, fraction], [17_142_857, 0.1428571417927742]);
    // PX = ceil(17 142 857.14 µs / 1000) + 1 = 17 144 ms, counted on Redis's cached millisecond clock, which
    // is not TIME: CI saw it 0.24 ms ahead of TIME, and a descheduled redis-server can leave it behind. The
    // window below allows a 1 ms skew either way and still refuses a PX in seconds or one taken from the
    // TAT rather than from the debt.
    const expiresAtMs = Number(await redis.command(["PEXPIRETIME", "b_stored"]));
    const pxMs = expiresAtMs - reply.nowUs / 1000;
    t.ok(pxMs > 17_142 && pxMs <= 17_145, `expiry ${pxMs} ms after TIME`);
    t.equal(Number(await redis.command(["PTTL", "b_stored"])) <= 17_144, true, "PTTL never above PX");
  });

  t.test(
    "hits 0 reads the debt and stores nothing; a stored value that does not parse counts as absent",
    async (t) => {
      const server = await startRedis(t);
      const redis = await connectTo(t, server.port);
      const operation = bucket(10, "second", 10, "b_read");
      const read = parseTokenBucketReply(
        await redis.command(["EVAL", TOKEN_BUCKET_SCRIPT, ...tokenBucketScriptArgs(operation, 0)]),
      );
      t.match(read, { allowed: 1, debtUs: 0 });
      t.equal(await redis.command(["EXISTS", "b_read"]), 0);
      await redis.command(["SET", "b_read", "garbage"]);
      const taken = parseTokenBucketReply(
        await redis.command(["EVAL", TOKEN_BUCKET_SCRIPT, ...tokenBucketScriptArgs(operation, 3)]),
      );
      t.match(taken, { allowed: 1, debtUs: 300_000 });
      t.equal(await redis.command(["GET", "b_read"]), `${taken.nowUs + 300_000}:0`);
    },
  );

  t.test(
    "12 random sequences of 250 requests: every answer equals the in-process step at the script's TIME",
    async (t) => {
      const server = await startRedis(t);
      const redis = await connectTo(t, server.port);
      await redis.command(["SCRIPT", "LOAD", TOKEN_BUCKET_SCRIPT]);
      const rates = [1000, 997, 3000, 7000, 20_000, 30_000];
      let allowed = 0;
      let refused = 0;
      let lastToken = 0;
      for (let seed = 1; seed <= 12; seed++) {
        const random = seededRandom(seed);
        const rate = rates[between(random, 0, rates.length - 1)]!;
        const burst = between(random, 1, 12);
        const operation = bucket(rate, "second", burst, `b_random_${seed}`);
        const cells: CounterCells = new Map();
        const mismatches: string[] = [];
        for (let step = 0; step < 250; step++) {
          const hits = random() < 0.6 ? 1 : between(random, 0, burst + 1);
          const reply = parseTokenBucketReply(
            await redis.command([
              "EVALSHA",
              TOKEN_BUCKET_SCRIPT_SHA1,
              ...tokenBucketScriptArgs(operation, hits),
            ]),
          );
          const [localAllowed, localDebtUs] = applyBucketOperation(
            cells,
            { ...operation, hits },
            reply.nowUs,
          );
          if (reply.allowed !== localAllowed || reply.debtUs !== localDebtUs) {
            mismatches.push(
              `step ${step} at ${reply.nowUs}: redis ${reply.allowed} ${reply.debtUs}, in-process ${localAllowed} ${localDebtUs}`,
            );
          }
          if (reply.allowed) allowed++;
          else refused++;
          if (reply.allowed && hits > 0 && reply.debtUs > (burst - 1) * operation.emissionIntervalUs)
            lastToken++;
        }
        t.strictSame(
          mismatches,
          [],
          `seed ${seed}: ${rate}/s, burst ${burst}, T = ${operation.emissionIntervalUs} µs`,
        );
      }
      t.ok(allowed > 300 && refused > 300, `${allowed} allowed, ${refused} refused`);
      t.ok(lastToken > 50, `${lastToken} requests took the bucket's last token`);
    },
  );
}
