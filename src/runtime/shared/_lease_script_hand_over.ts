// The lease script's hand-over (_lease_script.ts): a release grants the
// leases it frees straight to waiting holders, inside the store, so a waiter
// starts on the notice without a round trip of its own. Lua, kept as text;
// it uses the head's tables and the prelude's helpers
// (_lease_script_head.ts, _lease_script_prelude.ts).
export const LEASE_HAND_OVER = `
-- Hands up to count freed leases to other waiting holders. Each lease goes to
-- the waiter holding the fewest (S4), ties to the one whose wait record is
-- oldest, and never above the equal share rounded up, as acquire grants. A
-- hand-over is a new grant: a new fence, a deadline no earlier than the
-- waiter's wait record (which its call's send time + its leaseMs precedes).
local function hand_over(count)
  if others_waiting() == 0 then return 0 end
  local was_live = redis.call('ZCARD', leases)
  count = math.min(count, limit - was_live)
  if count <= 0 then return 0 end
  -- Those holding or waiting after this release take part (the releaser
  -- too, if it still holds or waits).
  local parts = taking_part()
  -- Candidates as parallel arrays: name, still wanted, held, since, got, tag.
  local ch, cn, cb, cs, cg, ct = {}, {}, {}, {}, {}, {}
  -- A waiter's fields, with one HMGET, into the tables (what this call
  -- changed already stays); the leases handed to it before, for the one picked.
  local function fields_of(h)
    if rawget(wants, h) == nil or rawget(held, h) == nil or rawget(tags, h) == nil
        or rawget(handed, h) == nil then
      local v = redis.call('HMGET', state, 'w' .. h, 'h' .. h, 't' .. h, 'd' .. h)
      if rawget(wants, h) == nil then rawset(wants, h, tonumber(v[1]) or false) end
      if rawget(held, h) == nil then rawset(held, h, tonumber(v[2]) or false) end
      if rawget(tags, h) == nil then rawset(tags, h, v[3]) end
      if rawget(handed, h) == nil then rawset(handed, h, v[4]) end
    end
    return wants[h] and wants[h] > 0 and tags[h]
  end
  local function candidate(h, since)
    local i = #ch + 1
    ch[i], cn[i], cb[i], cs[i], cg[i], ct[i] = h, wants[h], held[h] or 0, since, 0, tags[h]
  end
  -- Not every waiter: in wait-record order, until count of those holding
  -- none have been read. Each of those takes one lease before any waiter
  -- holding some can (fewest held first, and their share rounded up is at
  -- least one), so a waiter after them cannot be picked; one holding leases
  -- before them is read on the way. (Reading the holders from the leases
  -- instead would cost O(limit) per hand-over.)
  local seen = { [holder] = true }
  local none_held, from, size = 0, 0, count + 1
  while none_held < count do
    local page = redis.call('ZRANGE', waiters, from, from + size - 1, 'WITHSCORES')
    for i = 1, #page, 2 do
      local h = page[i]
      if none_held >= count then break end
      if not seen[h] then
        seen[h] = true
        if fields_of(h) then
          candidate(h, tonumber(page[i + 1]))
          if not held[h] then none_held = none_held + 1 end
        end
      end
    end
    if #page < 2 * size then break end
    from, size = from + size, size * 2
  end
  if #ch == 0 then return 0 end
  local cap = math.ceil(limit / parts)
  local first = next_fence()
  -- Fences go out in pick order; picks[k] is the candidate of fence first + k - 1.
  local picks = {}
  while #picks < count do
    local best
    for i = 1, #ch do
      if cn[i] > 0 and cb[i] < cap and (not best or cb[i] < cb[best]
          or (cb[i] == cb[best] and cs[i] < cs[best])) then
        best = i
      end
    end
    if not best then break end
    picks[#picks + 1] = best
    cg[best], cn[best], cb[best] = cg[best] + 1, cn[best] - 1, cb[best] + 1
  end
  local handed_n = #picks
  if handed_n == 0 then return 0 end
  redis.call('SET', fencekey, fmt(first + handed_n - 1))
  -- A key that exists has an expiry far enough out (tidy); one this call
  -- creates has none yet. The leases zset exists while a lease lives.
  if was_live == 0 then fresh[leases] = true end
  local lists, zargs = {}, {}
  for k = 1, handed_n do
    local i = picks[k]
    local f = fmt(first + k - 1)
    local deadline = math.max(now + ttl, cs[i])
    zargs[#zargs + 1] = deadline
    zargs[#zargs + 1] = f .. ':' .. ch[i]
    lists[i] = lists[i] and (lists[i] .. ',' .. f) or f
  end
  in_parts('ZADD', leases, zargs)
  for i = 1, #ch do
    if cg[i] > 0 then
      local h = ch[i]
      wrote(math.max(now + ttl, cs[i]))
      add_held(h, cg[i])
      if cn[i] > 0 then
        want_fields(h, cn[i])
      else
        want_fields(h, 0)
        redis.call('ZREM', waiters, h)
      end
      local before = handed[h]
      handed[h] = before and (before .. ',' .. lists[i]) or lists[i]
      put['d' .. h] = handed[h]
    end
  end
  -- On each waiter's own channel (redis_store.ts grantChannel): it alone
  -- wakes. With who waits now, and its share: holding nothing until now, it
  -- heard no 'w' notice. Each got a lease, so the holders taking part are
  -- those counted above.
  local share_now = math.floor(limit / parts)
  for i = 1, #ch do
    if cg[i] > 0 then
      local h = ch[i]
      local others = n_want - (wants[h] and 1 or 0)
      told_view(others, share_now)
      redis.call('PUBLISH', channel .. ':' .. h, 'g:' .. lists[i] .. ':' .. ct[i] .. ':'
        .. fmt(seq) .. ':' .. others .. ':' .. share_now .. ':' .. h)
    end
  end
  return handed_n
end
`;
