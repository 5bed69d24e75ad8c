/**
 * A reservation step (docs/token-budgets.md) as a Redis script: run by `EVALSHA` with
 * {@link RESERVATION_SCRIPT_SHA1}, by `EVAL` with {@link RESERVATION_SCRIPT} after a `NOSCRIPT` reply. It is
 * src/engine/algorithms/reservation-step.ts in Lua, on Redis's clock (`TIME`, in whole milliseconds), so
 * every daemon on the same Redis shares one record's holds, and a hold nobody settles expires with the
 * record's own keys; test/integration/backends/reservation-script.test.ts holds the two to the same answers.
 *
 * - One key per limit, a hash: `w` the window start (ms), `u` its count, `p` the previous window's, `o` the
 *   last placing order, and one field per hold — `=<request id>` or `#<order>` — valued `<amount>:<expires ms>:<order>`.
 *   One key, so one slot: on a cluster the step runs whole on the node owning it. A token bucket's record
 *   keeps `w` the last step's time (ms) and `u` its tokens not yet refilled × the refill period in ms,
 *   written with `%.17g` (a whole number, in exponent form only beyond 10¹⁷, where `%d` could overflow).
 * - The key lives until its window ends (a bucket: until it is full again) or its last hold expires,
 *   whichever is later, plus the jitter.
 * - Numbers are written with `%d` (Lua 5.1 would write large ones in exponent form); Redis 4+ (HSET with
 *   several fields); `redis.replicate_commands()` for writes after `TIME` on Redis 3.2–4.
 */
import { createHash } from "node:crypto";
import type { ReserveOperation } from "../../engine/algorithms/counter-operation.js";
import { holdIdOf } from "../../engine/algorithms/reservation-step.js";
import { BackendError } from "../../errors.js";

/**
 * KEYS[1] the record; ARGV: mode (`check`, `charge` or `read`), hits, limit, estimate, hold ttl (ms), window
 * (ms), the request's hold id (`=<id>`, or "" for none), jitter (ms), shape (`1`: U is the sliding-window
 * estimate; `b`: a token bucket, window = its refill period; `0`: a fixed window), refill (a bucket's tokens
 * per window). Replies `{ok, U, R, liveHolds,
 * msToWindowEnd, heldOrReleased}`; a read replies `{ownHoldLive, U, R, liveHolds, msToWindowEnd, 0}` and
 * writes nothing.
 */
export const RESERVATION_SCRIPT = `if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local key = KEYS[1]
local mode = ARGV[1]
local hits = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local estimate = tonumber(ARGV[4])
local holdTtl = tonumber(ARGV[5])
local windowMs = tonumber(ARGV[6])
local ownId = ARGV[7]
local jitterMs = tonumber(ARGV[8])
local sliding = ARGV[9] == '1'
local bucket = ARGV[9] == 'b'
local refill = tonumber(ARGV[10])
local windowStart = now - (now % windowMs)
local windowEnd = windowStart + windowMs
local record = redis.call('HGETALL', key)
local used = 0
local previous = 0
local storedWindow = nil
local order = 0
local holds = {}
local held = 0
local live = 0
local expired = {}
for i = 1, #record, 2 do
  local field = record[i]
  local value = record[i + 1]
  if field == 'w' then
    storedWindow = tonumber(value)
  elseif field == 'u' then
    used = tonumber(value) or 0
  elseif field == 'p' then
    previous = tonumber(value) or 0
  elseif field == 'o' then
    order = tonumber(value) or 0
  else
    local a, e, o = string.match(value, '^(%d+):(%d+):(%d+)$')
    a = tonumber(a)
    e = tonumber(e)
    o = tonumber(o)
    if a and e and o and e > now then
      holds[field] = {a, e, o}
      held = held + a
      live = live + 1
    else
      expired[#expired + 1] = field
    end
  end
end
local count
if bucket then
  local at = storedWindow or 0
  if now > at then
    local drained = (now - at) * refill
    if used > drained then used = used - drained else used = 0 end
    windowStart = now
  else
    windowStart = at
  end
  count = math.floor(used / windowMs)
  if count * windowMs < used then count = count + 1 end
else
  if storedWindow ~= windowStart then
    if storedWindow == windowStart - windowMs then previous = used else previous = 0 end
    used = 0
  end
  count = used
  if sliding then
    local product = previous * (windowEnd - now)
    count = count + (product - (product % windowMs)) / windowMs
  end
end
local function resetMs()
  if not bucket then return windowEnd - now end
  if refill <= 0 then return windowMs end
  local r = math.floor(used / refill)
  if r * refill < used then r = r + 1 end
  return r
end
if mode == 'read' then
  local own = 0
  if ownId ~= '' and holds[ownId] then own = 1 end
  return {own, count, held, live, resetMs(), 0}
end
if #expired > 0 then redis.call('HDEL', key, unpack(expired)) end
local ok = 0
local changed = 0
if mode == 'check' then
  local own = nil
  if ownId ~= '' then own = holds[ownId] end
  if own then
    own[2] = now + holdTtl
    redis.call('HSET', key, ownId, string.format('%d:%d:%d', own[1], own[2], own[3]))
    if count + held <= limit then ok = 1 end
  elseif count + held + estimate <= limit then
    order = order + 1
    local id = ownId
    if id == '' then id = '#' .. string.format('%d', order) end
    holds[id] = {estimate, now + holdTtl, order}
    redis.call('HSET', key, id, string.format('%d:%d:%d', estimate, now + holdTtl, order), 'o', string.format('%d', order))
    held = held + estimate
    live = live + 1
    changed = estimate
    ok = 1
  end
else
  if bucket then used = used + hits * windowMs else used = used + hits end
  count = count + hits
  local id = ownId
  if id == '' then
    id = nil
    for field, hold in pairs(holds) do
      if id == nil or hold[3] < holds[id][3] then id = field end
    end
  end
  if id ~= nil and holds[id] then
    changed = holds[id][1]
    held = held - changed
    live = live - 1
    holds[id] = nil
    redis.call('HDEL', key, id)
  end
  if count + held <= limit then ok = 1 end
end
local usedText = string.format('%d', used)
if bucket then usedText = string.format('%.17g', used) end
redis.call('HSET', key, 'w', string.format('%d', windowStart), 'u', usedText, 'p', string.format('%d', previous))
local reset = resetMs()
local expires = now + reset
if sliding then expires = expires + windowMs end
for _, hold in pairs(holds) do
  if hold[2] > expires then expires = hold[2] end
end
redis.call('PEXPIRE', key, expires - now + jitterMs)
return {ok, count, held, live, reset, changed}
`;

/** SHA1 of {@link RESERVATION_SCRIPT} in hex, as `EVALSHA` and `SCRIPT LOAD` name it. */
export const RESERVATION_SCRIPT_SHA1 = createHash("sha1").update(RESERVATION_SCRIPT).digest("hex");

/** What follows the SHA1 (or the script) in `EVALSHA`/`EVAL` for `operation`: numkeys, the key, ARGV. */
export function reservationScriptArgs(
  operation: ReserveOperation,
  reading: boolean,
): [
  numKeys: string,
  key: string,
  mode: string,
  hits: string,
  limit: string,
  estimate: string,
  holdTtlMs: string,
  windowMs: string,
  holdId: string,
  jitterMs: string,
  shape: string,
  refill: string,
] {
  const mode = reading ? "read" : operation.charge ? "charge" : "check";
  return [
    "1",
    operation.key,
    mode,
    String(operation.hits),
    String(operation.limit),
    String(operation.estimate),
    String(operation.holdTtlMs),
    String(operation.windowSeconds * 1000),
    holdIdOf(operation.requestId) ?? "",
    String(operation.jitterSeconds * 1000),
    operation.bucket ? "b" : operation.sliding ? "1" : "0",
    String(operation.refill),
  ];
}

/**
 * The script's six integers (from ioredis or the RESP reader). Anything else means the script that ran is
 * not this one: a `BackendError`.
 */
export function parseReservationReply(reply: unknown): number[] {
  if (Array.isArray(reply) && reply.length === 6) {
    const values = reply.map((value) => (typeof value === "number" ? value : Number.NaN));
    if (values.every((value) => Number.isSafeInteger(value))) return values;
  }
  const text = JSON.stringify(reply)?.slice(0, 200);
  throw new BackendError(`redis: unexpected reply to the reservation script: ${text}`, {
    clientMessage: "redis: unexpected reply to the reservation script",
  });
}
