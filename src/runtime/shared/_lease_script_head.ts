// The head of the lease script (_lease_script.ts), as Lua text: what every
// call runs before its operation's branch: its arguments, Redis's clock, the
// key's state hash read once (meta fields and every holder's counts), and the
// reclaim of what has expired. The helpers the branches share are in
// _lease_script_prelude.ts.
//
// The state hash is read with one HGETALL into plain Lua tables, and every
// change to it is buffered (`put`) and written by tidy with one HSET and at
// most one HDEL: a redis.call costs one to a few µs inside a script, and the
// release script is on the path from one runtime's release to another's start.
export const LEASE_HEAD = `
if redis.replicate_commands then redis.replicate_commands() end
local leases, waiters, state, fencekey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local op, channel, holder = ARGV[1], ARGV[2], ARGV[3]
local limit, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000

local function fmt(x) return string.format('%.0f', x) end

-- The state hash, by the field's first byte: '#' meta ('#limit', '#exp',
-- '#due', '#seq'), 'h' .. holder its leases held, 'w' .. holder the leases it
-- waits for, 't' .. holder its wait record's tag, 'd' .. holder the leases
-- handed to it not yet reported. want_order: the waiters in the hash's order
-- (ties in hand_over go by it). n_held, n_want: how many holders hold, wait.
local held, wants, tags, handed, want_order = {}, {}, {}, {}, {}
local n_held, n_want = 0, 0
local stored_limit, stored_exp, due, last_seq
local flat = redis.call('HGETALL', state)
-- Changes to the state hash, field -> value (false: delete), written by tidy.
local put = {}
local byte, sub = string.byte, string.sub
for i = 1, #flat, 2 do
  local f = flat[i]
  local c = byte(f)
  if c == 104 then held[sub(f, 2)] = tonumber(flat[i + 1]) n_held = n_held + 1
  elseif c == 119 then
    local h = sub(f, 2)
    wants[h] = tonumber(flat[i + 1]) n_want = n_want + 1 want_order[#want_order + 1] = h
  elseif c == 116 then tags[sub(f, 2)] = flat[i + 1]
  elseif c == 100 then handed[sub(f, 2)] = flat[i + 1]
  elseif f == '#seq' then last_seq = tonumber(flat[i + 1])
  elseif f == '#due' then due = tonumber(flat[i + 1])
  elseif f == '#exp' then stored_exp = tonumber(flat[i + 1])
  elseif f == '#limit' then stored_limit = tonumber(flat[i + 1])
  end
end
-- A tag with no count beside it (its count's field was deleted without it) is dropped.
for h in pairs(tags) do
  if not wants[h] then tags[h] = nil put['t' .. h] = false end
end
local due_moved = false

-- Keys this call may have created (written while perhaps absent): tidy gives
-- them an expiry; the others already have one far enough out. The state hash
-- is written by every call that does not delete it.
local fresh = {}
if #flat == 0 then fresh[state] = true end
-- The latest lease deadline or wait-record expiry this call wrote (tidy's bound).
local latest = now

-- The number of the view this call reports (lease_store.ts ShareView.seq): in
-- every reply and notice, so a runtime hearing views on two connections
-- applies only the newest. One more than the last, never below Redis's clock
-- in µs: a restart or a stray DEL that loses it sets it back only if that
-- clock went back too. Written by tidy.
local seq = math.max((last_seq or 0) + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))

-- A deadline or expiry this call writes: it may come before due, and after latest.
local function wrote(d)
  if d > latest then latest = d end
  if not due or d < due then due, due_moved = d, true end
end

-- Changes a holder's count by d (the field goes at 0).
local function add_held(h, d)
  local was = held[h]
  local n = (was or 0) + d
  if n > 0 then
    if not was then n_held = n_held + 1 end
    held[h], put['h' .. h] = n, n
  else
    if was then n_held = n_held - 1 end
    held[h], put['h' .. h] = nil, false
  end
end

-- Sets how many leases h waits for, and with a tag, its wait record's tag;
-- at 0 the count and tag go (the caller removes the wait record itself).
local function want_fields(h, n, tag)
  if n > 0 then
    if not wants[h] then n_want = n_want + 1 end
    wants[h], put['w' .. h] = n, n
    if tag then tags[h], put['t' .. h] = tag, tag end
  else
    if wants[h] then n_want = n_want - 1 end
    wants[h], tags[h], put['w' .. h], put['t' .. h] = nil, nil, false, false
  end
end

-- Reclaim: leases whose deadline has passed, wait records nobody refreshed.
-- Only once due has come (or is unknown): until then nothing can have
-- expired, and the call saves the look.
if not due or due <= now then
  due, due_moved = nil, true
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  if #first > 0 and tonumber(first[2]) <= now then
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now)) do
      add_held(string.sub(m, string.find(m, ':', 1, true) + 1), -1)
    end
    redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
    first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  end
  if #first > 0 then due = tonumber(first[2]) end
  first = redis.call('ZRANGE', waiters, 0, 0, 'WITHSCORES')
  if #first > 0 and tonumber(first[2]) <= now then
    for _, h in ipairs(redis.call('ZRANGEBYSCORE', waiters, '-inf', now)) do want_fields(h, 0) end
    redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
    first = redis.call('ZRANGE', waiters, 0, 0, 'WITHSCORES')
  end
  if #first > 0 and (not due or tonumber(first[2]) < due) then due = tonumber(first[2]) end
end
`;
