// The one Lua script behind the Redis lease store. Every operation runs inside
// it, atomically, so the store never needs a reaper process: each call first
// reclaims what has expired, then does its work, then tidies the keys.
//
// Time is Redis's own (`TIME`), never a client's: deadlines are compared on one
// clock. Durations returned to the client are relative (ms from now), so the
// client never needs to compare its clock with the server's.
//
// KEYS (all share the hash tag `{key}`, so the script also runs on a cluster):
//   1 leases   zset   member "<fence>:<holder>", score = deadline (ms, Redis clock)
//   2 held     hash   holder -> number of leases it holds
//   3 want     hash   holder -> number of leases it waits for
//   4 waiters  zset   holder -> expiry of its wait record (ms, Redis clock)
//   5 meta     hash   limit -> the key's limit, while any lease or waiter exists
//   6 fence    string the last fencing token granted (never expires)
//   7 tag      hash   holder -> the tag sent with the call that last wrote its wait record
//   8 handed   hash   holder -> "f,f,..." leases handed to it that it has not been told of in a reply
// ARGV: 1 op, 2 channel, 3 holder, 4 limit, 5 wait-record ttl ms (the caller's leaseMs), 6.. op arguments
//   acquire n leaseMs tag  -> {0, others, earliestMs, share, h, handed x h, fence...} or {1, storedLimit}
//   renew leaseMs fence... -> {0, others, earliestMs, share, h, handed x h, lostFence...}
//   release fence...       -> {0, others, released, share, handedOver}
//   wait n tag             -> {0, others, earliestMs, share, h, handed x h}          or {1, storedLimit}
// `others` is how many other holders wait now; earliestMs is the time until
// the earliest lease deadline, -1 without leases; share is floor(limit /
// holders taking part), what a holder may keep for itself while others wait.
// `handed` lists leases that releases of others handed to this holder since
// its last call, each reported once: a holder that missed the grant notice
// (pub/sub is at-most-once) learns of them here and gives them back.
// Notices on the channel: 'r' when leases were released (and not handed
// over) while others wait, 'w:<share>:<holder>' when a holder starts waiting,
// 'g:<fence,...>:<tag>:<holder>' when a release handed leases to a waiter.
export const LEASE_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local leases, held, want, waiters, meta, fencekey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local tagkey, handedkey = KEYS[7], KEYS[8]
local op, channel, holder = ARGV[1], ARGV[2], ARGV[3]
local limit, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000

local function fmt(x) return string.format('%.0f', x) end

-- Keys this call may have created (written while perhaps absent): tidy gives
-- them an expiry; the others already have one far enough out.
local fresh = {}

-- Reclaim: leases whose deadline has passed, wait records nobody refreshed.
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
if #expired > 0 then
  for _, m in ipairs(expired) do
    local h = string.sub(m, string.find(m, ':', 1, true) + 1)
    if redis.call('HINCRBY', held, h, -1) <= 0 then redis.call('HDEL', held, h) end
  end
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
end
local gone = redis.call('ZRANGEBYSCORE', waiters, '-inf', now)
if #gone > 0 then
  for _, h in ipairs(gone) do redis.call('HDEL', want, h) redis.call('HDEL', tagkey, h) end
  redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
end

-- S7: the first limit stays while anything is live; a different one is refused.
local function limit_mismatch()
  local stored = redis.call('HGET', meta, 'limit')
  if stored and tonumber(stored) ~= limit
    and redis.call('ZCARD', leases) + redis.call('ZCARD', waiters) > 0 then
    return tonumber(stored)
  end
  if not stored then
    redis.call('HSET', meta, 'limit', limit)
    fresh[meta] = true
  elseif tonumber(stored) ~= limit then
    redis.call('HSET', meta, 'limit', limit)
  end
  return nil
end

-- Other holders waiting now, and how many holders take part (hold or wait).
-- (Two commands whatever the fleet's size: a hash per holder would cost one each.)
local function holdings()
  local flat, by = redis.call('HGETALL', held), {}
  for i = 1, #flat, 2 do by[flat[i]] = tonumber(flat[i + 1]) end
  return by, #flat / 2
end

local function others_and_participants()
  local by, participants = holdings()
  local others = 0
  for _, h in ipairs(redis.call('HKEYS', want)) do
    if h ~= holder then
      others = others + 1
      if not by[h] then participants = participants + 1 end
    end
  end
  if not by[holder] then participants = participants + 1 end
  return others, participants
end

-- Leases a holder may keep for its own forks while others wait (S4): an equal
-- share rounded down. (Grants round up, so no capacity stays idle; holders
-- above the rounded-down share give back, so the extra rotates.)
local function share()
  local _, participants = others_and_participants()
  return math.floor(limit / participants)
end

-- A holder that starts waiting tells the others at once ('w:<share>:<holder>'),
-- so that those handing leases to their own forks above the share give them back.
-- The tag is the caller's own note of when it sent this call: a lease handed
-- over later names it, and the caller counts that lease's local deadline from
-- it (S2: the hand-over happened after this call reached Redis).
local function set_want(n, tag)
  local was = redis.call('HGET', want, holder)
  if n > 0 then
    redis.call('HSET', want, holder, n)
    redis.call('HSET', tagkey, holder, tag)
    redis.call('ZADD', waiters, now + ttl, holder)
    fresh[want], fresh[tagkey], fresh[waiters] = true, true, true
    if not was then redis.call('PUBLISH', channel, 'w:' .. share() .. ':' .. holder) end
  else
    redis.call('HDEL', want, holder)
    redis.call('HDEL', tagkey, holder)
    redis.call('ZREM', waiters, holder)
  end
end

-- Leases handed to this holder that no reply has reported yet, still live.
local function take_handed(out)
  local list = redis.call('HGET', handedkey, holder)
  local at = #out + 1
  out[at] = 0
  if not list then return end
  redis.call('HDEL', handedkey, holder)
  for f in string.gmatch(list, '[^,]+') do
    if redis.call('ZSCORE', leases, f .. ':' .. holder) then
      out[#out + 1] = tonumber(f)
      out[at] = out[at] + 1
    end
  end
end

local function earliest()
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  if #first == 0 then return -1 end
  return math.ceil(tonumber(first[2]) - now)
end

-- Leaves nothing behind: keys go when nothing is live, and otherwise expire
-- between 1 s and 1 s + ttl after the last deadline in them, should every
-- holder die. All expire at one instant, kept in meta as 'exp'; it moves
-- (every key re-armed) only when a deadline comes within 1 s of it, so most
-- calls arm only the keys they may have created.
local function tidy()
  local last_lease = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
  local last_wait = redis.call('ZRANGE', waiters, -1, -1, 'WITHSCORES')
  if #last_lease == 0 and #last_wait == 0 then
    redis.call('DEL', leases, held, want, waiters, meta, tagkey, handedkey)
    return
  end
  local last = now
  if #last_lease > 0 then last = math.max(last, tonumber(last_lease[2])) end
  if #last_wait > 0 then last = math.max(last, tonumber(last_wait[2])) end
  local exp = tonumber(redis.call('HGET', meta, 'exp'))
  local keys = {leases, held, want, waiters, meta, tagkey, handedkey}
  if exp and exp >= last + 1000 then
    keys = {}
    for k in pairs(fresh) do keys[#keys + 1] = k end
  else
    exp = math.ceil(last) + 1000 + ttl
    redis.call('HSET', meta, 'exp', exp)
  end
  for _, k in ipairs(keys) do redis.call('PEXPIREAT', k, exp) end
end

-- S8: strictly increasing per key; never below Redis's clock in microseconds,
-- so tokens keep increasing across a restart that lost the counter.
local function next_fence()
  local last = tonumber(redis.call('GET', fencekey) or '0')
  return math.max(last + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
end

local function others_waiting()
  local n = redis.call('HLEN', want)
  if redis.call('HEXISTS', want, holder) == 1 then n = n - 1 end
  return n
end

-- Hands up to count freed leases straight to other waiting holders, so a
-- waiter starts on the notice without a round trip of its own. Each lease goes
-- to the waiter holding the fewest (S4), ties to the one whose wait record is
-- oldest, and never above the equal share rounded up, as acquire grants. A
-- hand-over is a new grant: a new fence, a deadline no earlier than the
-- waiter's wait record (which its call's send time + its leaseMs precedes).
local function hand_over(count)
  count = math.min(count, limit - redis.call('ZCARD', leases))
  if count <= 0 then return 0 end
  local w = redis.call('HGETALL', want)
  local by, participants = holdings()
  local tags, since = {}, {}
  local flat = redis.call('HGETALL', tagkey)
  for i = 1, #flat, 2 do tags[flat[i]] = flat[i + 1] end
  flat = redis.call('ZRANGE', waiters, 0, -1, 'WITHSCORES')
  for i = 1, #flat, 2 do since[flat[i]] = tonumber(flat[i + 1]) end
  local cands = {}
  for i = 1, #w, 2 do
    local h = w[i]
    if not by[h] then participants = participants + 1 end
    if h ~= holder and tags[h] and since[h] and tonumber(w[i + 1]) > 0 then
      cands[#cands + 1] = { h = h, n = tonumber(w[i + 1]), held = by[h] or 0,
        since = since[h], tag = tags[h], got = {} }
    end
  end
  if #cands == 0 then return 0 end
  local cap = math.ceil(limit / participants)
  local fence, handed = next_fence(), 0
  while handed < count do
    local best
    for _, c in ipairs(cands) do
      if c.n > 0 and c.held < cap and (not best or c.held < best.held
          or (c.held == best.held and c.since < best.since)) then
        best = c
      end
    end
    if not best then break end
    best.got[#best.got + 1] = fmt(fence)
    fence, handed = fence + 1, handed + 1
    best.n, best.held = best.n - 1, best.held + 1
  end
  if handed == 0 then return 0 end
  redis.call('SET', fencekey, fmt(fence - 1))
  for _, c in ipairs(cands) do
    if #c.got > 0 then
      local deadline = math.max(now + ttl, c.since)
      for _, f in ipairs(c.got) do redis.call('ZADD', leases, deadline, f .. ':' .. c.h) end
      redis.call('HINCRBY', held, c.h, #c.got)
      if c.n > 0 then
        redis.call('HSET', want, c.h, c.n)
      else
        redis.call('HDEL', want, c.h)
        redis.call('HDEL', tagkey, c.h)
        redis.call('ZREM', waiters, c.h)
      end
      local list = table.concat(c.got, ',')
      local before = redis.call('HGET', handedkey, c.h)
      redis.call('HSET', handedkey, c.h, before and (before .. ',' .. list) or list)
      fresh[leases], fresh[held], fresh[handedkey] = true, true, true
      redis.call('PUBLISH', channel, 'g:' .. list .. ':' .. c.tag .. ':' .. c.h)
    end
  end
  return handed
end

if op == 'acquire' then
  local n, lease_ms = tonumber(ARGV[6]), tonumber(ARGV[7])
  local stored = limit_mismatch()
  if stored then tidy() return {1, stored} end
  local mine = tonumber(redis.call('HGET', held, holder) or '0')
  local others, participants = others_and_participants()
  local grant = math.min(n, limit - redis.call('ZCARD', leases))
  if others > 0 then
    -- S4: while others wait, nobody grows past an equal share.
    grant = math.min(grant, math.ceil(limit / participants) - mine)
  end
  if grant < 0 then grant = 0 end
  local out = {0, others, 0, 0}
  take_handed(out)
  if grant > 0 then
    local first = next_fence()
    local deadline = now + lease_ms
    local args = {}
    for i = 0, grant - 1 do
      local f = first + i
      out[#out + 1] = f
      args[#args + 1] = deadline
      args[#args + 1] = fmt(f) .. ':' .. holder
      if #args >= 1000 then redis.call('ZADD', leases, unpack(args)) args = {} end
    end
    if #args > 0 then redis.call('ZADD', leases, unpack(args)) end
    redis.call('SET', fencekey, fmt(first + grant - 1))
    redis.call('HINCRBY', held, holder, grant)
    fresh[leases], fresh[held] = true, true
  end
  set_want(n - grant, ARGV[8])
  out[3] = earliest()
  out[4] = share()
  tidy()
  return out
end

if op == 'renew' then
  local lease_ms = tonumber(ARGV[6])
  local deadline = now + lease_ms
  local out = {0, others_waiting(), 0, share()}
  take_handed(out)
  for i = 7, #ARGV do
    local m = ARGV[i] .. ':' .. holder
    -- Conditional: only a live lease of this holder; a late renewal of an
    -- expired one finds nothing (it was reclaimed above) and revives nothing.
    if redis.call('ZSCORE', leases, m) then
      redis.call('ZADD', leases, 'XX', deadline, m)
    else
      out[#out + 1] = tonumber(ARGV[i])
    end
  end
  if redis.call('ZSCORE', waiters, holder) then
    redis.call('ZADD', waiters, 'XX', now + ttl, holder)
  end
  out[3] = earliest()
  tidy()
  return out
end

if op == 'release' then
  local released = 0
  for i = 6, #ARGV do
    released = released + redis.call('ZREM', leases, ARGV[i] .. ':' .. holder)
  end
  if released > 0 and redis.call('HINCRBY', held, holder, -released) <= 0 then
    redis.call('HDEL', held, holder)
  end
  local handed = 0
  if released > 0 then handed = hand_over(released) end
  local others = others_waiting()
  if released > handed and others > 0 then redis.call('PUBLISH', channel, 'r') end
  local out = {0, others, released, share(), handed}
  tidy()
  return out
end

if op == 'wait' then
  local n = tonumber(ARGV[6])
  if n > 0 then
    local stored = limit_mismatch()
    if stored then tidy() return {1, stored} end
  end
  set_want(n, ARGV[7])
  local out = {0, others_waiting(), earliest(), share()}
  take_handed(out)
  tidy()
  return out
end

return redis.error_reply('procpool lease script: unknown op ' .. tostring(op))
`;
