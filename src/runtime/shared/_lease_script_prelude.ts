// The helpers of the lease script (_lease_script.ts) that its operations
// share, as Lua text, each a named fragment; they use the names the head
// (_lease_script_head.ts) defines: the state hash's tables (read as far as
// needed), its counts, and `put`, the buffer of changes tidy writes. Every
// operation's branch defines only the helpers it uses (LEASE_HELPERS orders
// them so that each follows those it calls): a Lua closure is made each time
// its definition runs.

/** The helpers, by name, in an order where each comes after those it calls. */
export const LEASE_HELPERS: ReadonlyMap<string, string> = new Map([
  // Holders other than the caller waiting now.
  [
    "others_waiting",
    `
local function others_waiting()
  return n_want - (wants[holder] and 1 or 0)
end`,
  ],
  // Leases the caller may keep for its own forks while others wait (S4): an
  // equal share, rounded down, of the holders taking part (holding or
  // waiting), the caller always among them. (Grants round up, so no capacity
  // stays idle; holders above the rounded-down share give back, so the extra
  // rotates.)
  [
    "share",
    `
local function taking_part()
  return n_held + n_want - n_both
end
local function participants()
  local n = taking_part()
  if not held[holder] and not wants[holder] then n = n + 1 end
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
  -- An older procpool's layout on the key: that fleet keeps its counts where
  -- this script cannot see them and deletes leases it does not count, so the
  -- two together would not keep the bound. Refused as a different limit is,
  -- until the older runtimes are gone (their keys expire soon after).
  if older_layout then
    return tonumber(redis.call('HGET', KEYS[5], 'limit')) or -1, true
  end
  local stored = stored_limit
  if stored and stored ~= limit
    and redis.call('ZCARD', leases) + redis.call('ZCARD', waiters) > 0 then
    return stored
  end
  if stored ~= limit then
    put['#limit'] = limit
    stored_limit = limit
  end
  return nil
end`,
  ],
  // A holder that starts waiting tells the others holding leases at once
  // ('w:<seq>:<share>:<holder>' on each one's own channel), so that those handing
  // leases to their own forks above the share give them back. Those holding
  // none have nothing to give back: the reply that grants them leases, or the
  // 'g' notice that hands them some, says who waits then. Every such holder
  // is told, even one that heard of another waiter before: the share it last
  // heard may be out of date (a grant since may have added a holder, told to
  // nobody). Only when '#told' is this share (the last view sent to each
  // holder said that others wait, and gave it) is nobody told: the notice
  // would change no view, and woke every holder's runtime on each hand-off
  // of the bench's hand-off row. A view lost with its notice is then repaired
  // by the holder's next call, its renewal at the latest.
  // The tag is the caller's own note of when it sent this call: a lease handed
  // over later names it, and the caller counts that lease's local deadline from
  // it (S2: the hand-over happened after this call reached Redis).
  [
    "set_want",
    `
local function set_want(n, tag)
  local was = wants[holder]
  if n > 0 then
    if n_want == 0 then fresh[waiters] = true end
    want_fields(holder, n, tag)
    redis.call('ZADD', waiters, now + ttl, holder)
    wrote(now + ttl)
    local now_share = not was and share()
    if now_share and told ~= now_share then
      local notice = 'w:' .. fmt(seq) .. ':' .. now_share .. ':' .. holder
      -- Those holding leases, from the holders set (O(holders), not every
      -- lease); one whose last lease this call reclaimed holds none.
      for _, h in ipairs(redis.call('SMEMBERS', holders)) do
        if h ~= holder and hold_moves[h] ~= false then
          redis.call('PUBLISH', channel .. ':' .. h, notice)
        end
      end
      told, put['#told'] = now_share, now_share
    end
  elseif was then
    want_fields(holder, 0)
    redis.call('ZREM', waiters, holder)
  end
end`,
  ],
  // Leases handed to this holder that no reply has reported yet, still live.
  [
    "take_handed",
    `
local function take_handed(out)
  local list = handed[holder]
  local at = #out + 1
  out[at] = 0
  if not list then return end
  handed[holder], put['d' .. holder] = false, false
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
  -- Past already, yet not reclaimed: written by a script that did not lower
  -- due (or a clock that stepped). Dropping due makes the next call reclaim
  -- it; 0 (not a negative, read as "no lease") makes a waiter ask again soon.
  if d <= now then
    due, due_moved = nil, true
    return 0
  end
  return math.ceil(d - now)
end`,
  ],
  // Writes the buffered changes and leaves nothing behind: keys go when
  // nothing is live, and otherwise expire between 1 s and 1 s + ttl after the
  // last deadline in them, should every holder die. All expire at one
  // instant, kept as '#exp'; it moves (every key re-armed) only when a
  // deadline comes within 1 s of it, so most calls arm only the keys they may
  // have created. Every deadline already in the keys lies 1 s or more before
  // '#exp' (each call that wrote one saw to it), so only this call's own,
  // 'latest', needs comparing.
  [
    "tidy",
    `
local function tidy()
  -- With no lease and no wait record of this version, its leases and waiters
  -- sets are empty already (absent); whatever an older version keeps there
  -- stays for it, with the expiry that version gave it.
  if n_held == 0 and n_want == 0 then
    redis.call('DEL', state, holders)
    return
  end
  local exp = stored_exp
  local rearm = not (exp and exp >= latest + 1000)
  if rearm then
    if not exp then
      -- The state was gone (or new): the keys may hold deadlines this call did not write.
      local last_lease = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
      local last_wait = redis.call('ZRANGE', waiters, -1, -1, 'WITHSCORES')
      if #last_lease > 0 then latest = math.max(latest, tonumber(last_lease[2])) end
      if #last_wait > 0 then latest = math.max(latest, tonumber(last_wait[2])) end
    end
    exp = math.ceil(latest) + 1000 + ttl
    put['#exp'] = exp
  end
  put['#seq'] = fmt(seq)
  put['#nheld'], put['#nwant'], put['#nboth'] = n_held, n_want, n_both
  -- due rounded down: kept as text, a fraction could round up, past a deadline.
  if due_moved then put['#due'] = due and fmt(math.floor(due)) or false end
  local sets, dels = {}, {}
  for f, v in pairs(put) do
    if v then
      sets[#sets + 1] = f
      sets[#sets + 1] = v
    else
      dels[#dels + 1] = f
    end
  end
  in_parts('HSET', state, sets)
  in_parts('HDEL', state, dels)
  -- Added before removed: a set that keeps a member never empties (and
  -- loses its expiry) on the way; one this call creates is fresh.
  local joined, left = {}, {}
  for h, holds in pairs(hold_moves) do
    if holds then joined[#joined + 1] = h else left[#left + 1] = h end
  end
  in_parts('SADD', holders, joined)
  in_parts('SREM', holders, left)
  if #joined > 0 and not holders_live then fresh[holders] = true end
  if rearm then
    redis.call('PEXPIREAT', leases, exp)
    redis.call('PEXPIREAT', waiters, exp)
    redis.call('PEXPIREAT', state, exp)
    redis.call('PEXPIREAT', holders, exp)
  else
    for k in pairs(fresh) do redis.call('PEXPIREAT', k, exp) end
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
  // An acquire or wait refused: S7 (a different limit), or an older version
  // on the key, which also removes the caller's own wait record: a holder may
  // have been waiting before the older keys appeared, and its runtime sends no
  // withdrawal after a refusal, so the record would count it as a waiter (a
  // smaller share for the others, hand-overs to it) until it expired. (A
  // runtime refused under S7 has no record of its own: its limit differed
  // from the first call it made.)
  [
    "refused",
    `
local function refused(stored, older)
  if older then set_want(0) end
  tidy()
  return {older and 2 or 1, stored}
end`,
  ],
]);
