// A crawl shared by many asiocrawl processes through one Redis (docs/DEPLOY.md): the seen set, the per-host
// frontier, leases, politeness slots and the unfinished-task counter live there, and every change is one
// Lua script, so that the crawl is consistent whatever instance dies at whatever moment.
//
// Keys, all under "asiocrawl:{CRAWL_ID}:" (the braces keep them in one Redis Cluster slot):
//   meta         hash   seed, definition, continuous ("1" or "0", written by the first instance), generation,
//                       admit_cursor (an admission under way), outlinks (the history says what pages linked
//                       to), wrap_hold and wrap_cursor (a generation that follows links, until its wrap-up
//                       ends)
//   s:B          set    seen fingerprints whose top 12 bits are B, as integers (an intset: 8 bytes each)
//   nextid       string the last id given to an admitted URL
//   items        hash   id -> encode(work_item): URLs waiting or leased
//   hostof       hash   id -> host
//   q:HOST       list   ids waiting for HOST, in order
//   ready        zset   HOST -> when (ms, Redis's clock) it may start its next fetch; hosts with a line
//   next         hash   HOST -> when it may start its next fetch (the politeness delay, crawl-wide)
//   delay        hash   HOST -> robots.txt's Crawl-delay (ms, up to robots.max_crawl_delay): a floor under
//   the
//                       host's delay (its `limits`, its `rule_limits`, else politeness.delay)
//   inflight     hash   HOST -> URLs of HOST leased now (politeness.max_per_host, crawl-wide)
//   paused       set    hosts paused through the control API of any instance: not leased until resumed
//   limits       hash   HOST -> {"delay_ms": N, "max_per_host": N} (either or both): the control API's limits
//   rule_limits  hash   HOST -> the same, from the config's per-host rule (crawler_config::hosts), written by
//                       the instance that first commits a URL of HOST; `limits` wins over it field by field
//   controls     string the controls' version: raised by every change of `paused` and `limits`
//   leases       zset   id -> deadline (ms)
//   owner        hash   id -> the instance holding its lease
//   unfinished   string URLs admitted and not finished: the crawl is over when it reaches 0
//   counters     hash   instance -> its report counters (JSON), for the combined report
//   robots       hash   robots.txt URL -> when it was fetched and its answer (status, Location, body):
//                       fetched once per crawl and per robots_cache_lifetime
//   robots-fetch:URL    string: the instance fetching that robots.txt now (expires)
//   history      hash   URL -> its last fetch (fetch_history), for re-crawls
//   urlof        hash   outlink fingerprint (hex) -> "bucket seen-fingerprint URL" of every known URL: what a
//                       history entry's outlinks name; built from `history` when a generation that follows
//                       links begins (index_cursor in meta until it is built, index-owner: the instance
//                       building it, expiring after a lease), deleted when its wrap-up ends
//   wrap-owner   string the instance wrapping up a generation that follows links (expires after a lease)
//   seeding      zset   instance -> until when (ms) it is known to be reading its seed file (renew)
//   due          zset   URL -> when (ms since the epoch) it is due for a revisit (continuous mode): the lease
//                       script queues it then as a new URL (new id), without the seen set
//   dueitem      hash   URL -> "HOST ENCODED-WORK-ITEM": what the lease script queues (Lua cannot decode the
//                       history entry)
#pragma once

#include "state/fetch_history.hpp"
#include "state/state_batch.hpp"
#include "state/work_item.hpp"
#include "store/redis_client.hpp"

#include <asiocrawl/control.hpp>
#include <asiocrawl/report.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl::detail {

class shared_store {
public:
    /// A host's scheduling set apart from the crawl's (politeness.delay, politeness.max_per_host): by the
    /// control API, or by the host's rule in the config. An empty field keeps what applies otherwise.
    using host_limits = asiocrawl::host_limits;

    struct settings {
        std::string crawl_id;
        std::string instance;
        std::chrono::milliseconds lease{30000};
        std::size_t max_per_host = 1;
        std::chrono::milliseconds delay{0};
        /// The limits of a host's rule in the config (crawler_config::hosts), if any: committed with the
        /// host's first URLs, so that the lease script spaces and caps the host crawl-wide.
        std::function<host_limits(const std::string& host)> rule_for = {};
    };

    shared_store(redis::client& client, settings s);

    /// Joins the crawl: the first instance writes the seed, the definition and whether the crawl is
    /// continuous, the others read them back. Returns the crawl's seed; throws crawl_error (state_mismatch)
    /// when the crawl under this id has another definition, or is continuous and this instance is not (or the
    /// other way round).
    boost::asio::awaitable<std::uint64_t> join(std::uint64_t fresh_seed, std::string definition,
                                               bool continuous = false);

    /// Commits a crawl_state batch in one script: new URLs are tested against the seen set and queued,
    /// finished leased URLs are removed (their host slot given back), retries keep their attempt count.
    /// Safe to repeat after a lost connection: a second run of the same batch changes nothing.
    boost::asio::awaitable<void> commit(const state_batch& batch);

    /// Which generation of the crawl this instance joins (docs/RECRAWL.md, "Shared crawls").
    struct generation_answer {
        std::uint32_t generation = 1;
        /// Every known URL is to be admitted to the new generation, from the history's scan cursor
        /// `admit_from`: this instance began the generation, or joined one whose admission is unfinished (its
        /// admitter may have been killed: admitting twice is harmless, the seen set takes each URL once).
        bool admit = false;
        std::string admit_from;
        /// The generation starts from the roots and follows links from the history (its pages said what they
        /// linked to); held open until wrapped up (claim_wrap_up).
        bool follows_links = false;
    };
    /// A re-crawl (`recrawl`) of a finished shared crawl that has a fetch history begins its next
    /// generation: the seen set and the instances' counters are cleared, and the crawl is held open (one
    /// unit of unfinished work) until every known URL is admitted (end_admission). Otherwise the generation
    /// under way is joined.
    boost::asio::awaitable<generation_answer> begin_generation(bool recrawl);
    /// Up to about `count` history entries from the scan cursor `cursor`, and the next cursor ("0" after the
    /// last); store_damaged when an entry does not decode.
    boost::asio::awaitable<std::pair<std::string, history_map>> scan_history(const std::string& cursor,
                                                                             std::size_t count);
    /// The admission has reached `cursor` (what a killed admitter's successor starts from).
    boost::asio::awaitable<void> admitted_to(const std::string& cursor);
    /// Every known URL is admitted: the hold begin_generation() took is released (once, whoever calls).
    boost::asio::awaitable<void> end_admission();

    struct leased {
        std::uint64_t id;
        work_item item;
        /// The URL's last fetch, for a re-crawl's conditional request and comparison (lease(with_history)).
        std::optional<fetch_history> before;
        /// The entries of the URLs `before` linked to that the generation has not admitted yet, which a 304
        /// stands for (lease(follow_links_of)).
        std::vector<std::pair<std::string, fetch_history>> known_outlinks = {};
    };
    struct lease_answer {
        std::vector<leased> items;
        std::int64_t unfinished = 0; ///< crawl-wide, after this lease
        /// When a host of the crawl may next start a fetch, if none could now (ms from now); -1 unknown.
        std::int64_t wait_ms = -1;
        /// The controls' version (read_controls() when it is not the one last read).
        std::int64_t controls_version = 0;
        /// Continuous mode: revisits that were due and went into the frontier in this lease, and when the
        /// next one is due (ms from now; -1: none scheduled).
        std::size_t revisits = 0;
        std::int64_t due_ms = -1;
        /// A generation that follows links is building its URL index: nothing is leased until it is built
        /// (claim_index, index_from).
        bool indexing = false;
    };
    /// Leases up to `max` URLs whose host may start a fetch now (crawl-wide cap and delay), of which at most
    /// `max_delayed` of hosts with a delay (the workers idle now: a delay runs from the lease, so such a URL
    /// must start at once), and first hands expired leases of any instance back to their host's line.
    /// `with_history`: each leased URL comes with its entry in the fetch history, if it has one (a re-crawl).
    /// `generation`: the one this instance joined; when the crawl is at another (over, and the next begun by
    /// a re-crawl), nothing is leased and `unfinished` is 0: the crawl this instance joined is finished.
    /// `follow_links`: a generation that follows links: each leased URL that may answer 304 also comes with
    /// the entries of its outlinks not admitted yet (crawl-wide).
    boost::asio::awaitable<lease_answer> lease(std::size_t max, std::size_t max_delayed,
                                               std::uint32_t generation, bool with_history = false,
                                               bool follow_links = false);

    /// The wrap-up of a generation that follows links (docs/RECRAWL.md, "Shared crawls"): when nothing waits
    /// or is leased, one instance claims it and gets the history scan cursor to go on from (nullopt: not due,
    /// or another instance holds the claim). The claim lasts a lease; wrapped_up_to() renews it.
    boost::asio::awaitable<std::optional<std::string>> claim_wrap_up();
    /// The URL index of a generation that follows links (`urlof`: which URL each outlink fingerprint of the
    /// history is), built from the history before anything of the generation is leased, so that a crawl
    /// that is never re-crawled keeps none. One instance claims the building (nullopt: built, or another
    /// holds the claim) and gets the history scan cursor to go on from.
    boost::asio::awaitable<std::optional<std::string>> claim_index();
    /// Indexes about a thousand history entries from `cursor` (`seed`: the crawl's, for the seen set's
    /// fingerprints); returns the next cursor ("0": built), or nullopt when the claim is not this
    /// instance's any more.
    boost::asio::awaitable<std::optional<std::string>> index_from(const std::string& cursor,
                                                                  std::uint64_t seed);
    /// The wrap-up has reached `cursor`; false when the claim is not this instance's any more.
    boost::asio::awaitable<bool> wrapped_up_to(const std::string& cursor);
    /// Every unreached URL is reported: the generation's hold is released, the crawl ends.
    boost::asio::awaitable<bool> end_wrap_up();
    /// Which of these fingerprints (url_fingerprint with the crawl's seed) the crawl-wide seen set holds.
    boost::asio::awaitable<std::vector<bool>> seen(const std::vector<std::uint64_t>& fingerprints);
    /// Extends the leases this instance holds. `reading_seeds`: this instance has a seed file not read to its
    /// end; while its mark lasts (a lease from this call) no other instance claims a wrap-up.
    boost::asio::awaitable<void> renew(const std::vector<std::uint64_t>& ids, bool reading_seeds = false);
    /// Ends the leases this instance holds now (a graceful stop): other instances take the URLs at once.
    boost::asio::awaitable<void> give_back(const std::vector<std::uint64_t>& ids);

    /// The control API's steering, crawl-wide (docs/CONTROL.md, "Shared crawls"): a paused host is leased
    /// to no instance until resumed (URLs leased already may finish); limits replace the host's delay and
    /// max_per_host for every instance's leases. Each change raises the controls' version.
    boost::asio::awaitable<void> pause(const std::string& host);
    /// False when the host was not paused.
    boost::asio::awaitable<bool> resume(const std::string& host);
    /// Sets the fields given, keeps the others.
    boost::asio::awaitable<void> set_limits(const std::string& host, host_limits limits);

    struct host_control {
        bool paused = false;
        host_limits limits; ///< the control API's (not a rule's)
    };
    struct controls {
        std::int64_t version = 0;
        std::map<std::string, host_control> hosts;
    };
    /// Every host paused or limited through the control API of any instance.
    boost::asio::awaitable<controls> read_controls();

    /// A robots.txt answer as the crawl keeps it for every instance.
    struct robots_answer {
        int status = 0;
        std::optional<std::string> location;
        std::string body;
    };
    /// The answer another instance fetched, if any younger than `max_age`.
    boost::asio::awaitable<std::optional<robots_answer>> cached_robots(const std::string& url,
                                                                       std::chrono::milliseconds max_age);
    /// True when this instance is the one to fetch `url` now (the others wait for its answer, at most a
    /// lease).
    boost::asio::awaitable<bool> claim_robots(const std::string& url);
    boost::asio::awaitable<void> store_robots(const std::string& url, const robots_answer& answer);

    struct status {
        std::int64_t unfinished = 0;
        std::int64_t leased = 0;
        std::int64_t admitted = 0;
        std::int64_t scheduled = 0; ///< continuous mode: URLs waiting in `due` for their revisit
        std::map<std::string, std::string> counters; ///< instance -> counters JSON
    };
    boost::asio::awaitable<status> read_status();

    /// The crawl's key prefix.
    const std::string& prefix() const noexcept { return prefix_; }

private:
    boost::asio::awaitable<void> add_history(std::vector<leased>& items);
    boost::asio::awaitable<void> add_known_outlinks(std::vector<leased>& items, std::uint32_t generation);
    boost::asio::awaitable<void> renew_for(const std::vector<std::uint64_t>& ids,
                                           std::chrono::milliseconds lease, const char* seeding);

    redis::client& client_;
    settings settings_;
    std::string prefix_;
    std::vector<std::string> host_names_; // crawl_state's host numbers -> names, from the batches
    struct script {
        const char* text;
        std::string sha;
        boost::asio::awaitable<redis::reply> run(redis::client& client, std::vector<std::string> args);
    };
    script commit_;
    script lease_;
    script renew_;
    script generation_;
    script admission_;
    script known_outlinks_;
    script index_;
    script wrap_up_;
    script control_;
};

/// A host's limits as the `limits` and `rule_limits` hashes keep them: {"delay_ms": N, "max_per_host": N}.
std::string limits_json(const shared_store::host_limits& limits);
/// Nullopt when `json` is not what limits_json() writes.
std::optional<shared_store::host_limits> parse_limits_json(std::string_view json);

/// The combined report of a shared crawl from every instance's counters (crawl_state's counters JSON, as
/// the instances commit them): counters and done summed, started at the earliest start, elapsed the
/// longest, runs counted over every instance. A counters document that does not parse is skipped and
/// named in `skipped`.
report combined_report(const std::map<std::string, std::string>& counters_by_instance,
                       std::vector<std::string>* skipped = nullptr);

/// The default crawl id: a short hash of the crawl definition.
std::string default_crawl_id(const std::string& definition);

} // namespace asiocrawl::detail
