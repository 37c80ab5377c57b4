// The parts of the lease script (_lease_script.ts) that its operations share,
// as Lua text: the head every call runs (its arguments, Redis's clock, the
// reclaim of what expired) and the helpers, each a named fragment. Every
// operation's branch defines only the helpers it uses (LEASE_HELPERS orders
// them so that each follows those it calls): a Lua closure is made each time
// its definition runs, and on this path each costs about a µs.
//
// A call reads each hash it needs once (HGETALL into a Lua table) and keeps
// the table in step with its own writes: a redis.call costs a few µs inside a
// script, and the release script is on the path from one runtime's release to
// another's start.
export const LEASE_HEAD = `
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
      redis.call('HDEL', want, h) redis.call('HDEL', tagkey, h)
    end
    redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
    first = redis.call('ZRANGE', waiters, 0, 0, 'WITHSCORES')
  end
  if #first > 0 and (not due or tonumber(first[2]) < due) then due = tonumber(first[2]) end
end
`;

/** The helpers, by name, in an order where each comes after those it calls. */
export const LEASE_HELPERS: ReadonlyMap<string, string> = new Map([
  // holder -> leases held, and holder -> leases waited for, in the store's
  // order (ties in hand_over go by it): read once, then kept in step.
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
local wants, want_order
local function waiting()
  if not wants then
    wants, want_order = {}, {}
    local flat = redis.call('HGETALL', want)
    for i = 1, #flat, 2 do
      wants[flat[i]] = tonumber(flat[i + 1])
      want_order[#want_order + 1] = flat[i]
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
  // Sets how many leases h waits for (0: its wait record goes).
  [
    "put_want",
    `
local function put_want(h, n)
  local w = waiting()
  if n > 0 then
    if next(w) == nil then fresh[want], fresh[tagkey], fresh[waiters] = true, true, true end
    redis.call('HSET', want, h, n)
  else
    redis.call('HDEL', want, h)
    redis.call('HDEL', tagkey, h)
    redis.call('ZREM', waiters, h)
    n = nil
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
    put_want(holder, n)
    redis.call('HSET', tagkey, holder, tag)
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
    redis.call('DEL', leases, held, want, waiters, meta, tagkey, handedkey)
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
  for _, k in ipairs({leases, held, want, waiters, meta, tagkey, handedkey}) do
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
