#include "store/shared_store.hpp"

#include "state/fingerprint_set.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <unordered_map>

namespace asiocrawl::detail {

namespace asio = boost::asio;

namespace {

// Every script takes the key prefix as ARGV[1] and builds its keys from it: one crawl's keys, one Redis (a
// Cluster keeps them in one slot through the {crawl id} hash tag). Time is Redis's own (TIME), so that the
// instances' clocks need not agree. Scripts replicate their effects (Redis 7's default), which TIME needs.

// ARGV: prefix, instance, n_delays, n_delays x (host, delay_ms), n_rules, n_rules x (host, limits JSON),
// n_new, n_new x (bucket, fingerprint, host, item), n_retry, n_retry x (id, item),
// n_finished, n_finished x id, n_history, n_history x (url, history, outlink fingerprint), n_due, n_due x
// (url, due ms, "HOST ITEM"), counters JSON ('' when unchanged).
constexpr const char* commit_script = R"lua(
local p, me = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local i = 3
local n = tonumber(ARGV[i]); i = i + 1
-- A host's delay (robots.txt's Crawl-delay), first: no URL queued below is leased on the old one. The fetch
-- that waited for robots.txt starts about now, under a lease taken before the delay was known, so the next
-- start of the host waits a whole delay from now.
for _ = 1, n do
  local host, delay = ARGV[i], tonumber(ARGV[i + 1])
  i = i + 2
  redis.call('HSET', p .. 'delay', host, delay)
  if now + delay > tonumber(redis.call('HGET', p .. 'next', host) or '0') then
    redis.call('HSET', p .. 'next', host, now + delay)
    redis.call('ZADD', p .. 'ready', 'XX', 'GT', now + delay, host)
  end
end
-- The limits of a host's rule in the config, before its first URLs below (every instance has the same rules).
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('HSET', p .. 'rule_limits', ARGV[i], ARGV[i + 1])
  i = i + 2
end
n = tonumber(ARGV[i]); i = i + 1
local added = 0
for _ = 1, n do
  local bucket, fp, host, item = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  i = i + 4
  if redis.call('SADD', p .. 's:' .. bucket, fp) == 1 then
    local id = redis.call('INCR', p .. 'nextid')
    redis.call('HSET', p .. 'items', id, item)
    redis.call('HSET', p .. 'hostof', id, host)
    redis.call('RPUSH', p .. 'q:' .. host, id)
    -- LT: a host marked full (an hour ahead, by a lease) whose last URL finished while its line was empty is
    -- looked at again now that its line has one.
    redis.call('ZADD', p .. 'ready', 'LT', tonumber(redis.call('HGET', p .. 'next', host) or '0'), host)
    redis.call('INCR', p .. 'unfinished')
    added = added + 1
  end
end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  local id, item = ARGV[i], ARGV[i + 1]
  i = i + 2
  if redis.call('HGET', p .. 'owner', id) == me then
    redis.call('HSET', p .. 'items', id, item)
  end
end
n = tonumber(ARGV[i]); i = i + 1
local finished = 0
for _ = 1, n do
  local id = ARGV[i]
  i = i + 1
  -- Only the lease holder finishes a URL: a lease that expired went to another instance, which finishes it.
  if redis.call('HGET', p .. 'owner', id) == me then
    local host = redis.call('HGET', p .. 'hostof', id)
    redis.call('ZREM', p .. 'leases', id)
    redis.call('HDEL', p .. 'owner', id)
    redis.call('HDEL', p .. 'items', id)
    redis.call('HDEL', p .. 'hostof', id)
    redis.call('HINCRBY', p .. 'inflight', host, -1)
    redis.call('DECR', p .. 'unfinished')
    if redis.call('LLEN', p .. 'q:' .. host) > 0 then
      redis.call('ZADD', p .. 'ready', 'LT', tonumber(redis.call('HGET', p .. 'next', host) or '0'), host)
    end
    finished = finished + 1
  end
end
-- The fetch history a re-crawl reads (docs/RECRAWL.md): URL -> its last fetch. Entries written here say what
-- each page linked to (meta's 'outlinks'): the next generation follows links from them.
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', p .. 'history', ARGV[i])
    redis.call('HDEL', p .. 'urlof', ARGV[i + 2])
  else
    redis.call('HSET', p .. 'history', ARGV[i], ARGV[i + 1])
    redis.call('HSETNX', p .. 'meta', 'outlinks', '1')
  end
  i = i + 3
end
-- Continuous mode: when each URL recorded is due again, and what the lease script queues then. One member a
-- URL: a second commit of it (a lease that expired, fetched twice) moves its time, it does not double it.
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('ZADD', p .. 'due', tonumber(ARGV[i + 1]), ARGV[i])
  redis.call('HSET', p .. 'dueitem', ARGV[i], ARGV[i + 2])
  i = i + 3
end
if ARGV[i] ~= '' then
  redis.call('HSET', p .. 'counters', me, ARGV[i])
end
return {added, finished}
)lua";

// ARGV: prefix, instance, max, lease_ms, max_per_host, default_delay_ms, max_delayed, generation.
// Returns {ids/hosts/items flattened, unfinished, wait_ms, controls version, revisits queued, due_ms,
// indexing (0/1)}.
constexpr const char* lease_script = R"lua(
local p, me = ARGV[1], ARGV[2]
-- An instance that joined a generation over since (a re-crawl began the next one meanwhile) has no part in
-- the next: to it the crawl it joined is finished.
if tonumber(redis.call('HGET', p .. 'meta', 'generation') or '1') ~= tonumber(ARGV[8]) then
  return {{}, 0, -1, tonumber(redis.call('GET', p .. 'controls') or '0'), 0, -1, 0}
end
-- A generation that follows links leases nothing until its URL index is built (index_script): the 7th
-- answer says so, and an instance that asks claims the building when nobody holds it.
if redis.call('HEXISTS', p .. 'meta', 'index_cursor') == 1 then
  return {{}, tonumber(redis.call('GET', p .. 'unfinished') or '0'), 100,
          tonumber(redis.call('GET', p .. 'controls') or '0'), 0, -1, 1}
end
local max, lease_ms, cap, default_delay = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local max_delayed = tonumber(ARGV[7])
local taken_delayed = 0
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- A host's delay and cap: the control API's limits, else its rule's in the config, else the crawl's; a
-- robots.txt Crawl-delay is a floor under the delay.
local function limits_of(host)
  local delay, host_cap = default_delay, cap
  for _, key in ipairs({'rule_limits', 'limits'}) do
    local set = redis.call('HGET', p .. key, host)
    if set then
      set = cjson.decode(set)
      delay = set.delay_ms or delay
      host_cap = set.max_per_host or host_cap
    end
  end
  return math.max(delay, tonumber(redis.call('HGET', p .. 'delay', host) or '0')), host_cap
end
-- Leases whose holder stopped renewing them (killed): back to the head of their host's line.
for _, id in ipairs(redis.call('ZRANGEBYSCORE', p .. 'leases', '-inf', now, 'LIMIT', 0, 256)) do
  local host = redis.call('HGET', p .. 'hostof', id)
  redis.call('ZREM', p .. 'leases', id)
  redis.call('HDEL', p .. 'owner', id)
  redis.call('HINCRBY', p .. 'inflight', host, -1)
  redis.call('LPUSH', p .. 'q:' .. host, id)
  redis.call('ZADD', p .. 'ready', 'LT', tonumber(redis.call('HGET', p .. 'next', host) or '0'), host)
end
-- Continuous mode: revisits now due go to the end of their host's line as a new URL does, under a new id
-- (their URL is in the seen set already), in the same script that takes them out of `due`: a killed
-- instance neither loses nor doubles one.
local revisits = 0
for _, url in ipairs(redis.call('ZRANGEBYSCORE', p .. 'due', '-inf', now, 'LIMIT', 0, 256)) do
  local queued = redis.call('HGET', p .. 'dueitem', url)
  redis.call('ZREM', p .. 'due', url)
  redis.call('HDEL', p .. 'dueitem', url)
  local space = queued and string.find(queued, ' ', 1, true)
  if space then
    local host = string.sub(queued, 1, space - 1)
    local id = redis.call('INCR', p .. 'nextid')
    redis.call('HSET', p .. 'items', id, string.sub(queued, space + 1))
    redis.call('HSET', p .. 'hostof', id, host)
    redis.call('RPUSH', p .. 'q:' .. host, id)
    redis.call('ZADD', p .. 'ready', 'LT', tonumber(redis.call('HGET', p .. 'next', host) or '0'), host)
    redis.call('INCR', p .. 'unfinished')
    revisits = revisits + 1
  end
end
local out = {}
local taken = 0
for _, host in ipairs(redis.call('ZRANGEBYSCORE', p .. 'ready', '-inf', now, 'LIMIT', 0, 256)) do
  if taken >= max then break end
  if redis.call('SISMEMBER', p .. 'paused', host) == 1 then
    -- Paused: out of the ready set until resumed (the control script puts it back).
    redis.call('ZREM', p .. 'ready', host)
  else
    local delay, host_cap = limits_of(host)
    while taken < max do
      if tonumber(redis.call('HGET', p .. 'inflight', host) or '0') >= host_cap then
        -- Full: a finish puts it back (ZADD LT); until then it is not looked at again.
        redis.call('ZADD', p .. 'ready', now + 3600000, host)
        break
      end
      -- The delay runs from the lease: a host with one is leased only to a worker idle now, which starts
      -- the fetch at once (a URL queued behind busy workers would start late, too close to the next lease).
      if delay > 0 and taken_delayed >= max_delayed then break end
      local id = redis.call('LPOP', p .. 'q:' .. host)
      if not id then
        redis.call('ZREM', p .. 'ready', host)
        break
      end
      if delay > 0 then taken_delayed = taken_delayed + 1 end
      redis.call('HSET', p .. 'next', host, now + delay)
      redis.call('HINCRBY', p .. 'inflight', host, 1)
      redis.call('ZADD', p .. 'leases', now + lease_ms, id)
      redis.call('HSET', p .. 'owner', id, me)
      out[#out + 1] = id
      out[#out + 1] = redis.call('HGET', p .. 'items', id)
      taken = taken + 1
      if delay > 0 then
        redis.call('ZADD', p .. 'ready', now + delay, host)
        break
      end
    end
  end
end
local wait = -1
local first = redis.call('ZRANGE', p .. 'ready', 0, 0, 'WITHSCORES')
if first[2] then
  wait = math.max(0, tonumber(first[2]) - now)
end
local lease_first = redis.call('ZRANGE', p .. 'leases', 0, 0, 'WITHSCORES')
if lease_first[2] then
  local until_expiry = math.max(0, tonumber(lease_first[2]) - now)
  if wait < 0 or until_expiry < wait then wait = until_expiry end
end
local due_wait = -1
local due_first = redis.call('ZRANGE', p .. 'due', 0, 0, 'WITHSCORES')
if due_first[2] then
  due_wait = math.max(0, tonumber(due_first[2]) - now)
end
return {out, tonumber(redis.call('GET', p .. 'unfinished') or '0'), wait,
        tonumber(redis.call('GET', p .. 'controls') or '0'), revisits, due_wait, 0}
)lua";

// ARGV: prefix, 'pause' | 'resume' | 'limits', host, and for 'limits' delay_ms ('' to keep it), max_per_host
// ('' to keep it). Returns 1 (for 'resume': 0 when the host was not paused). A host leasable again (resumed,
// or its limits changed, which may end a wait) goes back into the ready set if it has a line.
constexpr const char* control_script = R"lua(
local p, op, host = ARGV[1], ARGV[2], ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local result = 1
if op == 'pause' then
  redis.call('SADD', p .. 'paused', host)
  redis.call('ZREM', p .. 'ready', host)
elseif op == 'resume' then
  result = redis.call('SREM', p .. 'paused', host)
else
  local set = redis.call('HGET', p .. 'limits', host)
  set = set and cjson.decode(set) or {}
  if ARGV[4] ~= '' then set.delay_ms = tonumber(ARGV[4]) end
  if ARGV[5] ~= '' then set.max_per_host = tonumber(ARGV[5]) end
  redis.call('HSET', p .. 'limits', host, cjson.encode(set))
  -- A shorter delay applies at once: the next start no later than the new delay from now.
  if set.delay_ms and tonumber(redis.call('HGET', p .. 'next', host) or '0') > now + set.delay_ms then
    redis.call('HSET', p .. 'next', host, now + set.delay_ms)
  end
end
if op ~= 'pause' and redis.call('SISMEMBER', p .. 'paused', host) == 0 and
    redis.call('LLEN', p .. 'q:' .. host) > 0 then
  redis.call('ZADD', p .. 'ready', tonumber(redis.call('HGET', p .. 'next', host) or '0'), host)
end
redis.call('INCR', p .. 'controls')
return result
)lua";

// ARGV: prefix, instance, lease_ms, reading seeds ('1', '0', or '-': unchanged), ids... An instance still
// reading its seed file is marked in `seeding` until a lease after its last renewal: its seeds are not
// committed yet, so no wrap-up may call the URLs they lead to gone (wrap_up_script).
constexpr const char* renew_script = R"lua(
local p, me, lease_ms, seeding = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if seeding == '1' then
  redis.call('ZADD', p .. 'seeding', now + lease_ms, me)
elseif seeding == '0' then
  redis.call('ZREM', p .. 'seeding', me)
end
local renewed = 0
for i = 5, #ARGV do
  if redis.call('HGET', p .. 'owner', ARGV[i]) == me then
    redis.call('ZADD', p .. 'leases', 'XX', now + lease_ms, ARGV[i])
    renewed = renewed + 1
  end
end
return renewed
)lua";

// ARGV: prefix, recrawl ('1' or '0'). Returns {generation, admit (0/1), cursor, follows links (0/1)}. The
// seen set's buckets are s:0 .. s:4095 (a fingerprint's top 12 bits, commit_script).
constexpr const char* generation_script = R"lua(
local p, recrawl = ARGV[1], ARGV[2] == '1'
local gen = tonumber(redis.call('HGET', p .. 'meta', 'generation') or '1')
local cursor = redis.call('HGET', p .. 'meta', 'admit_cursor')
if cursor then
  return {gen, 1, cursor, 0}
end
local follows = redis.call('HEXISTS', p .. 'meta', 'wrap_hold')
if follows == 0 and recrawl and tonumber(redis.call('GET', p .. 'unfinished') or '0') == 0 and
    redis.call('HLEN', p .. 'history') > 0 then
  gen = gen + 1
  redis.call('HSET', p .. 'meta', 'generation', gen)
  for bucket = 0, 4095 do
    redis.call('DEL', p .. 's:' .. bucket)
  end
  redis.call('DEL', p .. 'counters', p .. 'ready', p .. 'wrap-owner')
  redis.call('HDEL', p .. 'meta', 'wrap_cursor')
  redis.call('INCR', p .. 'unfinished')
  if redis.call('HGET', p .. 'meta', 'outlinks') == '1' then
    -- The history says what each page linked to: the generation starts from the roots and follows links,
    -- held open until the known URLs it did not reach are reported gone (wrap_up_script). Nothing is leased
    -- until the URL index that finds a 304's links is built from the history (index_script).
    redis.call('HSET', p .. 'meta', 'wrap_hold', '1')
    redis.call('HSET', p .. 'meta', 'index_cursor', '0')
    redis.call('DEL', p .. 'urlof', p .. 'index-owner')
    return {gen, 0, '', 1}
  end
  redis.call('HSET', p .. 'meta', 'admit_cursor', '0')
  return {gen, 1, '0', 0}
end
return {gen, 0, '', follows}
)lua";

// ARGV: prefix, outlink fingerprints... Returns {fingerprint, url, history entry} flattened, for those whose
// URL this generation has not admitted yet (not in the seen set) and that have a history entry: what a 304
// of a page linking to them stands for.
constexpr const char* known_outlinks_script = R"lua(
local p = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local at = redis.call('HGET', p .. 'urlof', ARGV[i])
  if at then
    local bucket, fp, url = string.match(at, '^(%d+) (%-?%d+) (.*)$')
    if url and redis.call('SISMEMBER', p .. 's:' .. bucket, fp) == 0 then
      local entry = redis.call('HGET', p .. 'history', url)
      if entry then
        out[#out + 1] = ARGV[i]
        out[#out + 1] = url
        out[#out + 1] = entry
      end
    end
  end
end
return out
)lua";

// ARGV: prefix, instance, lease_ms, 'claim' | 'to' cursor | 'end'. The wrap-up of a generation that follows
// links: once nothing waits or is leased (only the generation's hold is unfinished), one instance at a time
// holds the claim (it expires after a lease unless renewed: a killed wrap-upper's successor goes on from
// the cursor). 'claim' returns {1, cursor} or {0}; 'to' and 'end' return 0 when the claim is not this
// instance's (any more).
constexpr const char* wrap_up_script = R"lua(
local p, me, lease_ms, op = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('HEXISTS', p .. 'meta', 'wrap_hold') == 0 then
  return op == 'claim' and {0} or 0
end
local owner = redis.call('GET', p .. 'wrap-owner')
if op == 'claim' then
  if tonumber(redis.call('GET', p .. 'unfinished') or '0') ~= 1 or (owner and owner ~= me) then
    return {0}
  end
  -- Another instance still reading seeds (its mark not expired) has roots to commit yet. The claimer's own
  -- mark is stale: it claims only once its own work, seeds included, is done.
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local mine = tonumber(redis.call('ZSCORE', p .. 'seeding', me) or '0')
  local live = redis.call('ZCOUNT', p .. 'seeding', now, '+inf')
  if mine >= now then
    live = live - 1
  end
  if live > 0 then
    return {0}
  end
  redis.call('SET', p .. 'wrap-owner', me, 'PX', lease_ms)
  return {1, redis.call('HGET', p .. 'meta', 'wrap_cursor') or '0'}
end
if owner ~= me then
  return 0
end
if op == 'end' then
  redis.call('HDEL', p .. 'meta', 'wrap_hold', 'wrap_cursor')
  redis.call('DEL', p .. 'wrap-owner', p .. 'urlof')
  redis.call('DECR', p .. 'unfinished')
else
  redis.call('HSET', p .. 'meta', 'wrap_cursor', ARGV[5])
  redis.call('PEXPIRE', p .. 'wrap-owner', lease_ms)
end
return 1
)lua";

// ARGV: prefix, instance, lease_ms, 'claim' | 'chunk' next_cursor (outlink fingerprint, "bucket fp url")...
// The URL index of a generation that follows links (urlof: a history entry names its outlinks by
// fingerprint; this says which URL each is and where the seen set keeps it), built from the history when the
// generation begins, by one instance at a time (the claim expires after a lease unless a chunk renews it: a
// killed builder's successor goes on from the cursor). 'claim' returns {1, cursor} or {0}; 'chunk' returns 0
// when the claim is not this instance's any more, and ends the building at cursor '0'.
constexpr const char* index_script = R"lua(
local p, me, lease_ms, op = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local cursor = redis.call('HGET', p .. 'meta', 'index_cursor')
if not cursor then
  return op == 'claim' and {0} or 0
end
local owner = redis.call('GET', p .. 'index-owner')
if op == 'claim' then
  if owner and owner ~= me then
    return {0}
  end
  redis.call('SET', p .. 'index-owner', me, 'PX', lease_ms)
  return {1, cursor}
end
if owner ~= me then
  return 0
end
for i = 6, #ARGV, 2 do
  redis.call('HSET', p .. 'urlof', ARGV[i], ARGV[i + 1])
end
if ARGV[5] == '0' then
  redis.call('HDEL', p .. 'meta', 'index_cursor')
  redis.call('DEL', p .. 'index-owner')
else
  redis.call('HSET', p .. 'meta', 'index_cursor', ARGV[5])
  redis.call('PEXPIRE', p .. 'index-owner', lease_ms)
end
return 1
)lua";

// ARGV: prefix, 'to' cursor | 'end'. Nothing once the admission has ended (another instance ended it).
constexpr const char* admission_script = R"lua(
local p, op = ARGV[1], ARGV[2]
if redis.call('HEXISTS', p .. 'meta', 'admit_cursor') == 0 then
  return 0
end
if op == 'end' then
  redis.call('HDEL', p .. 'meta', 'admit_cursor')
  redis.call('DECR', p .. 'unfinished')
else
  redis.call('HSET', p .. 'meta', 'admit_cursor', ARGV[3])
end
return 1
)lua";

std::string hex64(std::uint64_t v) {
    char buffer[17];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(v));
    return buffer;
}

} // namespace

/// A script runs through Redis's script cache: its text travels once (SCRIPT LOAD), then only its SHA-1
/// (EVALSHA); the text again when Redis forgot it (NOSCRIPT: a restart).
asio::awaitable<redis::reply> shared_store::script::run(redis::client& client,
                                                        std::vector<std::string> args) {
    for (int attempt = 0;; ++attempt) {
        if (sha.empty()) {
            redis::command load{"SCRIPT", "LOAD", text};
            const auto loaded = co_await client.call(std::move(load));
            sha = loaded.str;
        }
        std::vector<redis::command> eval{{"EVALSHA", sha, "0"}};
        eval.front().insert(eval.front().end(), args.begin(), args.end());
        auto answers = co_await client.execute(std::move(eval));
        auto& answer = answers.front();
        if (answer.is_error() && answer.str.starts_with("NOSCRIPT") && attempt == 0) {
            sha.clear();
            continue;
        }
        redis::checked(answer);
        co_return std::move(answer);
    }
}

std::string default_crawl_id(const std::string& definition) {
    return hex64(url_fingerprint(definition, 0x6173696f63726177ull)); // "asiocraw"
}

shared_store::shared_store(redis::client& client, settings s)
    : client_(client)
    , settings_(std::move(s))
    , prefix_("asiocrawl:{" + settings_.crawl_id + "}:")
    , commit_{commit_script, {}}
    , lease_{lease_script, {}}
    , renew_{renew_script, {}}
    , generation_{generation_script, {}}
    , admission_{admission_script, {}}
    , known_outlinks_{known_outlinks_script, {}}
    , index_{index_script, {}}
    , wrap_up_{wrap_up_script, {}}
    , control_{control_script, {}} {}

asio::awaitable<std::uint64_t> shared_store::join(std::uint64_t fresh_seed, std::string definition,
                                                  bool continuous) {
    const std::string mode = continuous ? "1" : "0";
    std::vector<redis::command> commands{{"HSETNX", prefix_ + "meta", "seed", std::to_string(fresh_seed)},
                                         {"HSETNX", prefix_ + "meta", "definition", definition},
                                         {"HGET", prefix_ + "meta", "seed"},
                                         {"HGET", prefix_ + "meta", "definition"},
                                         {"HSETNX", prefix_ + "meta", "continuous", mode},
                                         {"HGET", prefix_ + "meta", "continuous"}};
    auto answers = co_await client_.execute(std::move(commands));
    for (const auto& a : answers)
        redis::checked(a);
    if (answers[3].str != definition)
        throw crawl_error(error::state_mismatch,
                          "the shared crawl \"" + settings_.crawl_id +
                              "\" in Redis was started with another definition (use another --crawl-id)");
    // An instance without the schedule would fetch a revisit and drop the URL from it; one with it would
    // schedule only what it fetches of a crawl whose other URLs have none.
    if (answers[5].str != mode)
        throw crawl_error(error::state_mismatch,
                          "the shared crawl \"" + settings_.crawl_id + "\" in Redis is " +
                              (answers[5].str == "1"
                                   ? "continuous: start every instance with --continuous"
                                   : "not continuous: --continuous needs another --crawl-id"));
    co_return std::stoull(answers[2].str);
}

asio::awaitable<void> shared_store::commit(const state_batch& batch) {
    for (const auto& [id, name] : batch.new_hosts) {
        if (host_names_.size() <= id)
            host_names_.resize(id + 1);
        host_names_[id] = name;
    }
    std::vector<std::string> args{prefix_, settings_.instance, std::to_string(batch.host_delays.size())};
    for (const auto& [host, delay] : batch.host_delays) {
        args.push_back(host);
        args.push_back(std::to_string(delay.count()));
    }
    std::size_t rule_count = 0;
    const auto rule_count_at = args.size();
    args.emplace_back(); // n_rules, filled below
    if (settings_.rule_for) {
        for (const auto& [id, name] : batch.new_hosts) {
            const auto limits = settings_.rule_for(name);
            if (!limits.delay && !limits.max_per_host)
                continue; // the rule sets no limits, only other settings
            args.push_back(name);
            args.push_back(limits_json(limits));
            ++rule_count;
        }
    }
    args[rule_count_at] = std::to_string(rule_count);
    std::vector<std::string> retries;
    std::size_t retry_count = 0;
    std::size_t new_count = 0;
    const auto new_count_at = args.size();
    args.emplace_back(); // n_new, filled below
    std::size_t fingerprint = 0;
    for (const auto& w : batch.waiting) {
        if (w.seq != 0) {
            retries.push_back(std::to_string(w.seq));
            retries.push_back(w.item);
            ++retry_count;
            continue;
        }
        if (fingerprint >= batch.fingerprints.size())
            throw std::logic_error("shared crawl: a batch has more new URLs than fingerprints");
        const auto fp = batch.fingerprints[fingerprint++];
        // Small sets of integers are intsets in Redis: 8 bytes a fingerprint (docs/DEPLOY.md measures it).
        args.push_back(std::to_string(fp >> 52));
        args.push_back(std::to_string(static_cast<std::int64_t>(fp)));
        args.push_back(host_names_.at(w.host));
        args.push_back(w.item);
        ++new_count;
    }
    args[new_count_at] = std::to_string(new_count);
    args.push_back(std::to_string(retry_count));
    args.insert(args.end(), std::make_move_iterator(retries.begin()), std::make_move_iterator(retries.end()));
    args.push_back(std::to_string(batch.finished.size()));
    for (const auto& [host, id] : batch.finished)
        args.push_back(std::to_string(id));
    args.push_back(std::to_string(batch.history.size()));
    for (const auto& [url, history] : batch.history) {
        args.push_back(url);
        args.push_back(history);
        args.push_back(hex64(outlink_fingerprint(url)));
    }
    args.push_back(std::to_string(batch.shared_due.size()));
    for (const auto& due : batch.shared_due) {
        args.push_back(due.url);
        args.push_back(std::to_string(due.due_ms));
        args.push_back(due.host + ' ' + due.item);
    }
    args.push_back(batch.counters);
    co_await commit_.run(client_, std::move(args));
}

asio::awaitable<shared_store::generation_answer> shared_store::begin_generation(bool recrawl) {
    std::vector<std::string> args{prefix_, recrawl ? std::string("1") : std::string("0")};
    auto r = co_await generation_.run(client_, std::move(args));
    if (r.elements.size() != 4)
        throw std::runtime_error("shared crawl: the generation script answered something unexpected");
    generation_answer out;
    out.generation = static_cast<std::uint32_t>(r.elements[0].integer);
    out.admit = r.elements[1].integer != 0;
    out.admit_from = r.elements[2].str;
    out.follows_links = r.elements.size() > 3 && r.elements[3].integer != 0;
    co_return out;
}

namespace {

/// A history entry as Redis holds it; store_damaged when it is not what encode() writes.
fetch_history decoded_history(const std::string& url, std::string_view bytes) {
    auto h = decode_fetch_history(bytes);
    if (!h)
        throw crawl_error(error::store_damaged,
                          "shared crawl: the fetch history of " + url + " does not decode (damaged)");
    return std::move(*h);
}

} // namespace

asio::awaitable<std::pair<std::string, history_map>> shared_store::scan_history(const std::string& cursor,
                                                                                std::size_t count) {
    redis::command scan{"HSCAN", prefix_ + "history", cursor, "COUNT", std::to_string(count)};
    const auto answer = co_await client_.call(std::move(scan));
    redis::checked(answer);
    if (answer.elements.size() != 2)
        throw std::runtime_error("shared crawl: HSCAN answered something unexpected");
    history_map entries;
    const auto& flat = answer.elements[1].elements;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2)
        entries.emplace(flat[i].str, decoded_history(flat[i].str, flat[i + 1].str));
    co_return std::pair{answer.elements[0].str, std::move(entries)};
}

asio::awaitable<void> shared_store::admitted_to(const std::string& cursor) {
    std::vector<std::string> args{prefix_, "to", cursor};
    co_await admission_.run(client_, std::move(args));
}

asio::awaitable<void> shared_store::end_admission() {
    std::vector<std::string> args{prefix_, "end"};
    co_await admission_.run(client_, std::move(args));
}

asio::awaitable<shared_store::lease_answer> shared_store::lease(std::size_t max, std::size_t max_delayed,
                                                                std::uint32_t generation, bool with_history,
                                                                bool follow_links) {
    std::vector<std::string> args{prefix_,
                                  settings_.instance,
                                  std::to_string(max),
                                  std::to_string(settings_.lease.count()),
                                  std::to_string(settings_.max_per_host),
                                  std::to_string(settings_.delay.count()),
                                  std::to_string(std::min(max, max_delayed)),
                                  std::to_string(generation)};
    auto r = co_await lease_.run(client_, std::move(args));
    lease_answer out;
    if (r.elements.size() != 7)
        throw std::runtime_error("shared crawl: the lease script answered something unexpected");
    const auto& flat = r.elements[0].elements;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
        auto item = decode_work_item(flat[i + 1].str);
        if (!item)
            throw crawl_error(error::store_damaged,
                              "shared crawl: a leased URL does not decode (Redis holds something else)");
        out.items.push_back({std::stoull(flat[i].str), std::move(*item), std::nullopt});
    }
    out.unfinished = r.elements[1].integer;
    out.wait_ms = r.elements[2].integer;
    out.controls_version = r.elements[3].integer;
    out.revisits = static_cast<std::size_t>(r.elements[4].integer);
    out.due_ms = r.elements[5].integer;
    out.indexing = r.elements[6].integer != 0;
    if (with_history && !out.items.empty())
        co_await add_history(out.items);
    if (follow_links && !out.items.empty())
        co_await add_known_outlinks(out.items, generation);
    co_return out;
}

asio::awaitable<void> shared_store::add_known_outlinks(std::vector<leased>& items, std::uint32_t generation) {
    // Only an entry of an earlier generation with validators can be answered with a 304 that stands for it.
    std::vector<std::string> args{prefix_};
    for (const auto& taken : items) {
        const auto& before = taken.before;
        if (!before || before->generation >= generation || !before->outlinks_known ||
            (before->etag.empty() && before->last_modified.empty()))
            continue;
        for (const auto fp : before->outlinks)
            args.push_back(hex64(fp));
    }
    if (args.size() == 1)
        co_return;
    const auto r = co_await known_outlinks_.run(client_, std::move(args));
    std::unordered_map<std::uint64_t, std::pair<std::string, fetch_history>> known;
    const auto& flat = r.elements;
    for (std::size_t i = 0; i + 2 < flat.size(); i += 3) {
        auto h = decoded_history(flat[i + 1].str, flat[i + 2].str);
        if (h.generation >= generation || h.kind == item_kind::robots)
            continue; // fetched in this generation already: its own links were followed then
        known.emplace(std::strtoull(flat[i].str.c_str(), nullptr, 16),
                      std::pair{flat[i + 1].str, std::move(h)});
    }
    for (auto& taken : items) {
        if (!taken.before || taken.before->generation >= generation)
            continue;
        for (const auto fp : taken.before->outlinks)
            if (const auto found = known.find(fp); found != known.end())
                taken.known_outlinks.push_back(found->second);
    }
}

asio::awaitable<std::optional<std::string>> shared_store::claim_index() {
    std::vector<std::string> args{prefix_, settings_.instance, std::to_string(settings_.lease.count()),
                                  "claim"};
    const auto r = co_await index_.run(client_, std::move(args));
    if (r.elements.size() != 2 || r.elements[0].integer != 1)
        co_return std::nullopt;
    co_return r.elements[1].str;
}

asio::awaitable<std::optional<std::string>> shared_store::index_from(const std::string& cursor,
                                                                     std::uint64_t seed) {
    auto scanned = co_await scan_history(cursor, 1000);
    std::vector<std::string> args{prefix_, settings_.instance, std::to_string(settings_.lease.count()),
                                  "chunk", scanned.first};
    for (const auto& [url, h] : scanned.second) {
        if (h.kind == item_kind::robots)
            continue; // no page links to it as an outlink
        const auto fp = url_fingerprint(url, seed);
        args.push_back(hex64(outlink_fingerprint(url)));
        args.push_back(std::to_string(fp >> 52) + ' ' + std::to_string(static_cast<std::int64_t>(fp)) + ' ' +
                       url);
    }
    const auto r = co_await index_.run(client_, std::move(args));
    if (r.integer != 1)
        co_return std::nullopt;
    co_return std::move(scanned.first);
}

asio::awaitable<std::optional<std::string>> shared_store::claim_wrap_up() {
    std::vector<std::string> args{prefix_, settings_.instance, std::to_string(settings_.lease.count()),
                                  "claim"};
    const auto r = co_await wrap_up_.run(client_, std::move(args));
    if (r.elements.size() != 2 || r.elements[0].integer != 1)
        co_return std::nullopt;
    co_return r.elements[1].str;
}

asio::awaitable<bool> shared_store::wrapped_up_to(const std::string& cursor) {
    std::vector<std::string> args{prefix_, settings_.instance, std::to_string(settings_.lease.count()), "to",
                                  cursor};
    const auto r = co_await wrap_up_.run(client_, std::move(args));
    co_return r.integer == 1;
}

asio::awaitable<bool> shared_store::end_wrap_up() {
    std::vector<std::string> args{prefix_, settings_.instance, std::to_string(settings_.lease.count()),
                                  "end"};
    const auto r = co_await wrap_up_.run(client_, std::move(args));
    co_return r.integer == 1;
}

asio::awaitable<std::vector<bool>> shared_store::seen(const std::vector<std::uint64_t>& fingerprints) {
    std::vector<bool> out;
    if (fingerprints.empty())
        co_return out;
    std::vector<redis::command> commands;
    commands.reserve(fingerprints.size());
    for (const auto fp : fingerprints)
        commands.push_back({"SISMEMBER", prefix_ + "s:" + std::to_string(fp >> 52),
                            std::to_string(static_cast<std::int64_t>(fp))});
    const auto answers = co_await client_.execute(std::move(commands));
    out.reserve(answers.size());
    for (const auto& a : answers) {
        redis::checked(a);
        out.push_back(a.integer == 1);
    }
    co_return out;
}

asio::awaitable<void> shared_store::add_history(std::vector<leased>& items) {
    redis::command get{"HMGET", prefix_ + "history"};
    for (const auto& taken : items)
        get.push_back(taken.item.url);
    const auto answer = co_await client_.call(std::move(get));
    redis::checked(answer);
    for (std::size_t i = 0; i < items.size() && i < answer.elements.size(); ++i) {
        if (answer.elements[i].type != redis::reply::kind::string)
            continue; // not known: a new URL
        items[i].before = decoded_history(items[i].item.url, answer.elements[i].str);
    }
}

asio::awaitable<void> shared_store::renew(const std::vector<std::uint64_t>& ids, bool reading_seeds) {
    co_await renew_for(ids, settings_.lease, reading_seeds ? "1" : "0");
}

asio::awaitable<void> shared_store::give_back(const std::vector<std::uint64_t>& ids) {
    // A lease that ends now: the next lease call of any instance puts these URLs back at the head of their
    // host's line, as it does a killed instance's, only without the wait.
    if (!ids.empty())
        co_await renew_for(ids, std::chrono::milliseconds(0), "-");
}

asio::awaitable<void> shared_store::renew_for(const std::vector<std::uint64_t>& ids,
                                              std::chrono::milliseconds lease, const char* seeding) {
    std::vector<std::string> args{prefix_, settings_.instance, std::to_string(lease.count()), seeding};
    for (const auto id : ids)
        args.push_back(std::to_string(id));
    co_await renew_.run(client_, std::move(args));
}

std::string limits_json(const shared_store::host_limits& limits) {
    std::string out = "{";
    if (limits.delay)
        out += "\"delay_ms\":" + std::to_string(limits.delay->count());
    if (limits.max_per_host)
        out +=
            std::string(limits.delay ? "," : "") + "\"max_per_host\":" + std::to_string(*limits.max_per_host);
    return out + "}";
}

std::optional<shared_store::host_limits> parse_limits_json(std::string_view json) {
    boost::system::error_code ec;
    const auto value = boost::json::parse(json, ec);
    if (ec || !value.is_object())
        return std::nullopt;
    shared_store::host_limits out;
    for (const auto& [key, field] : value.as_object()) {
        // Lua's cjson writes whole numbers as integers; a double that is whole is taken too.
        const auto number = field.to_number<std::int64_t>(ec);
        if (ec || number < 0)
            return std::nullopt;
        if (key == "delay_ms")
            out.delay = std::chrono::milliseconds(number);
        else if (key == "max_per_host" && number > 0)
            out.max_per_host = static_cast<std::size_t>(number);
        else
            return std::nullopt;
    }
    return out;
}

asio::awaitable<void> shared_store::pause(const std::string& host) {
    std::vector<std::string> args{prefix_, "pause", host};
    co_await control_.run(client_, std::move(args));
}

asio::awaitable<bool> shared_store::resume(const std::string& host) {
    std::vector<std::string> args{prefix_, "resume", host};
    const auto r = co_await control_.run(client_, std::move(args));
    co_return r.integer != 0;
}

asio::awaitable<void> shared_store::set_limits(const std::string& host, host_limits limits) {
    std::vector<std::string> args{prefix_, "limits", host,
                                  limits.delay ? std::to_string(limits.delay->count()) : std::string(),
                                  limits.max_per_host ? std::to_string(*limits.max_per_host) : std::string()};
    co_await control_.run(client_, std::move(args));
}

asio::awaitable<shared_store::controls> shared_store::read_controls() {
    // The version first: a change between the reads leaves the version older than what is read, so the next
    // lease answer's version makes the instance read again (never the other way round).
    std::vector<redis::command> commands{
        {"GET", prefix_ + "controls"}, {"SMEMBERS", prefix_ + "paused"}, {"HGETALL", prefix_ + "limits"}};
    auto answers = co_await client_.execute(std::move(commands));
    for (const auto& a : answers)
        redis::checked(a);
    controls out;
    out.version = answers[0].str.empty() ? 0 : std::stoll(answers[0].str);
    for (const auto& host : answers[1].elements)
        out.hosts[host.str].paused = true;
    const auto& pairs = answers[2].elements;
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
        auto limits = parse_limits_json(pairs[i + 1].str);
        if (!limits)
            throw crawl_error(error::store_damaged, "shared crawl: the limits of " + pairs[i].str +
                                                        " do not parse (damaged): " + pairs[i + 1].str);
        out.hosts[pairs[i].str].limits = *limits;
    }
    co_return out;
}

namespace {

std::int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

asio::awaitable<std::optional<shared_store::robots_answer>>
shared_store::cached_robots(const std::string& url, std::chrono::milliseconds max_age) {
    redis::command get{"HGET", prefix_ + "robots", url};
    const auto answer = co_await client_.call(std::move(get));
    if (answer.type != redis::reply::kind::string)
        co_return std::nullopt;
    // "fetched_at_ms\n" "status\n" "0\n" or "1" location "\n", then the body. The age is the fetching
    // instance's clock against this one's: clocks a few seconds apart make no difference to a day.
    const auto stamp_end = answer.str.find('\n');
    if (stamp_end == std::string::npos)
        co_return std::nullopt;
    const auto fetched_at = std::strtoll(answer.str.substr(0, stamp_end).c_str(), nullptr, 10);
    if (unix_ms_now() - fetched_at > max_age.count())
        co_return std::nullopt; // fetched again by whoever claims it
    const std::string_view bytes = std::string_view(answer.str).substr(stamp_end + 1);
    const auto first = bytes.find('\n');
    const auto second = first == std::string::npos ? first : bytes.find('\n', first + 1);
    if (second == std::string::npos || second == first + 1)
        co_return std::nullopt;
    robots_answer out;
    out.status = std::atoi(std::string(bytes.substr(0, first)).c_str());
    if (bytes[first + 1] == '1')
        out.location = std::string(bytes.substr(first + 2, second - first - 2));
    out.body = std::string(bytes.substr(second + 1));
    co_return out;
}

asio::awaitable<bool> shared_store::claim_robots(const std::string& url) {
    redis::command set{"SET", prefix_ + "robots-fetch:" + url,        settings_.instance, "NX",
                       "PX",  std::to_string(settings_.lease.count())};
    const auto answer = co_await client_.call(std::move(set));
    co_return answer.type == redis::reply::kind::status;
}

asio::awaitable<void> shared_store::store_robots(const std::string& url, const robots_answer& answer) {
    std::string bytes = std::to_string(unix_ms_now()) + "\n" + std::to_string(answer.status) + "\n";
    bytes += answer.location ? "1" + *answer.location : std::string("0");
    bytes += "\n" + answer.body;
    redis::command set{"HSET", prefix_ + "robots", url, std::move(bytes)};
    co_await client_.call(std::move(set));
}

report combined_report(const std::map<std::string, std::string>& counters_by_instance,
                       std::vector<std::string>* skipped) {
    report out;
    bool first = true;
    for (const auto& [instance, json] : counters_by_instance) {
        try {
            const auto doc = boost::json::parse(json).as_object();
            for (const auto& [name, value] : doc.at("stats").as_object())
                out.stats[std::string(name)] += value.to_number<std::uint64_t>();
            out.done += doc.at("done").to_number<std::size_t>();
            out.runs += doc.at("runs").to_number<std::size_t>();
            const auto started = std::chrono::system_clock::time_point(
                std::chrono::microseconds(doc.at("started_at_us").to_number<std::int64_t>()));
            const auto elapsed = std::chrono::microseconds(doc.at("elapsed_us").to_number<std::int64_t>());
            if (first || started < out.started_at)
                out.started_at = started;
            out.elapsed = std::max<std::chrono::steady_clock::duration>(out.elapsed, elapsed);
            first = false;
        } catch (const std::exception&) {
            if (skipped)
                skipped->push_back(instance);
        }
    }
    return out;
}

asio::awaitable<shared_store::status> shared_store::read_status() {
    std::vector<redis::command> commands{{"GET", prefix_ + "unfinished"},
                                         {"ZCARD", prefix_ + "leases"},
                                         {"GET", prefix_ + "nextid"},
                                         {"HGETALL", prefix_ + "counters"},
                                         {"ZCARD", prefix_ + "due"}};
    auto answers = co_await client_.execute(std::move(commands));
    for (const auto& a : answers)
        redis::checked(a);
    status s;
    s.scheduled = answers[4].integer;
    s.unfinished = answers[0].str.empty() ? 0 : std::stoll(answers[0].str);
    s.leased = answers[1].integer;
    s.admitted = answers[2].str.empty() ? 0 : std::stoll(answers[2].str);
    const auto& pairs = answers[3].elements;
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2)
        s.counters[pairs[i].str] = pairs[i + 1].str;
    co_return s;
}

} // namespace asiocrawl::detail
