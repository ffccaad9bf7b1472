// The crawl's decisions, with no sockets and no Asio: which URL is admitted, which may start now, what an
// answer means (retry, redirect, robots.txt, links), what record it makes. crawler.cpp is the I/O loop around
// it: its workers fetch what next() hands out and tell the state what came back.
#pragma once

#include "html/page_links.hpp"
#include "state/autothrottle.hpp"
#include "state/due_index.hpp"
#include "state/fetch_history.hpp"
#include "state/fetch_outcome.hpp"
#include "state/fingerprint_set.hpp"
#include "state/frontier.hpp"
#include "state/seed_lines.hpp"
#include "state/state_batch.hpp"
#include "state/work_item.hpp"

#include "policy/host_rules.hpp"
#include "policy/robots.hpp"
#include "policy/scope.hpp"
#include <asiocrawl/config.hpp>
#include <asiocrawl/control.hpp>
#include <asiocrawl/report.hpp>
#include <asiocrawl/sink.hpp>

#include <boost/json/object.hpp>
#include <boost/url/url.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace asiocrawl::detail {

/// RFC 9309 2.4: crawlers SHOULD NOT use a cached robots.txt for more than 24 hours (a shared crawl's copy
/// in Redis included).
inline constexpr std::chrono::hours robots_cache_lifetime{24};

/// Events in: start, next() when a worker may take work, on_response() when an attempt ended, on_links()
/// when a page's links are known, refills of spilled URLs, stop(). Actions out: tickets to fetch (next()),
/// when to call next() again (next_wakeup()), records (hooks::emit), the durable changes to commit
/// (take_batch()) and the spilled URLs to read back (take_refills()).
///
/// Every admitted URL is counted once through hooks::hold and ends in exactly one of: a ticket handed to a
/// worker (the worker's task_done ends it), or hooks::release (finished without a worker: robots.txt denied
/// it). That count is the work queue's unfinished-task counter, so the crawl ends when the state has nothing
/// left.
class crawl_state {
public:
    using clock_type = std::chrono::steady_clock;
    using time_point = clock_type::time_point;
    /// The calendar, for what records and the report say about when things happened, and for Retry-After
    /// dates.
    using wall_clock_type = std::chrono::system_clock;
    using frontier_type = host_frontier<work_item>;

    /// How the state reaches the loop around it. All are called synchronously, from inside the state's own
    /// member functions.
    struct hooks {
        /// Counts one more unfinished URL; false when the crawl is closing (the URL is then not admitted).
        std::function<bool()> hold;
        /// A URL counted by hold() finished without reaching a worker.
        std::function<void()> release;
        /// A record is final (the embedder's record sink).
        record_sink emit;
        /// Messages (the embedder's logger).
        logger log;
    };

    /// An item handed out by next(), with its host slot: the slot is given back when the ticket is
    /// destroyed or release_slot() is called, whatever happened to the fetch.
    struct ticket {
        work_item item;
        frontier_type::slot slot;
        time_point started_at{}; ///< fetch_started(): the start of the latency autothrottle measures
        /// Set by a re-crawl when this answer repeats the previous generation's capture: what an archive's
        /// revisit record refers to (the target URI is the item's URL).
        struct earlier_capture {
            bool not_modified = false; ///< a 304 (else an identical payload)
            wall_clock_type::time_point date{};
            std::string payload_digest;
            std::string record_id; ///< its WARC-Record-ID, when the history knows it
        };
        std::optional<earlier_capture> revisit;
        /// What this answer led the crawl to (fetch_history::outlinks), for the next generation.
        std::vector<std::uint64_t> outlinks;
        bool outlinks_overflow = false;
        /// The WARC-Record-ID the fetch history gives this answer's capture (http_exchange::record_id);
        /// empty when the history keeps none (a revisit, a retried attempt, a crawl without a state).
        std::string capture_record_id;
        /// A re-crawl whose history stays in the store (history_in_store()): the entries of the known URLs
        /// this ticket's last answer linked to and this generation had not reached when it was read (their
        /// outlinks left out), for a 304 to admit again (on_history(), on_known_outlinks()).
        std::vector<std::pair<std::string, fetch_history>> known_outlinks;
    };

    /// What on_response() leaves to the caller.
    enum class next_step {
        done,         ///< handled: a record was made, or a retry scheduled
        parse_page,   ///< a 2xx HTML page: extract its links, call on_links(), then finish()
        record_ready, ///< the record is made: finish() it (after the body sink, for a 2xx body)
    };

    /// The waiting URLs a durable crawl holds in memory per host: `window`, raised to twice what the host
    /// may have in flight at once.
    static std::size_t effective_window(const crawler_config& config, std::size_t window) noexcept;

    /// `config` must outlive the state. `durable`: keep a state_batch of every change for a store, and keep
    /// at most `window` waiting URLs per host in memory (the rest are spilled and read back in order).
    /// `now` is the clock and `wall_now` the calendar (tests pass manual ones). Throws std::invalid_argument
    /// for an unusable config.
    crawl_state(const crawler_config& config, hooks h, bool durable, std::size_t window = 0,
                time_point (*now)() = &frontier_type::steady_now, std::uint64_t seed = std::random_device{}(),
                wall_clock_type::time_point (*wall_now)() = &wall_clock_type::now);

    // ---- lifecycle ----

    /// Restores a resumed crawl: hosts, waiting counts and counters (the fingerprints are already in
    /// seen_set()). Call before start().
    void restore(const restored_state& restored);
    /// Admits the roots (again, after a restore: they are seen already) and, without robots.txt, the
    /// sitemaps of their origins. Returns the number of URLs waiting afterwards.
    void start();
    /// No new URL is admitted or started; waiting ones are dropped from memory (a durable crawl keeps them).
    void stop();
    bool stopping() const noexcept { return stopping_; }
    /// True once a budget (crawler_config::quota, max_time) is spent: the loop should then stop() the crawl
    /// as a signal would. Logs and counts the reason the first time.
    bool out_of_budget();
    /// URLs a durable crawl admitted (or kept for another attempt) while stopping: they wait on disk for the
    /// next run, uncounted by hooks::hold, and belong to the report's todo.
    std::size_t deferred() const noexcept { return deferred_; }

    // ---- the frontier ----

    /// The next item that may start now (robots.txt of its origin first, when unknown). Items robots.txt
    /// denies get their record here and are released.
    std::optional<ticket> next();
    /// When next() may hand out something it cannot now; nullopt when only an event can change that.
    std::optional<time_point> next_wakeup() const;
    /// Spilled URLs to read back: (host, from sequence, how many).
    struct refill_request {
        host_id host;
        std::uint64_t from_seq;
        std::size_t count;
    };
    std::vector<refill_request> take_refills();
    /// The items read back for a refill_request, in sequence order (fewer than asked, or none, is fine).
    void on_refill(host_id host, std::vector<std::pair<std::uint64_t, std::string>> items);

    // ---- seeds (crawler_config::input_file) ----

    /// The crawl runs low on work and the seed file has more: the loop should read a chunk for on_seeds().
    /// `unfinished`: the URLs counted by hooks::hold and not done (waiting here, queued for a worker, or in
    /// flight), which only the loop knows.
    bool wants_seeds(std::size_t unfinished) const;
    /// A chunk of the seed file: its lines are admitted as roots and extend the scope as roots do; a line
    /// that is not an http(s) URL is logged with its line number and counted as skipped_invalid_seed. The
    /// crawl does not end before the chunk that says `end`.
    void on_seeds(seed_chunk chunk);
    /// The seed file has lines not admitted yet (a shared crawl tells the other instances so).
    bool reading_seeds() const noexcept { return seed_hold_; }
    /// Where the seed file is to be read from: after restore(), where the previous runs stopped.
    seed_position seeds_read() const noexcept { return seed_position_; }

    // ---- one attempt ----

    /// The attempt starts now. False (and a record) when the URL cannot be fetched at all.
    bool begin_attempt(ticket& t);
    /// What came back. With parse_page and record_ready, `page` holds the record being made.
    next_step on_response(ticket& t, const fetch_outcome& response, record& page);
    /// The links of a page that on_response() asked to parse: admits them and counts them in `page`.
    void on_links(ticket& t, record& page, const resolved_links& links);
    /// The item's record is final: emits it, and the item never waits again.
    void finish(ticket& t, record&& r);

    // ---- re-crawls (docs/RECRAWL.md) ----

    /// A re-crawl: what the earlier generations fetched (URL -> last fetch) and this generation's number.
    /// `new_generation`: start() admits every URL of `history` after the roots (a resumed generation has them
    /// waiting already). Call before start().
    void set_history(history_map history, std::uint32_t generation, bool new_generation);
    /// Records say how each URL changed (record::change), and known URLs are fetched conditionally.
    bool recrawling() const noexcept { return recrawling_; }
    /// 1 for a first crawl, one more for each re-crawl of the same state.
    std::uint32_t generation() const noexcept { return generation_; }
    /// What an earlier generation fetched at `url` and this one has not fetched yet (in continuous mode: the
    /// URL's last fetch); nullptr otherwise. Valid until the URL's record is made.
    const fetch_history* previous(std::string_view url) const;
    /// What a conditional request for `url` sends its validators from: previous(url), unless this re-crawl
    /// must see the body (a 304 would hide links it cannot follow from the history). nullptr: fetch in full.
    const fetch_history* conditional_basis(std::string_view url) const;
    /// A re-crawl that follows links (docs/RECRAWL.md): the new generation reaches known URLs through the
    /// pages that link to them (a 304's links from the history), and reports those it no longer reaches as
    /// gone. False for recrawl_from, continuous mode, and a history written without outlinks: then every
    /// known URL is admitted at once.
    bool follows_links() const noexcept { return follow_links_; }
    /// The loop calls this when the work it counts changed: true when the generation has reached all it
    /// will (only the state's own unit of work is left), and wrap_up_generation() is due.
    bool wants_wrap_up(std::size_t unfinished) const noexcept;
    /// Reports every known URL this generation did not reach as gone (no fetch: status 0, tries 0), forgets
    /// them, and releases the unit of work that kept the crawl open. Nothing with the history in the store:
    /// the loop calls the overload with what it read.
    void wrap_up_generation();
    /// A shared re-crawl's new generation over a history without outlinks (docs/RECRAWL.md, "Shared crawls"):
    /// admits the known URLs of `known`, one chunk of the history at a time, as admit_known() admits the
    /// whole history; returns how many were admitted.
    std::size_t admit_known_from(const history_map& known);
    /// A shared re-crawl's generation (docs/RECRAWL.md, "Shared crawls"): the history stays in Redis, each
    /// leased URL brings its entry and, when `follows_links`, the entries of its outlinks not admitted yet
    /// (take_leased). Call before start(), instead of set_history().
    void set_shared_history(std::uint32_t generation, bool follows_links);
    /// A shared generation that follows links, wrapped up by this instance: these known URLs no page of it
    /// leads to (the crawl-wide seen set lacks them) are recorded gone and forgotten (the batch deletes
    /// them).
    void report_gone_shared(const std::vector<std::pair<std::string, fetch_history>>& unreached);
    /// A re-crawl over a state directory that follows links (docs/RECRAWL.md, "Memory during a re-crawl"):
    /// the history stays in the store. `known`: outlink_fingerprint() of every known URL this generation has
    /// not admitted yet (8 bytes each, the only per-URL memory it takes); each is erased when its URL is
    /// admitted. The loop reads a ticket's entry before it is fetched (on_history()) and, when the generation
    /// has reached all it will, the entries it did not fetch (wrap_up_generation(not_fetched)). Call before
    /// start(), instead of set_history().
    void set_history_in_store(fingerprint_set known, std::uint32_t generation);
    bool history_in_store() const noexcept { return history_in_store_; }
    /// The ticket's entry as the store has it (nullopt: none). An entry this generation wrote already is not
    /// the previous one and is ignored. Held until the URL's record is made (previous() answers it). Returns
    /// the outlink fingerprints of the entry whose entries the loop reads next (known, not admitted yet),
    /// for on_known_outlinks().
    std::vector<std::uint64_t> on_history(ticket& t, std::optional<fetch_history> before);
    /// The entries the store has for (some of) the fingerprints on_history() asked for: (url, entry).
    void on_known_outlinks(ticket& t, std::vector<std::pair<std::string, fetch_history>> known);
    /// history_in_store(): as wrap_up_generation(), over `not_fetched`: the store's entries of an earlier
    /// generation (not fetched in this one), in URL order; those this generation did not reach are gone.
    void wrap_up_generation(std::vector<std::pair<std::string, fetch_history>> not_fetched);
    /// A known URL (robots.txt's aside) that this generation has not admitted: gone at the wrap-up.
    bool unreached_now(std::string_view url, const fetch_history& h) const;
    /// False when a budget skipped URLs: the known URLs not reached are then not known to be gone, and the
    /// wrap-up reports none (there is nothing to read for it).
    bool wrap_up_reports_gone() const;
    /// History entries held in memory now, and the most held at once in this run (tests, the bench).
    std::size_t history_held() const noexcept { return history_.size(); }
    std::size_t history_held_peak() const noexcept { return history_held_peak_; }
    /// Continuous mode (crawler_config::continuous): URLs scheduled for a revisit and not yet due (with the
    /// schedule in the store: those in the window; in a shared crawl none, the schedule is Redis's).
    std::size_t revisits_scheduled() const noexcept { return due_.size() + due_window_.size(); }

    // ---- continuous mode with the schedule in the store (docs/RECRAWL.md, "Continuous mode") ----

    /// Continuous mode over a state directory: no URL's history stays in memory. The schedule is the store's
    /// due-time index (key `D`, due_index.hpp), which the batches keep with the entries; the state holds at
    /// most about `window` of the next due URLs (what each needs to be admitted, not its history), read
    /// through take_due_read()/on_due_read(), and the entries of the tickets being fetched, which the loop
    /// reads as in a re-crawl with its history in the store (on_history()). Call before start(), instead of
    /// set_history().
    void set_schedule_in_store(std::uint32_t generation, std::size_t window = 1024);
    bool schedule_in_store() const noexcept { return schedule_in_store_; }
    /// A read of the due-time index the state wants: up to `count` keys from `from` on. Take it right after
    /// take_batch() and make it after that batch is written (the index must hold every change the state made
    /// before it); nullopt when the window is full enough, the index is read to its end, or a read is under
    /// way.
    struct due_read {
        due_key from;
        std::size_t count = 0;
    };
    std::optional<due_read> take_due_read();
    /// What the read found: keys in order, each with the URL's entry (nullopt: none, the key is skipped).
    void on_due_read(std::vector<std::pair<due_key, std::optional<fetch_history>>> rows);
    /// The URLs whose entries a sitemap's <lastmod> wants read (they may be due sooner), taken with the
    /// batch as take_due_read() is; empty when none wait or a read is under way.
    std::vector<std::string> take_hint_read();
    /// Their entries, in the same order (nullopt: not known): those the hint makes due sooner are scheduled
    /// again, unless the state queued, fetched or scheduled them meanwhile (their own visit decides then).
    void on_hint_read(std::vector<std::optional<fetch_history>> entries);
    /// URLs in the window now, and the most at once in this run (tests, the bench).
    std::size_t due_window_held() const noexcept { return due_window_.size(); }
    std::size_t due_window_peak() const noexcept { return due_window_peak_; }

    // ---- durability ----

    bool durable() const noexcept { return durable_; }
    /// A shared crawl (docs/DEPLOY.md): a durable state whose admitted URLs go only into the batch, for a
    /// shared frontier that hands them to whichever instance leases them (take_leased()). Call before
    /// start().
    void set_shared() noexcept { shared_ = true; }
    /// A shared crawl in continuous mode: the lease script queued `n` due revisits (the `revisits` counter).
    void count_shared_revisits(std::size_t n);
    bool shared() const noexcept { return shared_; }
    /// A URL this instance leased from the shared frontier, under the shared frontier's `id` (its seq: the
    /// batch's finished entries name it). Counted by hooks::hold; false when the crawl is closing.
    /// `before`: the URL's last fetch in a re-crawl (shared_store::lease with_history), kept until its record
    /// is made as previous() answers it.
    /// `known_outlinks`: what a 304 of it stands for (shared_store::leased::known_outlinks).
    bool take_leased(std::uint64_t id, work_item item, std::optional<fetch_history> before = std::nullopt,
                     std::vector<std::pair<std::string, fetch_history>> known_outlinks = {});
    /// The changes since the last call (empty when not durable).
    state_batch take_batch();
    /// Where the archive put the captures named in `batch` (the outputs' flush before its commit): their
    /// history entries say so. A capture's exchange reaches the archive in the same step as its entry enters
    /// the batch, so a flush after take_batch() covers every capture the batch names.
    void place_captures(state_batch& batch, const std::vector<archived_capture>& archived);
    /// The counters as JSON, for the batch and for restore().
    std::string counters_json() const;
    fingerprint_set& seen_set() noexcept { return seen_; }
    std::uint64_t seed() const noexcept { return seed_; }
    /// A resumed crawl hashes with the seed it began with. Call before anything is admitted.
    void set_seed(std::uint64_t seed) noexcept { seed_ = seed; }

    // ---- what the loop reads ----

    report& result() noexcept { return result_; }
    crawl_progress progress() const;
    /// Waiting URLs held in memory (the rest of a durable crawl's wait on disk).
    std::size_t in_memory_waiting() const noexcept { return frontier_.in_memory(); }
    /// Requests in flight (begin_attempt .. release of the slot).
    std::size_t in_flight() const noexcept { return in_flight_; }
    /// The ticket is in flight from now. `request_now`: its request starts now, and its host's delay counts
    /// from here; false for a shared crawl's robots.txt, which may come from Redis without a request (then
    /// request_started() when it is fetched here after all).
    void fetch_started(ticket& t, bool request_now = true);
    void request_started(ticket& t) { t.slot.started(); }
    void fetch_finished(ticket& t);
    const std::string& user_agent() const noexcept { return agent_; }
    void set_logger(logger log) { hooks_.log = std::move(log); }
    /// A bug, not the URL's fault, stopped the processing of a ticket: it gets a record (a robots.txt fetch
    /// counts as failed) and the crawl goes on.
    void internal_error(ticket& t, std::string_view failure);

    // ---- steering (crawl_state_control.cpp, docs/CONTROL.md) ----

    /// What the control API changed for a host, by host name (a host not seen yet included): kept in the
    /// counters of a durable crawl, applied when the host gets its number.
    struct host_control {
        bool paused = false;
        std::optional<clock_type::duration> delay;
        std::optional<std::size_t> max_per_host;
    };
    /// `how` ends the log line (empty: a call here; else how the change came, as from another instance).
    void pause_host(std::string_view host, std::string_view how = {});
    /// False when the host was not paused.
    bool resume_host(std::string_view host, std::string_view how = {});
    void set_host_limits(std::string_view host, std::optional<clock_type::duration> delay,
                         std::optional<std::size_t> max_per_host, std::string_view how = {});
    /// A shared crawl: the controls every instance set through Redis, by host, made this instance's (pauses
    /// and limits set, hosts paused here and not there resumed). `how` as for pause_host.
    void mirror_controls(const std::map<std::string, host_control, std::less<>>& shared,
                         std::string_view how);
    /// URLs held in memory for hosts paused now: a shared crawl's lease loop leases others beside them.
    std::size_t paused_waiting() const;
    /// Admits a URL as a link (depth 0, scope and filters, max_pages). Empty when admitted, else why not.
    std::string admit_seed(std::string_view url);
    std::vector<host_status> host_statuses() const;
    /// The header fields of the rule `url` falls under (crawler_config::hosts), "Name: value\r\n" each.
    std::string_view rule_fields(std::string_view url) const;
    url_page list_urls(const url_query& query) const;
    /// The failures list_urls() keeps.
    static constexpr std::size_t kept_failures = 1000;

private:
    struct origin_robots {
        enum class state { unknown, fetching, known } status = state::unknown;
        robots_rules rules = robots_rules::allow_all();
        bool unavailable = false;              // 5xx or unreachable: everything disallowed until retry_at
        boost::system::error_code unreachable; // the network error, when the origin could not be reached
        std::string cause;     // unavailable: what robots.txt answered or how its fetch failed, and the tries
        time_point retry_at{}; // when robots.txt is fetched again (unavailable_retry, or a day when known)
        std::vector<host_id> blocked; // hosts whose next item waits for this robots.txt
    };

    template <class... Parts>
    void say(log_level level, const Parts&... parts) {
        if (!hooks_.log.enabled(level))
            return;
        std::ostringstream message;
        (message << ... << parts);
        hooks_.log.write(level, message.str());
    }

    void skip(std::string_view reason, std::uint64_t n = 1);
    /// A host's delay from the configured one (or its control's), its robots.txt Crawl-delay and
    /// autothrottle, into the frontier.
    void apply_delay(host_id host, bool from_last_start);
    void apply_control(host_id host, const host_control& control);
    void count_for_host(const record& r);
    boost::json::object controls_json() const;
    void restore_controls(const boost::json::object& saved);
    host_id host_number(std::string_view host);
    bool admit(const boost::urls::url& url, const std::string& referrer, int redirects_left, int depth,
               item_kind kind, bool from_sitemap, requisite_kind requisite = requisite_kind::image,
               bool guessed = false);
    /// admit() for a normalized URL as text (its key) and its url_fingerprint (known to admit_page_links
    /// already: not hashed twice).
    bool admit(std::string_view key, std::uint64_t fp, const std::string& referrer, int redirects_left,
               int depth, item_kind kind, bool from_sitemap, requisite_kind requisite = requisite_kind::image,
               bool guessed = false);
    void push_waiting(host_id host, work_item item);
    bool in_scope(boost::urls::url_view url);
    void emit(record r);
    /// X-Robots-Tag and a Link rel=canonical of a page's answer, into its record.
    void read_page_headers(const fetch_outcome& response, record& r);
    void deny(work_item item, host_id host, boost::system::error_code why, std::string_view detail = {});
    void finished(const work_item& item, host_id host);
    void line_changed(host_id host);
    bool retry_later(ticket& t, const fetch_outcome& response);
    void robots_fetched(ticket& t, const fetch_outcome& response);
    void follow_redirect(ticket& t, const fetch_outcome& response, record& r);
    void note_downgrade(std::string_view from, std::string_view to);
    void admit_links(const std::vector<boost::urls::url>& urls, const std::string& referrer, int depth,
                     bool from_sitemap, record& r);
    /// admit_links() for a page's links as resolve_links gives them: normalized URLs as text, parsed only
    /// when their scope is not known yet (in_scope_memo_).
    void admit_page_links(const std::vector<std::string>& urls, const std::string& referrer, int depth,
                          record& r);
    // Page requisites (crawl_state_requisites.cpp).
    bool requisite_in_scope(const boost::urls::url& url, boost::urls::url_view page);
    std::pair<std::size_t, std::size_t> admit_requisites(const std::vector<resolved_requisite>& found,
                                                         const work_item& from);
    void read_stylesheet(ticket& t, const fetch_outcome& response, record& r);
    void queue_sitemaps_of(const std::string& origin, const std::vector<std::string>& declared);
    void queue_sitemap(ticket& t, const fetch_outcome& response, record& r);
    std::int64_t micros_since_start() const;
    void complete(ticket& t, record&& r);
    void admit_known();
    void replay_outlinks(ticket& t, const fetch_history& before, record& r);
    void report_unreached(std::vector<std::pair<std::string_view, const fetch_history*>> unreached);
    void report_gone(std::string_view url, const fetch_history& h);
    void note_held() noexcept { history_held_peak_ = std::max(history_held_peak_, history_.size()); }
    /// While it lives, admit() notes what `t`'s answer leads to in t.outlinks (a durable one-shot crawl's
    /// history, a state directory's or a shared crawl's: continuous mode does not read them).
    class collect_outlinks {
    public:
        collect_outlinks(crawl_state& s, ticket& t) noexcept
            : s_(s) {
            if (s.durable_ && !s.schedule_)
                s.collecting_ = &t;
        }
        ~collect_outlinks() { s_.collecting_ = nullptr; }
        collect_outlinks(const collect_outlinks&) = delete;
        collect_outlinks& operator=(const collect_outlinks&) = delete;

    private:
        crawl_state& s_;
    };
    void forget_known(history_map::iterator entry);
    void name_capture(ticket& t, const fetch_history* before, fetch_history& after);
    /// The history entry of a URL the next generation must know though it got no answer (status 0).
    void write_unanswered(const work_item& item);
    void remember_unanswered(const work_item& item);
    void remember_kept_out(std::string_view url, std::uint64_t fp, const std::string& referrer, int depth,
                           item_kind kind, bool from_sitemap, requisite_kind requisite);
    void compare_with_history(ticket& t, record& r);
    void schedule_revisit(const record& r, const fetch_history* before, fetch_history& after);
    void release_due_revisits();
    void release_due_from_window();
    void index_due(const std::string& url, const fetch_history* before, const fetch_history& after);
    void window_insert(due_key key, work_item item);
    work_item revisit_item(const fetch_history& h) const;
    void apply_sitemap_hints(std::string_view url, const sitemap_hints& hints);
    std::chrono::sys_seconds wall_seconds() const;

    const crawler_config& config_;
    hooks hooks_;
    bool durable_;
    time_point (*now_)();
    std::uint64_t seed_;
    wall_clock_type::time_point (*wall_now_)();
    std::vector<boost::urls::url> roots_;
    std::unordered_set<std::string> root_origins_;
    scope scope_;
    host_rules rules_;                        // crawler_config::hosts
    std::vector<std::size_t> rule_pages_;     // per rule: URLs admitted under it (its max_pages)
    std::vector<std::string> rule_fields_;    // per rule: its headers as request lines
    std::vector<const host_rule*> host_rule_; // per host: its host-pattern rule, or null
    std::vector<char> obeys_robots_;          // per host: robots.obey, or its rule's obey_robots
    fingerprint_set seen_;
    // URLs a budget kept from being admitted and whose unanswered history entry is written already (at most
    // max_kept_out_remembered of them).
    fingerprint_set kept_out_;
    // The URLs max_pages counts (roots, links, redirect targets, requisites): not robots.txt or sitemaps.
    // Persisted with the counters; a state from before it was kept starts from seen_'s size.
    std::size_t pages_admitted_ = 0;
    bool pages_admitted_known_ = false;
    /// URLs scope_.check() answered in_scope for, by fingerprint: a verdict that cannot change for the same
    /// URL, so admit_page_links skips the parse and the check for a link seen in scope before. Bounded:
    /// 65,536 slots, 512 KiB once a page had a link.
    fingerprint_memo in_scope_memo_{1u << 16};
    frontier_type frontier_;
    std::vector<std::string> host_names_;
    std::unordered_map<std::string, host_id> host_numbers_;
    std::vector<std::uint64_t> next_seq_;    // per host: the sequence of its next admitted URL
    std::vector<std::uint64_t> refill_from_; // per host: the sequence of its first spilled URL
    std::vector<std::uint64_t>
        durable_waiting_;            // per host: URLs with a durable copy (admitted, not finished)
    std::vector<bool> line_changed_; // per host: its line goes into the next batch
    std::vector<host_id> changed_lines_;
    std::vector<std::string> origin_names_; // robots_for indexes
    std::unordered_map<std::string, origin_robots> robots_;
    // "https://a -> http://b" for each pair of origins whose downgrading redirect was warned about (bounded:
    // past max_downgrade_warnings, downgrades are only counted).
    std::unordered_set<std::string> downgrades_warned_;
    state_batch batch_;
    report result_;
    const std::string agent_;
    std::mt19937_64 random_;
    time_point started_{};
    std::chrono::microseconds previous_elapsed_{0}; // the runs before this one, for a resumed crawl
    std::size_t in_flight_ = 0;
    std::size_t retries_ = 0;
    std::size_t failures_ = 0;
    std::size_t robots_denied_ = 0;
    std::uint64_t bytes_ = 0;
    std::size_t deferred_ = 0;
    bool stopping_ = false;
    bool counters_changed_ = false;
    bool shared_ = false;
    // Seeds: how far the file was read, whether it ended, and the unit of unfinished work that keeps the
    // crawl from ending before it does.
    seed_position seed_position_;
    bool seeds_done_ = false;
    bool seed_hold_ = false;
    std::size_t seed_warnings_ = 0;
    std::optional<autothrottle> throttle_; // politeness.autothrottle.enabled
    // Re-crawls: the previous generations' fetches of the URLs not yet fetched in this one.
    history_map history_;
    std::uint32_t generation_ = 1;
    bool recrawling_ = false;
    bool admit_known_ = false;
    // A re-crawl that follows links: the known URLs by outlink_fingerprint() (keys of history_), the ticket
    // whose answer's admissions are being collected as its outlinks, and the unit of work that keeps the
    // crawl open until the unreached URLs are reported.
    bool follow_links_ = false;
    std::unordered_map<std::uint64_t, std::string_view> known_by_fingerprint_;
    ticket* collecting_ = nullptr;
    bool wrap_up_hold_ = false;
    // A re-crawl whose history stays in the store (set_history_in_store): history_ holds the entries of
    // the tickets being fetched only, and known_ the outlink fingerprints of the known URLs not admitted yet.
    bool history_in_store_ = false;
    fingerprint_set known_;
    std::size_t history_held_peak_ = 0;
    // A shared re-crawl that follows links: by leased URL, the entries of its links a 304 stands for.
    std::unordered_map<std::string, std::vector<std::pair<std::string, fetch_history>>, url_hash,
                       std::equal_to<>>
        leased_outlinks_;
    // Continuous mode: the revisit schedule, the URLs by when they are due (an entry whose history says
    // another time is stale and skipped), and the unit of unfinished work that keeps the crawl from ending.
    std::optional<revisit_schedule> schedule_;
    std::multimap<std::chrono::sys_seconds, std::string> due_;
    // A sitemap's hints for URLs not fetched yet: their <changefreq> gives their first interval.
    std::unordered_map<std::string, sitemap_hints, url_hash, std::equal_to<>> sitemap_hints_;
    bool continuous_hold_ = false;
    // Continuous mode with the schedule in the store (set_schedule_in_store): the window holds every URL of
    // the due-time index whose key is below due_horizon_ (nullopt: the whole index), each with what it is
    // admitted with; the rest is on disk only. A read under way (due_read_from_) reads from the horizon it
    // had; what the state schedules at or past it meanwhile is not in that read and is remembered until it
    // comes back (due_changed_in_read_: keys written or deleted meanwhile, in order). A window
    // that grows past its bound drops its last keys and lowers the horizon (due_horizon_lowered_: a read
    // under way then is ignored).
    bool schedule_in_store_ = false;
    std::size_t due_window_limit_ = 0;
    std::map<due_key, work_item> due_window_;
    std::optional<due_key> due_horizon_;
    std::optional<due_key> due_read_from_;
    bool due_horizon_lowered_ = false;
    std::size_t due_read_count_ = 0;
    std::vector<std::pair<due_key, std::optional<work_item>>> due_changed_in_read_; // in order; nullopt: gone
    // A sitemap's <lastmod>s for URLs whose entries are on disk (bounded as sitemap_hints_), those being read
    // (take_hint_read), and the URLs the state scheduled or queued while that read is under way.
    std::unordered_map<std::string, sitemap_hints, url_hash, std::equal_to<>> lastmod_hints_;
    std::vector<std::pair<std::string, sitemap_hints>> lastmod_reading_;
    std::unordered_set<std::string, url_hash, std::equal_to<>> touched_in_hint_read_;
    std::size_t due_window_peak_ = 0;
    // Steering: controls by host name (persisted with the counters), robots.txt Crawl-delay floors, per-host
    // counts for host_statuses(), and the latest failures for list_urls().
    std::map<std::string, host_control, std::less<>> controls_;
    std::vector<clock_type::duration> robots_delay_;
    std::vector<std::uint64_t> host_done_;
    std::vector<std::uint64_t> host_failures_;
    struct failed_url {
        std::string url;
        std::string error_kind;
        int status = 0;
        std::string detail;
    };
    std::deque<failed_url> recent_failures_;
    // Budgets (crawler_config::quota, max_time).
    std::optional<time_point> deadline_;
    bool budget_spent_ = false;
};

/// Whether a re-crawl's wrap-up may call the known URLs it did not reach gone, from the counters of the crawl
/// (one instance's, or every instance's in a shared crawl): not when a budget skipped URLs, which leaves
/// known ones unreached that are not gone.
bool unreached_are_gone(const counters& stats);

/// "scheme://host[:port]" of a normalized URL string: the robots.txt key (RFC 9309 2.3: per origin).
std::string_view origin_of(std::string_view url) noexcept;
/// The host of a normalized URL string: the politeness key.
std::string_view host_of(std::string_view url) noexcept;

} // namespace asiocrawl::detail
