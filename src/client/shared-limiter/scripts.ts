// The Lua scripts of the client's shared limiter beyond the sliding log it shares with the engine
// (contract/sliding-log-scripts.ts, where the window's layout is described).

import { MAX_RATE_LIMIT_COUNT } from '../rate-limit-headers';
import { NOW } from '../../contract/sliding-log-scripts';

export { ACQUIRE_SCRIPT, SETTLE_SCRIPT } from '../../contract/sliding-log-scripts';

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
