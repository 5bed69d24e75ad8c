/**
 * The token bucket (GCRA) as a Redis script: run by `EVALSHA` with {@link TOKEN_BUCKET_SCRIPT_SHA1}, by
 * `EVAL` with {@link TOKEN_BUCKET_SCRIPT} after a `NOSCRIPT` reply. It is the in-process arithmetic of
 * src/engine/algorithms/gcra-step.ts line for line, in the same order of double operations (Lua 5.1 numbers
 * are IEEE doubles), so both stores give exactly the same answers for the same clock; the test
 * test/integration/backends/token-bucket-script.test.ts holds them to it.
 *
 * - Clock: Redis `TIME` (whole microseconds), so replicas whose clocks disagree share one bucket's time.
 *   Redis 5+ replicates a script's effects, which allows writes after `TIME`; `redis.replicate_commands()`
 *   asks Redis 3.2–4 for the same.
 * - Stored value: the theoretical arrival time as `"<whole µs>:<fraction>"`, both written with `%.17g`,
 *   which reads back as the same double; the reply's debt is text for the same reason (Redis turns a Lua
 *   number into an integer reply, dropping the fraction). A stored value that does not parse counts as
 *   absent and is replaced by the next allowed request.
 * - Several keys in one call must share a Redis: on a cluster (where they must also share a slot) each
 *   bucket is a call of its own, with one key, so it runs on the node owning that key's slot.
 */
import { createHash } from "node:crypto";
import type { BucketOperation } from "../../engine/algorithms/counter-operation.js";
import { TOKEN_TOLERANCE } from "../../engine/algorithms/gcra-step.js";
import { BackendError } from "../../errors.js";

/**
 * KEYS[1…n] the buckets; ARGV three per bucket, in order: hits, T (µs between tokens, as JS `String()`
 * writes the double), burst. One `TIME` for all of them, each step as if taken alone in key order (a key
 * named twice sees its first step). Replies `{allowed₁ (1|0), debt₁ µs ("%.17g" text), …, allowedₙ,
 * debtₙ, now µs (TIME)}`: for one bucket `{allowed, debt, now}`. A request's buckets share one call, so
 * Redis pays the script's call and `TIME` once, not once per bucket.
 */
export const TOKEN_BUCKET_SCRIPT = `if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local reply = {}
for i = 1, #KEYS do
  local hits = tonumber(ARGV[3 * i - 2])
  local interval = tonumber(ARGV[3 * i - 1])
  local burst = tonumber(ARGV[3 * i])
  local whole = now
  local fraction = 0
  local stored = redis.call('GET', KEYS[i])
  if stored then
    local at = string.find(stored, ':', 1, true)
    if at then
      local w = tonumber(string.sub(stored, 1, at - 1))
      local f = tonumber(string.sub(stored, at + 1))
      if w and f and (w > now or (w == now and f > 0)) then
        whole = w
        fraction = f
      end
    end
  end
  local step = hits * interval
  local stepWhole = math.floor(step)
  local newWhole = whole + stepWhole
  local newFraction = fraction + (step - stepWhole)
  if newFraction >= 1 then
    newFraction = newFraction - 1
    newWhole = newWhole + 1
  end
  local debt = newWhole - now + newFraction
  if debt <= burst * interval + interval * ${TOKEN_TOLERANCE} then
    if hits > 0 then
      redis.call('SET', KEYS[i], string.format('%d:%.17g', newWhole, newFraction), 'PX', math.ceil(debt / 1000) + 1)
    end
    reply[2 * i - 1] = 1
    reply[2 * i] = string.format('%.17g', debt)
  else
    reply[2 * i - 1] = 0
    reply[2 * i] = string.format('%.17g', whole - now + fraction)
  end
end
reply[2 * #KEYS + 1] = now
return reply
`;

/** SHA1 of {@link TOKEN_BUCKET_SCRIPT} in hex, as `EVALSHA` and `SCRIPT LOAD` name it. */
export const TOKEN_BUCKET_SCRIPT_SHA1 = createHash("sha1").update(TOKEN_BUCKET_SCRIPT).digest("hex");

/**
 * What follows the SHA1 (or the script) in `EVALSHA`/`EVAL` for `operation`: numkeys, the key, hits, T,
 * burst. A read is the same call with `hits` 0: nothing is taken or stored.
 */
export function tokenBucketScriptArgs(
  operation: BucketOperation,
  hits: number = operation.hits,
): [numKeys: string, key: string, hits: string, emissionIntervalUs: string, burst: string] {
  return ["1", operation.key, String(hits), String(operation.emissionIntervalUs), String(operation.burst)];
}

/**
 * What follows the SHA1 (or the script) for several buckets in one call: numkeys, every key, then hits, T
 * and burst per bucket. `hitsOf` gives each bucket's hits (0 for a read).
 */
export function tokenBucketsScriptArgs(
  operations: readonly BucketOperation[],
  hitsOf: (operation: BucketOperation) => number,
): string[] {
  const args = [String(operations.length)];
  for (const operation of operations) args.push(operation.key);
  for (const operation of operations) {
    args.push(String(hitsOf(operation)), String(operation.emissionIntervalUs), String(operation.burst));
  }
  return args;
}

/** The script's reply, parsed. A store answers `[allowed, debtUs]` (for a read, `[1, debtUs]`). */
export interface TokenBucketReply {
  readonly allowed: 0 | 1;
  /** Theoretical arrival time − now: after the request when allowed, before it when refused. */
  readonly debtUs: number;
  /** The Redis clock the script used (`TIME`), in microseconds. */
  readonly nowUs: number;
}

/**
 * Parses the script's reply (integers and text, from ioredis or the RESP reader; Buffers accepted).
 * Anything else means the script that ran is not this one: a `BackendError`.
 */
export function parseTokenBucketReply(reply: unknown): TokenBucketReply {
  if (Array.isArray(reply) && reply.length === 3) {
    const [allowed, debtUs, nowUs] = reply.map(numberOf);
    if ((allowed === 0 || allowed === 1) && debtUs! >= 0 && Number.isSafeInteger(nowUs)) {
      return { allowed, debtUs: debtUs!, nowUs: nowUs! };
    }
  }
  const text = JSON.stringify(reply)?.slice(0, 200);
  throw new BackendError(`redis: unexpected reply to the token bucket script: ${text}`, {
    clientMessage: "redis: unexpected reply to the token bucket script",
  });
}

/** The reply for `count` buckets: one `[allowed, debtUs]` per bucket, in order. */
export function parseTokenBucketReplies(reply: unknown, count: number): TokenBucketReply[] {
  if (!Array.isArray(reply) || reply.length !== 2 * count + 1) {
    const text = JSON.stringify(reply)?.slice(0, 200);
    throw new BackendError(`redis: unexpected reply to the token bucket script: ${text}`, {
      clientMessage: "redis: unexpected reply to the token bucket script",
    });
  }
  const steps: TokenBucketReply[] = [];
  for (let i = 0; i < count; i++) {
    steps.push(parseTokenBucketReply([reply[2 * i], reply[2 * i + 1], reply[2 * count]]));
  }
  return steps;
}

function numberOf(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" || Buffer.isBuffer(value))
    return value.length > 0 ? Number(String(value)) : Number.NaN;
  return Number.NaN;
}
