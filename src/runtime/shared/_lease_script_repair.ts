// The lease script's repair of keys lost on their own, as Lua text, run by
// every call in the head (_lease_script_head.ts) after the counts are read and
// before the reclaim. Redis drops a key whole (an eviction under a
// volatile-* maxmemory-policy, a stray DEL, a replica promoted without it),
// so one key of a shared capacity can go while the others live: a lost
// :leases set leaves its holders counted as holding in :state (smaller shares
// for the others, hand-overs judged on leases that are gone), a lost :waiters
// set leaves waiters counted that no record will ever expire, a lost :state
// hash leaves live leases counted by nobody and the key's limit (S7) unknown,
// and a lost holders set leaves holders nobody tells of a new waiter. The
// leases and the wait records are the truth (their holders' names carry the
// limit); the fields and counts are made to agree with them again.
//
// Whether a key is missing costs one EXISTS per call: with leases named once,
// the holders set twice and the waiters set four times, its count tells which
// of the three exist (EXISTS counts a key each time it is named); an acquire
// or a wait, which refuse while they exist, looks for an older version's keys
// in the same EXISTS, named eight times each, and a renewal or a release only
// when a key of its own is missing (a second EXISTS). With the
// counts exact, the leases and the holders set exist exactly while some
// holder holds, and the waiters set whenever some holder waits. Only a
// mismatch costs more, once: reading the leases (at most limit), the holders
// set, or, when the names of those to clear are gone with their set, the
// whole state hash. (A waiters set that exists while the counts say nobody
// waits is left alone: its records lost their fields with a lost state hash,
// and they expire, or their runtimes write them again, within leaseMs.)
//
// Not repaired: members lost from a key that lives (only a hand-made ZREM or
// HDEL does that; Redis drops keys whole).
export const LEASE_REPAIR = `
-- holder -> how many leases it has in the leases set (reads every lease).
local function lease_counts()
  local counts = {}
  for _, m in ipairs(redis.call('ZRANGE', leases, 0, -1)) do
    local h = sub(m, string.find(m, ':', 1, true) + 1)
    counts[h] = (counts[h] or 0) + 1
  end
  return counts
end

local function repair_held(found)
  -- Holders counted again were told nothing by this call.
  told, put['#told'] = nil, false
  -- Who has an 'h' field now: the holders set says, unless it went too.
  local had = {}
  if found % 4 >= 2 then
    had = redis.call('SMEMBERS', holders)
  elseif n_held > 0 then
    read_all()
    for h, c in pairs(held) do if c then had[#had + 1] = h end end
  end
  local counts = found % 2 == 1 and lease_counts() or {}
  for _, h in ipairs(had) do
    if not counts[h] then add_held(h, -(held[h] or 0)) end
  end
  local names = {}
  for h, c in pairs(counts) do
    add_held(h, c - (held[h] or 0))
    names[#names + 1] = h
  end
  -- Written at once, whole: a new waiter reads it in this call.
  redis.call('DEL', holders)
  hold_moves = {}
  in_parts('SADD', holders, names)
  if #names > 0 then fresh[holders] = true end
end

-- The key's limit as its holders' names carry it ('<limit>/<id>', redis_store.ts
-- redisHolder): a lease member or a wait record lives exactly while what it
-- names does, so the first limit (S7) outlives a lost state hash. nil when no
-- name carries one (an older version's runtimes, a hand-picked name).
local function named_limit(found)
  if found % 2 == 1 then
    for _, m in ipairs(redis.call('ZRANGE', leases, 0, -1)) do
      local l = string.match(m, '^%d+:(%d+)/')
      if l then return tonumber(l) end
    end
  end
  if found >= 4 then
    for _, h in ipairs(redis.call('ZRANGE', waiters, 0, -1)) do
      local l = string.match(h, '^(%d+)/')
      if l then return tonumber(l) end
    end
  end
  return nil
end

-- Whether an older procpool's keys (:meta, :held) exist: its leases sit in
-- the same leases set, counted by nobody here. Taking them in as holders
-- would leave a holder counted after its runtime, with its own script,
-- dropped them; forks are refused while those keys live (limit_mismatch),
-- and the first call after they are gone repairs what is left.
local older_layout
do
  local older = KEYS[5]
  local oldheld = KEYS[6]
  -- Each older key named eight times: any of them makes the count reach 8.
  -- A renewal or a release looks for them only when a key of this version is
  -- missing (only then do they decide anything); acquire and wait always do.
  local fits, found = n_held > 0 and 3 or 0, nil
  if op == 'acquire' or op == 'wait' then
    found = redis.call('EXISTS', leases, holders, holders, waiters, waiters, waiters, waiters,
      older, older, older, older, older, older, older, older,
      oldheld, oldheld, oldheld, oldheld, oldheld, oldheld, oldheld, oldheld)
  else
    found = redis.call('EXISTS', leases, holders, holders, waiters, waiters, waiters, waiters)
    if found % 4 ~= fits or (n_want > 0 and found < 4) then
      found = found + redis.call('EXISTS', older, older, older, older, older, older, older, older,
        oldheld, oldheld, oldheld, oldheld, oldheld, oldheld, oldheld, oldheld)
    end
  end
  older_layout = found >= 8
  found = found % 8
  if not older_layout and found % 4 ~= fits then repair_held(found) end
  -- No '#limit' while a lease or a wait record exists: the state hash went.
  -- Read back from the holders' names; never on a key live with its hash,
  -- nor on an empty one (found is 0), so it costs no common call anything.
  if not stored_limit and (found % 2 == 1 or found >= 4) then
    stored_limit = named_limit(found)
    if stored_limit then put['#limit'] = stored_limit end
  end
  if n_want > 0 and found < 4 then
    read_all()
    for h, w in pairs(wants) do if w then want_fields(h, 0) end end
  end
end
-- Whether the holders set exists now (tidy gives a set this call creates its expiry).
local holders_live = n_held > 0
`;
