// The lease script's hand-over (_lease_script.ts): a release grants the
// leases it frees straight to waiting holders, inside the store, so a waiter
// starts on the notice without a round trip of its own. Lua, kept as text;
// it uses the prelude's views and helpers (_lease_script_prelude.ts).
export const LEASE_HAND_OVER = `
-- Hands up to count freed leases to other waiting holders. Each lease goes to
-- the waiter holding the fewest (S4), ties to the one whose wait record is
-- oldest, and never above the equal share rounded up, as acquire grants. A
-- hand-over is a new grant: a new fence, a deadline no earlier than the
-- waiter's wait record (which its call's send time + its leaseMs precedes).
local function hand_over(count)
  local was_live = redis.call('ZCARD', leases)
  count = math.min(count, limit - was_live)
  if count <= 0 then return 0 end
  local w, b = waiting(), holdings()
  local any = false
  for h, n in pairs(w) do if h ~= holder and n > 0 then any = true break end end
  if not any then return 0 end
  -- Those holding or waiting after this release take part (the releaser
  -- too, if it still holds or waits).
  local parts = taking_part()
  local since = {}
  local flat = redis.call('ZRANGE', waiters, 0, -1, 'WITHSCORES')
  for i = 1, #flat, 2 do since[flat[i]] = tonumber(flat[i + 1]) end
  local cands = {}
  for _, h in ipairs(want_order) do
    local n, tag = w[h], want_tags[h]
    if h ~= holder and n and n > 0 and tag and since[h] then
      cands[#cands + 1] = { h = h, n = n, held = b[h] or 0, since = since[h], tag = tag, got = 0 }
    end
  end
  if #cands == 0 then return 0 end
  local cap = math.ceil(limit / parts)
  local first = next_fence()
  local handed = 0
  while handed < count do
    local best
    for _, c in ipairs(cands) do
      if c.n > 0 and c.held < cap and (not best or c.held < best.held
          or (c.held == best.held and c.since < best.since)) then
        best = c
      end
    end
    if not best then break end
    -- Fences go out in this order: best's are first + its earlier picks' places.
    best[#best + 1] = first + handed
    handed = handed + 1
    best.got, best.n, best.held = best.got + 1, best.n - 1, best.held + 1
  end
  if handed == 0 then return 0 end
  redis.call('SET', fencekey, fmt(first + handed - 1))
  -- A key that exists has an expiry far enough out (tidy); one this call
  -- creates has none yet. The leases zset exists while a lease lives.
  if was_live == 0 then fresh[leases] = true end
  local lists = {}
  flat = redis.call('HGETALL', handedkey)
  if #flat == 0 then fresh[handedkey] = true end
  for i = 1, #flat, 2 do lists[flat[i]] = flat[i + 1] end
  for _, c in ipairs(cands) do
    if c.got > 0 then
      local deadline = math.max(now + ttl, c.since)
      wrote(deadline)
      local list = fmt(c[1])
      redis.call('ZADD', leases, deadline, list .. ':' .. c.h)
      for i = 2, c.got do
        local f = fmt(c[i])
        redis.call('ZADD', leases, deadline, f .. ':' .. c.h)
        list = list .. ',' .. f
      end
      add_held(c.h, c.got)
      put_want(c.h, c.n)
      local before = lists[c.h]
      redis.call('HSET', handedkey, c.h, before and (before .. ',' .. list) or list)
      c.list = list
    end
  end
  -- On each waiter's own channel (redis_store.ts grantChannel): it alone
  -- wakes. With who waits now, and its share: holding nothing until now, it
  -- heard no 'w' notice.
  -- Each got a lease, so the holders taking part are those counted above.
  local waiting_now = 0
  for _ in pairs(w) do waiting_now = waiting_now + 1 end
  local share_now = math.floor(limit / parts)
  for _, c in ipairs(cands) do
    if c.list then
      local others = waiting_now - (w[c.h] and 1 or 0)
      redis.call('PUBLISH', channel .. ':' .. c.h, 'g:' .. c.list .. ':' .. c.tag .. ':'
        .. fmt(seq) .. ':' .. others .. ':' .. share_now .. ':' .. c.h)
    end
  end
  return handed
end
`;
