// The helpers of the lease script (_lease_script.ts) that its operations
// share, as Lua text, each a named fragment; they use the names the head
// (_lease_script_head.ts) defines. Every operation's branch defines only the
// helpers it uses (LEASE_HELPERS orders them so that each follows those it
// calls): a Lua closure is made each time its definition runs, and on this
// path each costs about a µs.
//
// A call reads each hash it needs once (HGETALL into a Lua table) and keeps
// the table in step with its own writes: a redis.call costs a few µs inside a
// script, and the release script is on the path from one runtime's release to
// another's start.

/** The helpers, by name, in an order where each comes after those it calls. */
export const LEASE_HELPERS: ReadonlyMap<string, string> = new Map([
  // holder -> leases held, and holder -> leases waited for (with its wait
  // record's tag), in the store's order (ties in hand_over go by it): read
  // once, then kept in step.
  [
    "holdings",
    `
local by
local function holdings()
  if not by then
    by = {}
    local flat = redis.call('HGETALL', held)
    for i = 1, #flat, 2 do by[flat[i]] = tonumber(flat[i + 1]) end
  end
  return by
end`,
  ],
  [
    "waiting",
    `
local wants, want_order, want_tags
local function waiting()
  if not wants then
    wants, want_order, want_tags = {}, {}, {}
    local flat = redis.call('HGETALL', want)
    for i = 1, #flat, 2 do
      local f = flat[i]
      if string.byte(f) == 9 then
        want_tags[string.sub(f, 2)] = flat[i + 1]
      else
        wants[f] = tonumber(flat[i + 1])
        want_order[#want_order + 1] = f
      end
    end
  end
  return wants
end`,
  ],
  // Changes a holder's count by d (the hash loses it at 0). Every caller reads
  // the counts anyway, so the new one is known: one HSET or HDEL.
  [
    "add_held",
    `
local function add_held(h, d)
  local b = holdings()
  local was_empty = next(b) == nil
  local n = (b[h] or 0) + d
  if n > 0 then
    redis.call('HSET', held, h, n)
  else
    redis.call('HDEL', held, h)
    n = nil
  end
  b[h] = n
  if d > 0 and was_empty then fresh[held] = true end
end`,
  ],
  // Sets how many leases h waits for (0: its wait record goes), and with a
  // tag, the tag of its wait record.
  [
    "put_want",
    `
local function put_want(h, n, tag)
  local w = waiting()
  if n > 0 then
    if next(w) == nil then fresh[want], fresh[waiters] = true, true end
    if tag then
      redis.call('HSET', want, h, n, TAG .. h, tag)
      want_tags[h] = tag
    else
      redis.call('HSET', want, h, n)
    end
  else
    redis.call('HDEL', want, h, TAG .. h)
    redis.call('ZREM', waiters, h)
    n = nil
    want_tags[h] = nil
  end
  w[h] = n
end`,
  ],
  // Holders other than the caller waiting now.
  [
    "others_waiting",
    `
local function others_waiting()
  local n = 0
  for x in pairs(waiting()) do if x ~= holder then n = n + 1 end end
  return n
end`,
  ],
  // Holders taking part (holding or waiting).
  [
    "taking_part",
    `
local function taking_part()
  local n, b, w = 0, holdings(), waiting()
  for _ in pairs(b) do n = n + 1 end
  for x in pairs(w) do if not b[x] then n = n + 1 end end
  return n
end`,
  ],
  // Leases the caller may keep for its own forks while others wait (S4): an
  // equal share, rounded down, of the holders taking part, the caller always
  // among them. (Grants round up, so no capacity stays idle; holders above
  // the rounded-down share give back, so the extra rotates.)
  [
    "share",
    `
local function participants()
  local n = taking_part()
  if not holdings()[holder] and not waiting()[holder] then n = n + 1 end
  return n
end
local function share()
  return math.floor(limit / participants())
end`,
  ],
  // S7: the first limit stays while anything is live; a different one is refused.
  [
    "limit_mismatch",
    `
local function limit_mismatch()
  local stored = stored_limit
  if stored and stored ~= limit
    and redis.call('ZCARD', leases) + redis.call('ZCARD', waiters) > 0 then
    return stored
  end
  if stored ~= limit then
    if not stored then fresh[meta] = true end
    redis.call('HSET', meta, 'limit', limit)
    stored_limit = limit
  end
  return nil
end`,
  ],
  // A holder that starts waiting tells the others holding leases at once
  // ('w:<seq>:<share>:<holder>' on each one's own channel), so that those handing
  // leases to their own forks above the share give them back. Those holding
  // none have nothing to give back: the reply that grants them leases, or the
  // 'g' notice that hands them some, says who waits then. (On the key's
  // channel, it woke every runtime, the one waiting among them, for each wait.)
  // Every such holder is told, even one that heard of another waiter before:
  // the share it last heard may be out of date (a grant since may have added a
  // holder, told to nobody), and the notice repairs a lost one or a stale view.
  // The tag is the caller's own note of when it sent this call: a lease handed
  // over later names it, and the caller counts that lease's local deadline from
  // it (S2: the hand-over happened after this call reached Redis).
  [
    "set_want",
    `
local function set_want(n, tag)
  local was = waiting()[holder]
  if n > 0 then
    put_want(holder, n, tag)
    redis.call('ZADD', waiters, now + ttl, holder)
    wrote(now + ttl)
    if not was then
      local notice = 'w:' .. fmt(seq) .. ':' .. share() .. ':' .. holder
      for h, c in pairs(holdings()) do
        if h ~= holder and c > 0 then redis.call('PUBLISH', channel .. ':' .. h, notice) end
      end
    end
  elseif was then
    put_want(holder, 0)
  end
end`,
  ],
  // Leases handed to this holder that no reply has reported yet, still live.
  [
    "take_handed",
    `
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
end`,
  ],
  [
    "earliest",
    `
local function earliest()
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  if #first == 0 then return -1 end
  local d = tonumber(first[2])
  -- Past already, yet not reclaimed: an older script (a runtime of an older
  -- version on this key) wrote it without lowering due. Dropping due makes
  -- the next call reclaim it; 0 (not a negative, read as "no lease") makes a
  -- waiter ask again soon.
  if d <= now then
    due, due_moved = nil, true
    return 0
  end
  return math.ceil(d - now)
end`,
  ],
  // Leaves nothing behind: keys go when nothing is live, and otherwise expire
  // between 1 s and 1 s + ttl after the last deadline in them, should every
  // holder die. All expire at one instant, kept in meta as 'exp'; it moves
  // (every key re-armed) only when a deadline comes within 1 s of it, so most
  // calls arm only the keys they may have created. Every deadline already in
  // the keys lies 1 s or more before 'exp' (each call that wrote one saw to
  // it), so only this call's own, 'latest', needs comparing.
  [
    "tidy",
    `
local function tidy()
  if next(holdings()) == nil and next(waiting()) == nil then
    redis.call('DEL', leases, held, want, waiters, meta, handedkey)
    return
  end
  local exp = stored_exp
  -- due rounded down: kept as text, a fraction could round up, past a deadline.
  if exp and exp >= latest + 1000 then
    if not due_moved then
      redis.call('HSET', meta, 'seq', fmt(seq))
    elseif due then
      redis.call('HSET', meta, 'seq', fmt(seq), 'due', fmt(math.floor(due)))
    else
      redis.call('HSET', meta, 'seq', fmt(seq))
      redis.call('HDEL', meta, 'due')
    end
    for k in pairs(fresh) do redis.call('PEXPIREAT', k, exp) end
    return
  end
  if not exp then
    -- meta was gone (or new): the keys may hold deadlines this call did not write.
    local last_lease = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
    local last_wait = redis.call('ZRANGE', waiters, -1, -1, 'WITHSCORES')
    if #last_lease > 0 then latest = math.max(latest, tonumber(last_lease[2])) end
    if #last_wait > 0 then latest = math.max(latest, tonumber(last_wait[2])) end
  end
  exp = math.ceil(latest) + 1000 + ttl
  if due then
    redis.call('HSET', meta, 'exp', exp, 'seq', fmt(seq), 'due', fmt(math.floor(due)))
  else
    redis.call('HSET', meta, 'exp', exp, 'seq', fmt(seq))
    redis.call('HDEL', meta, 'due')
  end
  for _, k in ipairs({leases, held, want, waiters, meta, handedkey}) do
    redis.call('PEXPIREAT', k, exp)
  end
end`,
  ],
  // S8: strictly increasing per key; never below Redis's clock in microseconds,
  // so tokens keep increasing across a restart that lost the counter.
  [
    "next_fence",
    `
local function next_fence()
  local last = tonumber(redis.call('GET', fencekey) or '0')
  return math.max(last + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
end`,
  ],
]);
