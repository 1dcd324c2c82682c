// The Lua scripts of the shared limiter. Each runs atomically in Redis, so instances never race on a
// window, and each takes its time from Redis (TIME), so instances with skewed clocks agree.
//
// The window of one operation of one key is a sorted set: one member per place. An answered place is
// scored with the time it counts from, and counts while score + window > now. A place whose request is
// under way is scored IN_FLIGHT + the end of its lease: above every time, so it counts however long the
// request takes, whatever window each instance believes in; its instance renews the lease while the
// request lasts, so the places of an instance that died mid-request come back once the lease ends. The
// answer re-scores the place with the time of the answer.

import { MAX_RATE_LIMIT_COUNT } from '../rate-limit-headers';

/** Milliseconds of Redis time, from TIME's seconds and microseconds. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local IN_FLIGHT = 1e15
-- Written out in full: Lua would pass a number to Redis with 14 significant digits only.
local function score(ms) return string.format('%.0f', ms) end
`;

/**
 * KEYS[1] the window; ARGV limit, windowMs, leaseMs, member.
 * Takes a place when the window has room. Returns { taken (1/0), used, waitMs }: waitMs is when the
 * next place frees (-1 when only an answer still under way can free it).
 */
export const ACQUIRE_SCRIPT = `${NOW}
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', score(now - window))
redis.call('ZREMRANGEBYSCORE', key, score(IN_FLIGHT), score(IN_FLIGHT + now))
local used = redis.call('ZCARD', key)
if used < limit then
  redis.call('ZADD', key, score(IN_FLIGHT + now + lease), ARGV[4])
  redis.call('PEXPIRE', key, window + lease)
  return { 1, used + 1, 0 }
end
local blocking = tonumber(redis.call('ZRANGE', key, used - limit, used - limit, 'WITHSCORES')[2])
if blocking >= IN_FLIGHT then return { 0, used, -1 } end
return { 0, used, math.max(0, blocking + window - now) }
`;

/** KEYS[1] the window; ARGV member, windowMs. The request was answered: its place counts from now. */
export const SETTLE_SCRIPT = `${NOW}
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', score(now), ARGV[1])
end
return 1
`;

/** KEYS[1] the window; ARGV leaseMs, members. Requests still under way keep their places a while longer. */
export const RENEW_SCRIPT = `${NOW}
for i = 2, #ARGV do
  local current = redis.call('ZSCORE', KEYS[1], ARGV[i])
  -- Only places still under way: an answer that came meanwhile has the last word.
  if current and tonumber(current) >= IN_FLIGHT then
    redis.call('ZADD', KEYS[1], 'XX', score(IN_FLIGHT + now + tonumber(ARGV[1])), ARGV[i])
  end
end
return 1
`;

/**
 * KEYS[1] the window; ARGV serverUsed, windowMs, retryAfterMs (-1: none), member prefix, leaseMs, limit.
 * The service counts more than Redis knows of (a client that does not share through Redis uses the
 * key): adds the difference as places, counting from now or, after a 429, until the Retry-After.
 * Never beyond the window's limit (a window holds no more; one answer's header must not make a script
 * that writes millions of members and blocks Redis for every client); a count or limit that is not a
 * whole number from 0 to MAX_COUNT adds nothing. Returns how many were added.
 */
export const OBSERVE_SCRIPT = `${NOW}
local MAX_COUNT = ${MAX_RATE_LIMIT_COUNT}
local function count(text)
  local n = tonumber(text)
  if n == nil or n ~= n or n < 0 or n > MAX_COUNT or n ~= math.floor(n) then return nil end
  return n
end
local key = KEYS[1]
local serverUsed = count(ARGV[1])
local limit = count(ARGV[6])
if serverUsed == nil or limit == nil then return 0 end
local window = tonumber(ARGV[2])
local retryAfter = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', score(now - window))
redis.call('ZREMRANGEBYSCORE', key, score(IN_FLIGHT), score(IN_FLIGHT + now))
local missing = math.min(serverUsed, limit) - redis.call('ZCARD', key)
if missing <= 0 then return 0 end
local stamp = now
if retryAfter >= 0 then stamp = now + retryAfter - window end
for i = 1, missing do
  redis.call('ZADD', key, score(stamp), ARGV[4] .. i)
end
redis.call('PEXPIRE', key, window + tonumber(ARGV[5]))
return missing
`;
