// The head of the lease script (_lease_script.ts), as Lua text: what every
// call runs before its operation's branch: its arguments, Redis's clock, the
// key's state hash (its meta fields and the caller's own, in one HMGET), and
// the reclaim of what has expired. The helpers the branches share are in
// _lease_script_prelude.ts.
//
// The state hash is read into Lua tables, only as far as the call needs it,
// and every change to it is buffered (`put`) and written by tidy with one HSET
// and at most one HDEL: a redis.call costs one to a few µs inside a script,
// and the release script is on the path from one runtime's release to
// another's start.
import { LEASE_REPAIR } from "./_lease_script_repair.ts";

/** The head, as Lua text. */
export const LEASE_HEAD = `
if redis.replicate_commands then redis.replicate_commands() end
local leases, waiters, state, fencekey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local holders = KEYS[7]
local op, channel, holder = ARGV[1], ARGV[2], ARGV[3]
local limit, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000

local function fmt(x) return string.format('%.0f', x) end
local byte, sub = string.byte, string.sub
-- cmd key list..., in parts of 1 000 values (Lua's unpack refuses some 8 000;
-- pairs stay whole).
local function in_parts(cmd, key, list)
  for from = 1, #list, 1000 do
    redis.call(cmd, key, unpack(list, from, math.min(from + 999, #list)))
  end
end

-- The state hash, by the field's first byte: '#' meta ('#limit', '#exp',
-- '#due', '#seq', and the counts '#nheld', '#nwant', '#nboth': how many
-- holders hold, wait, do both), 'h' .. holder its leases held, 'w' .. holder
-- the leases it waits for, 't' .. holder its wait record's tag, 'd' .. holder
-- the leases handed to it not yet reported. A call reads the meta fields and
-- its own with one HMGET, and another holder's field only when it needs it
-- (one HGET, remembered; a hand-over reads only the waiters it may pick), so
-- a renewal costs the same with 5 or 5 000 runtimes waiting on the key. The
-- whole hash is read (read_all) only to count one found without its counts.
local got = redis.call('HMGET', state, '#limit', '#exp', '#due', '#seq', '#nheld', '#nwant',
  '#nboth', 'h' .. holder, 'w' .. holder, 't' .. holder, 'd' .. holder, '#told')
local stored_limit, stored_exp = tonumber(got[1]), tonumber(got[2])
local due, last_seq = tonumber(got[3]), tonumber(got[4])
local n_held, n_want, n_both = tonumber(got[5]) or 0, tonumber(got[6]) or 0, tonumber(got[7]) or 0
-- Changes to the state hash, field -> value (false: delete), written by tidy.
local put = {}
-- '#told': the share that the last view sent to each holder (a reply, a 'g'
-- or 'w' notice) says, each of them saying too that others wait; nil when a
-- holder may have been told otherwise, or nothing. While it stands, a 'w'
-- notice of that share would change no holder's view (a holder that knows
-- others wait keeps no idle lease), so a new waiter sends none.
local told = tonumber(got[12])
-- A view (others waiting, share) sent to a holder, which holds after this call.
local function told_view(others, s)
  if told and (others == 0 or s ~= told) then told, put['#told'] = nil, false end
end
-- Whether read_all has run.
local all_read = false
-- A table of one kind of field, holder -> value, false when absent. Until
-- read_all, a holder not in it yet is read on first use (so absent stays
-- false, never nil: nil would read the stored value again, over this call's
-- own change).
local function fields(prefix, number)
  return setmetatable({}, { __index = function(tbl, h)
    local v = redis.call('HGET', state, prefix .. h)
    if v and number then v = tonumber(v) end
    rawset(tbl, h, v)
    return v
  end })
end
local held, wants, tags, handed = fields('h', true), fields('w', true), fields('t'), fields('d')
held[holder], wants[holder] = tonumber(got[8]) or false, tonumber(got[9]) or false
tags[holder], handed[holder] = got[10], got[11]

-- Reads every holder's fields, once, into plain tables (a field not in them
-- is absent from then on), this call's own changes standing over what the
-- hash holds, and drops a tag with no count beside it.
local function read_all()
  if all_read then return end
  all_read = true
  local by = { [104] = held, [119] = wants, [116] = tags, [100] = handed }
  for _, tbl in pairs(by) do setmetatable(tbl, nil) end
  local flat = redis.call('HGETALL', state)
  for i = 1, #flat, 2 do
    local f = flat[i]
    local c = byte(f)
    if c == 104 then held[sub(f, 2)] = tonumber(flat[i + 1])
    elseif c == 119 then wants[sub(f, 2)] = tonumber(flat[i + 1])
    elseif c == 116 then tags[sub(f, 2)] = flat[i + 1]
    elseif c == 100 then handed[sub(f, 2)] = flat[i + 1]
    end
  end
  for f, v in pairs(put) do
    local tbl = by[byte(f)]
    if tbl then tbl[sub(f, 2)] = v end
  end
  for h, tag in pairs(tags) do
    if tag and not wants[h] then tags[h], put['t' .. h] = false, false end
  end
end
-- The counts are written with every change they follow, in one script, so
-- they stay exact; a hash without them (gone: all counts 0, as its fields
-- are; or one no call of this layout wrote) has them counted once, and so
-- has one whose counts cannot be right (an earlier layout's script changed
-- its fields without them): wrong counts would otherwise stay wrong.
if (not got[5] and redis.call('HLEN', state) > 0) or n_held < 0 or n_want < 0 or n_both < 0
    or n_both > math.min(n_held, n_want) then
  n_held, n_want, n_both = 0, 0, 0
  read_all()
  for h, c in pairs(held) do
    if c then
      n_held = n_held + 1
      if wants[h] then n_both = n_both + 1 end
    end
  end
  for _, w in pairs(wants) do if w then n_want = n_want + 1 end end
end
local due_moved = false

-- Keys this call may have created (written while perhaps absent): tidy gives
-- them an expiry; the others already have one far enough out. The state hash
-- is written by every call that does not delete it.
local fresh = {}
if not last_seq then fresh[state] = true end
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

-- The holders set (KEYS[7]) names the holders with an 'h' field, so that a
-- new waiter finds whom to tell without reading every lease. A holder whose
-- field this call created (true) or deleted (false): tidy writes the set.
local hold_moves = {}

-- Changes a holder's count by d (the field goes at 0), and the counts with it.
local function add_held(h, d)
  local was = held[h]
  local n = (was or 0) + d
  if n > 0 then
    if not was then
      n_held = n_held + 1
      if wants[h] then n_both = n_both + 1 end
      hold_moves[h] = true
    end
    held[h], put['h' .. h] = n, n
  else
    if was then
      n_held = n_held - 1
      if wants[h] then n_both = n_both - 1 end
      hold_moves[h] = false
    end
    held[h], put['h' .. h] = false, false
  end
end

-- Sets how many leases h waits for, and with a tag, its wait record's tag;
-- at 0 the count and tag go (the caller removes the wait record itself).
local function want_fields(h, n, tag)
  if n > 0 then
    if not wants[h] then
      n_want = n_want + 1
      if held[h] then n_both = n_both + 1 end
    end
    wants[h], put['w' .. h] = n, n
    if tag then tags[h], put['t' .. h] = tag, tag end
  else
    if wants[h] then
      n_want = n_want - 1
      if held[h] then n_both = n_both - 1 end
    end
    wants[h], tags[h], put['w' .. h], put['t' .. h] = false, false, false, false
  end
end

${LEASE_REPAIR}
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
