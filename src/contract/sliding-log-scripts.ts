// The sliding-log Lua scripts that count rolling-window rate limits in Redis: the client's shared limiter
// and the engine's instances on one Redis (engine/cluster) both use them, so there is one mechanism. Each runs atomically in Redis, so instances never race on a
// window, and each takes its time from Redis (TIME), so instances with skewed clocks agree.
//
// The window of one operation of one key is a sorted set: one member per place. An answered place is
// scored with the time it counts from, and counts while score + window > now. A place whose request is
// under way is scored IN_FLIGHT + the end of its lease: above every time, so it counts however long the
// request takes, whatever window each instance believes in; its instance renews the lease while the
// request lasts, so the places of an instance that died mid-request come back once the lease ends. The
// answer re-scores the place with the time of the answer.

/** Milliseconds of Redis time, from TIME's seconds and microseconds. */
export const NOW = `
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

/**
 * KEYS[1] the window; ARGV windowMs. How many places the window holds now, without taking one (the
 * headers of an answer refused before the operation).
 */
export const COUNT_SCRIPT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', score(now - tonumber(ARGV[1])))
redis.call('ZREMRANGEBYSCORE', KEYS[1], score(IN_FLIGHT), score(IN_FLIGHT + now))
return redis.call('ZCARD', KEYS[1])
`;
