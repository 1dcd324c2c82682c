// The Lua scripts of the shared limiter. Each runs atomically in Redis, so instances never race on a
// window, and each takes its time from Redis (TIME), so instances with skewed clocks agree.
//
// The window of one operation of one key is a sorted set: one member per place, scored with the time
// it counts from. A place whose request is under way is scored in the future (now + hold, renewed while
// the request lasts) so it keeps its place however long the request takes, and comes back soon after
// an instance that died mid-request stops renewing it; the answer re-scores it with the time of the answer.
// A place counts while score + window > now.

/** Milliseconds of Redis time, from TIME's seconds and microseconds. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * KEYS[1] the window; ARGV limit, windowMs, holdMs, member.
 * Takes a place when the window has room. Returns { taken (1/0), used, waitMs }: waitMs is when the
 * next place frees (-1 when only an answer still under way can free it).
 */
export const ACQUIRE_SCRIPT = `${NOW}
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local hold = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
if used < limit then
  redis.call('ZADD', key, now + hold, ARGV[4])
  redis.call('PEXPIRE', key, window + hold)
  return { 1, used + 1, 0 }
end
local blocking = redis.call('ZRANGE', key, used - limit, used - limit, 'WITHSCORES')
local score = tonumber(blocking[2])
if score > now + window then return { 0, used, -1 } end
return { 0, used, math.max(0, score + window - now) }
`;

/** KEYS[1] the window; ARGV member. The request was answered: its place counts from now. */
export const SETTLE_SCRIPT = `${NOW}
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
end
return 1
`;

/** KEYS[1] the window; ARGV holdMs, members. Requests still under way keep their places a while longer. */
export const RENEW_SCRIPT = `${NOW}
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
  end
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
`;

/**
 * KEYS[1] the window; ARGV serverUsed, windowMs, retryAfterMs (-1: none), member prefix, holdMs.
 * The service counts more than Redis knows of (a client that does not share through Redis uses the
 * key): adds the difference as places, counting from now or, after a 429, until the Retry-After.
 * Returns how many were added.
 */
export const OBSERVE_SCRIPT = `${NOW}
local key = KEYS[1]
local serverUsed = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local retryAfter = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local missing = serverUsed - redis.call('ZCARD', key)
if missing <= 0 then return 0 end
local stamp = now
if retryAfter >= 0 then stamp = now + retryAfter - window end
for i = 1, missing do
  redis.call('ZADD', key, stamp, ARGV[4] .. i)
end
redis.call('PEXPIRE', key, window + tonumber(ARGV[5]))
return missing
`;
