// The head of the lease script (_lease_script.ts), as Lua text: what every
// call runs before its operation's branch: its arguments, Redis's clock, the
// key's meta fields, and the reclaim of what has expired. The helpers the
// branches share are in _lease_script_prelude.ts.
export const LEASE_HEAD = `
if redis.replicate_commands then redis.replicate_commands() end
local leases, held, want, waiters, meta, fencekey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local handedkey = KEYS[7]
local op, channel, holder = ARGV[1], ARGV[2], ARGV[3]
local limit, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000

local function fmt(x) return string.format('%.0f', x) end
-- The want hash keeps each waiter's tag beside its count, under TAG .. holder
-- (a holder's name never starts with a tab): one HSET, HDEL or HGETALL for both.
local TAG = '\t'

-- Keys this call may have created (written while perhaps absent): tidy gives
-- them an expiry; the others already have one far enough out.
local fresh = {}
-- The latest lease deadline or wait-record expiry this call wrote (tidy's bound).
local latest = now

-- The key's meta fields: limit, exp (when the keys expire, see tidy), due (a
-- time no later than any lease deadline or wait-record expiry in the keys)
-- and seq, read once: every call needs them.
local meta_now = redis.call('HMGET', meta, 'limit', 'exp', 'due', 'seq')
local stored_limit, stored_exp, due = tonumber(meta_now[1]), tonumber(meta_now[2]), tonumber(meta_now[3])
local due_moved = false

-- The number of the view this call reports (lease_store.ts ShareView.seq): in
-- every reply and notice, so a runtime hearing views on two connections
-- applies only the newest. One more than the last, never below Redis's clock
-- in µs: a restart or a stray DEL that loses it sets it back only if that
-- clock went back too. Written by tidy, with the other meta fields it writes.
local seq = math.max((tonumber(meta_now[4]) or 0) + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))

-- A deadline or expiry this call writes: it may come before due, and after latest.
local function wrote(d)
  if d > latest then latest = d end
  if not due or d < due then due, due_moved = d, true end
end

-- Reclaim: leases whose deadline has passed, wait records nobody refreshed.
-- Only once due has come (or is unknown): until then nothing can have
-- expired, and the call saves the look (two commands of every call's ~20).
if not due or due <= now then
  due, due_moved = nil, true
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  if #first > 0 and tonumber(first[2]) <= now then
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now)) do
      local h = string.sub(m, string.find(m, ':', 1, true) + 1)
      if redis.call('HINCRBY', held, h, -1) <= 0 then redis.call('HDEL', held, h) end
    end
    redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
    first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  end
  if #first > 0 then due = tonumber(first[2]) end
  first = redis.call('ZRANGE', waiters, 0, 0, 'WITHSCORES')
  if #first > 0 and tonumber(first[2]) <= now then
    for _, h in ipairs(redis.call('ZRANGEBYSCORE', waiters, '-inf', now)) do
      redis.call('HDEL', want, h, TAG .. h)
    end
    redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
    first = redis.call('ZRANGE', waiters, 0, 0, 'WITHSCORES')
  end
  if #first > 0 and (not due or tonumber(first[2]) < due) then due = tonumber(first[2]) end
end
`;
