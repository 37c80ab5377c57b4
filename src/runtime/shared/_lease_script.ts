// The one Lua script behind the Redis lease store. Every operation runs inside
// it, atomically, so the store never needs a reaper process: each call first
// reclaims what has expired (once something can have), then does its work,
// then tidies the keys. It is assembled from named parts: the head
// (arguments, meta, the repair of a lost key (_lease_script_repair.ts),
// reclaim; _lease_script_head.ts), the helpers
// (_lease_script_prelude.ts), the hand-over (_lease_script_hand_over.ts), and
// one branch per operation below, which defines only the helpers it uses.
//
// Time is Redis's own (`TIME`), never a client's: deadlines are compared on one
// clock. Durations returned to the client are relative (ms from now), so the
// client never needs to compare its clock with the server's.
//
// KEYS (all share the hash tag `{key}`, so the script also runs on a cluster):
//   1 leases   zset   member "<fence>:<holder>", score = deadline (ms, Redis clock)
//   2 waiters  zset   holder -> expiry of its wait record (ms, Redis clock)
//                     (a holder is named "<limit>/<uuid>" (redis_store.ts redisHolder): both
//                     sets carry the key's limit, for a call that finds '#limit' lost)
//   3 state    hash   one field per fact, named by its first byte (see _lease_script_head.ts):
//                     'h' .. holder -> leases it holds; 'w' .. holder -> leases it waits for;
//                     't' .. holder -> the tag sent with the call that last wrote its wait record;
//                     'd' .. holder -> "f,f,..." leases handed to it that no reply has reported
//                     (nor its release named);
//                     '#limit' -> the key's limit, while any lease or waiter exists;
//                     '#exp' -> the keys' expiry; '#due' -> a time (ms, Redis clock, rounded
//                     down) no later than any deadline in 1 or 2; '#seq' -> the number of the
//                     last view reported (lease_store.ts ShareView.seq); '#told' -> the share
//                     the last view sent to every holder gave, with others waiting (absent
//                     unless all agree; _lease_script_head.ts); '#nheld', '#nwant',
//                     '#nboth' -> how many holders have an 'h', a 'w', and both (so that a call
//                     need not read the others' fields to know who takes part)
//   4 fence    string the last fencing token granted (never expires)
//   5 meta, 6 held: keys only procpool versions before the state hash write; read, never
//                     written: while either exists, acquire and wait refuse (a mixed fleet)
//   7 holders  set    the holders with an 'h' field in 3 (whom a new waiter tells)
// ARGV: 1 op, 2 channel, 3 holder, 4 limit, 5 wait-record ttl ms (the caller's leaseMs), 6.. op arguments
//   acquire n leaseMs tag  -> {0, others, earliestMs, share, seq, h, handed x h, fence...} or {1, storedLimit} or {2, itsLimit}
//   renew leaseMs fence... -> {0, others, earliestMs, share, seq, h, handed x h, lostFence...}
//   release fence...       -> {0, others, released, share, seq, handedOver}
//   wait n tag             -> {0, others, earliestMs, share, seq, h, handed x h}          or {1, storedLimit} or {2, itsLimit}
// {2, itsLimit}: runtimes of an older procpool version use the key (their limit, -1 unknown).
// `others` is how many other holders wait now; earliestMs is the time until
// the earliest lease deadline, -1 without leases; share is floor(limit /
// holders taking part), what a holder may keep for itself while others wait;
// seq numbers the view (others, share) this call reports, in its reply and
// in its notices alike.
// `handed` lists leases that releases of others handed to this holder since
// its last call, each reported once: a holder that missed the grant notice
// (pub/sub is at-most-once) learns of them here and gives them back.
// Notices: 'r' on the channel when leases were released (and not handed
// over) while others wait; on a holder's own channel, '<channel>:<holder>',
// 'w:<seq>:<share>:<holder>' when another holder starts waiting (to each
// other holder holding leases, unless '#told' is that share already), and
// 'g:<fence,...>:<tag>:<seq>:<others>:<share>:<holder>' when a release handed
// it leases (others and share: the fleet just after the hand-over).
import { LEASE_HAND_OVER } from "./_lease_script_hand_over.ts";
import { LEASE_HEAD } from "./_lease_script_head.ts";
import { LEASE_HELPERS } from "./_lease_script_prelude.ts";

interface Branch {
  readonly op: string;
  readonly lua: string;
}

/** An operation's branch: the helpers it names (and only those), then its body. */
function branch(op: string, helpers: readonly string[], body: string): Branch {
  const defined = [...LEASE_HELPERS].filter(([name]) => helpers.includes(name));
  const code = defined.map(([, lua]) => lua);
  if (helpers.includes("hand_over")) code.push(LEASE_HAND_OVER);
  return { op, lua: `\nif op == '${op}' then\n${code.join("\n")}\n${body}\nend\n` };
}

/** What every operation reads and tidies with. */
const VIEWS = ["others_waiting", "share", "tidy"];

const ACQUIRE = branch(
  "acquire",
  [...VIEWS, "limit_mismatch", "set_want", "refused", "take_handed", "earliest", "next_fence"],
  `
  local n, lease_ms = tonumber(ARGV[6]), tonumber(ARGV[7])
  local stored, older = limit_mismatch()
  if stored then return refused(stored, older) end
  local mine = held[holder] or 0
  local others = others_waiting()
  local was_live = redis.call('ZCARD', leases)
  local grant = math.min(n, limit - was_live)
  if others > 0 then
    -- S4: while others wait, nobody grows past an equal share.
    grant = math.min(grant, math.ceil(limit / participants()) - mine)
  end
  if grant < 0 then grant = 0 end
  local out = {0, others, 0, 0, seq}
  take_handed(out)
  if grant > 0 then
    local first = next_fence()
    local deadline = now + lease_ms
    wrote(deadline)
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
    add_held(holder, grant)
    if was_live == 0 then fresh[leases] = true end
  end
  set_want(n - grant, ARGV[8])
  out[3] = earliest()
  out[4] = share()
  if held[holder] then told_view(others, out[4]) end
  tidy()
  return out`,
);

const RENEW = branch(
  "renew",
  [...VIEWS, "take_handed", "earliest"],
  `
  local lease_ms = tonumber(ARGV[6])
  local deadline = now + lease_ms
  local out = {0, others_waiting(), 0, share(), seq}
  take_handed(out)
  for i = 7, #ARGV do
    local m = ARGV[i] .. ':' .. holder
    -- Conditional: only a live lease of this holder; a late renewal of an
    -- expired one finds nothing (it was reclaimed above) and revives nothing.
    if redis.call('ZSCORE', leases, m) then
      redis.call('ZADD', leases, 'XX', deadline, m)
      -- A renewal moves a deadline later, except with a leaseMs shorter than
      -- the releaser's that handed the lease over: due must not pass it.
      wrote(deadline)
    else
      out[#out + 1] = tonumber(ARGV[i])
    end
  end
  if wants[holder] then
    redis.call('ZADD', waiters, 'XX', now + ttl, holder)
    wrote(now + ttl)
  end
  out[3] = earliest()
  if held[holder] then told_view(out[2], out[4]) end
  tidy()
  return out`,
);

const RELEASE = branch(
  "release",
  [...VIEWS, "next_fence", "hand_over"],
  `
  local released = 0
  for i = 6, #ARGV do
    released = released + redis.call('ZREM', leases, ARGV[i] .. ':' .. holder)
  end
  -- Leases handed to the caller that it releases now are live no more: no
  -- reply need report them (mostly the one lease it was handed, heard of).
  local list = handed[holder]
  if list then
    local gone, kept, n = {}, {}, 0
    for i = 6, #ARGV do gone[ARGV[i]] = true end
    for f in string.gmatch(list, '[^,]+') do
      n = n + 1
      if not gone[f] then kept[#kept + 1] = f end
    end
    if #kept < n then
      list = #kept > 0 and table.concat(kept, ',') or false
      handed[holder], put['d' .. holder] = list, list
    end
  end
  local handed_over = 0
  if released > 0 then
    add_held(holder, -released)
    handed_over = hand_over(released)
  end
  local others = others_waiting()
  if released > handed_over and others > 0 then redis.call('PUBLISH', channel, 'r') end
  local out = {0, others, released, share(), seq, handed_over}
  if held[holder] then told_view(others, out[4]) end
  tidy()
  return out`,
);

const WAIT = branch(
  "wait",
  [...VIEWS, "limit_mismatch", "set_want", "refused", "take_handed", "earliest"],
  `
  local n = tonumber(ARGV[6])
  if n > 0 then
    local stored, older = limit_mismatch()
    if stored then return refused(stored, older) end
  end
  set_want(n, ARGV[7])
  local out = {0, others_waiting(), earliest(), share(), seq}
  take_handed(out)
  if held[holder] then told_view(out[2], out[4]) end
  tidy()
  return out`,
);

const BRANCHES = [ACQUIRE, RENEW, RELEASE, WAIT];

// Before anything is read or written: an unknown op leaves the keys as they were.
const KNOWN_OP = `
if ${BRANCHES.map(({ op }) => `ARGV[1] ~= '${op}'`).join(" and ")} then
  return redis.error_reply('procpool lease script: unknown op ' .. tostring(ARGV[1]))
end
`;

/** The whole script, as Redis loads it (one SHA for all operations). */
export const LEASE_SCRIPT: string = KNOWN_OP + LEASE_HEAD +
  BRANCHES.map(({ lua }) => lua).join("");
