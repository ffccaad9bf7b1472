// The crawl engine behind asiocrawl::crawler: what the concurrent parts share, and the parts themselves.
// docs/ARCHITECTURE.md, "The engine", draws it. Private to src/engine/.
//
// Parts (each a component in a file of its own, started and joined by crawler::impl::run with awaitable
// operators):
// - frontier_pump: moves tickets the crawl state lets start into the work queue, and wakes up when the next
//   delay or backoff ends.
// - seed_feeder: reads the seed file (crawler_config::input_file) a chunk at a time when the state wants
// more.
// - worker_pool: max_tasks workers, each one ticket at a time from get() to exactly one task_done().
// - committer: with a state store, writes the state's changes (group commit) and reads spilled URLs back.
// - lease_loop: in a shared crawl, leases URLs from Redis and ends when the whole crawl has nothing left.
// Stopping has two levels (stop_level): graceful (stop taking new work, in-flight fetches finish, the last
// changes are committed) and terminal (also cancels every worker's await).
#pragma once

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/sink.hpp>

#include "engine/async_event.hpp"
#include "engine/parse_lanes.hpp"
#include "engine/seed_reader.hpp"
#include "engine/work_queue.hpp"
#include "http/fetcher.hpp"
#include "policy/host_rules.hpp"
#include "state/crawl_state.hpp"
#include "store/redis_client.hpp"
#include "store/shared_store.hpp"
#include "store/state_store.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_set>

namespace asiocrawl::detail {

struct engine;

/// HSTS's known hosts in a state dir (wget2's format, docs/STATE.md).
inline constexpr const char* state_hsts_file = "hsts.txt";

/// How far a stop has gone. Only ever rises.
enum class stop_level {
    none,     ///< crawling
    graceful, ///< stop(), a budget spent, partial cancellation: no new work; in-flight fetches finish
    terminal, ///< abort(), terminal cancellation, a store that failed: in-flight fetches are cancelled too
};

/// Moves every ticket that may start now into the work queue (pump(), called synchronously after every
/// event that may free or add work), and sleeps in run() until the next delay or backoff ends.
class frontier_pump {
public:
    explicit frontier_pump(engine& e);
    void pump();
    /// Until close(): sleeps until the state's next wake-up (or an earlier one that pump() announces), then
    /// pumps.
    boost::asio::awaitable<void> run();
    /// No more pumping; run() returns.
    void close();

private:
    boost::asio::awaitable<void> expiry();
    boost::asio::awaitable<void> wake_loop();
    /// A re-crawl whose history stays in the store (crawl_state::history_in_store): reads the entries of the
    /// tickets next() handed out, on the storage thread, before they go into the work queue; and the
    /// entries not fetched in this generation when it wraps up.
    boost::asio::awaitable<void> load_loop();
    boost::asio::awaitable<void> load_history(std::vector<crawl_state::ticket> tickets);
    boost::asio::awaitable<void> wrap_up_from_store();

    engine& e_;
    boost::asio::steady_timer timer_;
    crawl_state::time_point sleeping_until_ = crawl_state::time_point::max();
    async_event rearm_; ///< an earlier wake-up, or close()
    bool closed_ = false;
    std::vector<crawl_state::ticket> loading_; ///< tickets whose history entry is to be read
    async_event load_;                         ///< loading_ or wrap_up_wanted_ got something, or close()
    bool wrap_up_wanted_ = false;
    bool wrapping_up_ = false;
};

/// Reads the seed file on a thread of its own, a chunk at a time, whenever the state wants more.
class seed_feeder {
public:
    explicit seed_feeder(engine& e);
    /// The state may want seeds now (called by the pump).
    void want();
    /// Until the seeds are read or close(): one chunk at a time, into the state.
    boost::asio::awaitable<void> run();
    void close();

private:
    engine& e_;
    async_event wanted_; ///< want() found the state wanting, or close()
    bool reading_ = false;
    bool closed_ = false;
};

/// max_tasks workers: each takes a ticket, fetches it, hands the answer to the state, and calls task_done
/// exactly once (with a state dir once the commit holding the outcome is written).
class worker_pool {
public:
    explicit worker_pool(engine& e);
    /// Starts the workers and completes when every one has exited (the queue closed, or abort()); a
    /// cancellation of the awaiting coroutine does not end it sooner.
    boost::asio::awaitable<void> run();
    /// Terminal cancellation of every worker's current await (once).
    void abort();
    /// What a fetch of `item` asks of the fetcher.
    fetch_options options_for(const work_item& item) const;
    /// An output that fell behind (crawler::set_backpressure) said it drained.
    async_event outputs_drained;

private:
    boost::asio::awaitable<void> work();
    boost::asio::awaitable<void> handle(crawl_state::ticket& t, fetch_result& response);
    boost::asio::awaitable<void> wait_for_outputs();
    /// Hands the exchange to the exchange sink (a WARC), with the earlier capture it repeats when the state
    /// found one (t.revisit, a re-crawl).
    void report_exchange(const crawl_state::ticket& t, const fetch_result& response);

    /// A worker's completion handler: counts it out. No executor of its own, so co_spawn's cancellation
    /// proxy holds none either.
    struct worker_exited {
        worker_pool* pool;
        void operator()(std::exception_ptr) const;
    };

    engine& e_;
    // The join is counted by hand, not a ranged experimental::make_parallel_group: the group keeps the
    // range of deferred co_spawn operations (64 bytes each) for the whole crawl, and per worker a result, a
    // completion-order slot, a signal and a cancellation proxy holding an executor, all while the worker
    // waits for its server; that made a fetch in flight cost 117 bytes more (bench/RESULTS.md, issue 22).
    // Here a worker costs one signal (8 bytes) beside its coroutine.
    std::unique_ptr<boost::asio::cancellation_signal[]> signals_;
    std::size_t started_ = 0;
    std::size_t live_ = 0;
    bool aborted_ = false;
    /// Never expires: the last worker to exit cancels the wait in run().
    boost::asio::steady_timer joined_;
};

/// With a state store (state dir or Redis): writes the state's changes as they come, one batch at a time
/// (group commit), reads spilled URLs back, and tells workers when their outcome is written.
class committer {
public:
    explicit committer(engine& e);
    /// Opens the state directory, checks that it belongs to this crawl and loads what a resume needs.
    boost::asio::awaitable<void> open_state();
    /// The kept records of every run, for the classic report, and the store closed cleanly.
    boost::asio::awaitable<void> close_state();
    /// Until finish() and everything written (nothing at all when the crawl is not durable).
    boost::asio::awaitable<void> run();
    /// Changes may be waiting.
    void want() { wanted_.notify(); }
    /// No worker is left: the last changes are written, then run() returns.
    void finish();
    /// Waits until the changes made so far are written (or the crawl aborts, or the committer failed).
    boost::asio::awaitable<void> committed();
    /// A shared crawl's URL that a worker is through with: task_done() once the next commit is written.
    void done_after_commit();
    std::size_t awaiting_commit() const noexcept { return done_awaiting_commit_; }
    /// The crawl aborts: workers waiting in committed() return.
    void release_waiters() { written_.notify(); }

private:
    boost::asio::awaitable<std::vector<archived_capture>> flush_outputs();
    /// HSTS learned a host since the last save: the state directory's known hosts are written again, so that
    /// a killed crawl keeps what it learned up to its last commit.
    boost::asio::awaitable<void> save_known_hosts();

    /// idle: not durable, never runs. running: writes as changes come. finishing: finish() came, writes what
    /// is left. ended: run() returned (also after a failure).
    enum class phase { idle, running, finishing, ended };
    engine& e_;
    phase phase_ = phase::idle;
    async_event wanted_;  ///< want(), finish()
    async_event written_; ///< a commit was written, the committer ended, or the crawl aborts
    std::uint64_t commits_started_ = 0;
    std::uint64_t commits_done_ = 0;
    std::size_t done_awaiting_commit_ = 0;
    std::optional<std::uint64_t> known_hosts_saved_; // hsts_store::changes() at the last save
};

/// A shared crawl (state.redis, docs/DEPLOY.md): the Redis side of the crawl.
class lease_loop {
public:
    explicit lease_loop(engine& e);
    /// Joins the shared crawl, and the generation under way (or begins the next one: a re-crawl).
    boost::asio::awaitable<void> open();
    /// A new generation of a shared re-crawl over a history without outlinks: every URL of the fetch history
    /// is admitted, a chunk at a time, before this instance leases any (nothing to do otherwise).
    boost::asio::awaitable<void> admit_known_urls();
    /// Leases URLs as workers have room for them and renews the leases held here; returns when the crawl-wide
    /// unfinished counter reaches zero, or on a stop.
    boost::asio::awaitable<void> run();
    /// Something changed (a commit written, a stop): ask again now.
    void poke() { poked_.notify(); }
    boost::asio::awaitable<void> commit(const state_batch& batch);
    /// The ticket's robots.txt from Redis, or fetched here (its request start noted then only, so that an
    /// answer another instance fetched does not count against the host's delay here).
    boost::asio::awaitable<void> fetch_robots_once(crawl_state::ticket& t,
                                                   std::unique_ptr<fetch_result>& response);
    boost::asio::awaitable<void> give_back_leases();
    boost::asio::awaitable<void> take_combined_report();

    /// A change the control API made here (crawler::pause_host...), for every instance of a shared crawl:
    /// sent to Redis by run(), in order, before its next lease (docs/CONTROL.md, "Shared crawls"). Nothing
    /// without Redis.
    struct control_change {
        enum class kind { pause, resume, limits } what;
        std::string host;
        shared_store::host_limits limits; ///< kind::limits
    };
    void share_control(control_change change);

private:
    boost::asio::awaitable<void> pause(std::chrono::milliseconds wait);
    boost::asio::awaitable<void> build_url_index();
    /// True when this instance wrapped the generation up.
    boost::asio::awaitable<bool> wrap_up_generation();
    /// Sends the changes made here, then, when the controls' version moved (a lease answer says it), reads
    /// every instance's controls and makes them this instance's.
    boost::asio::awaitable<void> sync_controls();

    engine& e_;
    std::unordered_set<std::uint64_t> leased_ids_; // leased here, not yet finished in Redis
    std::optional<std::string> admit_from_;        // admit_known_urls() from this history scan cursor
    bool follows_links_ = false; // a re-crawl generation that follows links from the history
    async_event poked_;
    std::deque<control_change> unsent_controls_;
    std::int64_t controls_read_ = -1;  // the version of the controls made this instance's
    std::int64_t controls_latest_ = 0; // the version the last lease answer named
    std::optional<host_rules> rules_;  // crawler_config::hosts, for shared_store::settings::rule_for
};

struct engine {
    engine(boost::asio::any_io_executor ex, crawler_config cfg);
    ~engine();
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    /// The crawl from the first pump to the last commit: every part started, and joined.
    boost::asio::awaitable<void> crawl();
    void request_stop();
    void request_abort();
    bool aborting() const noexcept { return stopping == stop_level::terminal; }
    /// A part failed (a store): recorded for run() to rethrow, and the crawl aborts.
    void fail(std::exception_ptr failure);
    crawl_progress snapshot() const;
    /// The control API changed the state (crawler::pause_host...): hand out what may start now, and commit.
    void steered();
    void log(log_level level, const std::string& message);

    /// Runs `f` on the storage thread; the awaiting coroutine resumes on the crawler's executor. Not a
    /// coroutine itself, and callers pass a named function object: g++ 12 destroys temporaries of a co_await
    /// expression twice when they own memory.
    template <class F>
    boost::asio::awaitable<std::invoke_result_t<F&>> on_storage(F f) {
        using result_type = std::invoke_result_t<F&>;
        return boost::asio::co_spawn(
            storage->get_executor(),
            [f = std::move(f)]() mutable -> boost::asio::awaitable<result_type> { co_return f(); },
            boost::asio::use_awaitable);
    }

    /// state.redis_timeout passed without an answer: a store that failed (exit status 1, as a full disk),
    /// what is held is safe.
    crawl_error gave_up_on_redis(const redis::unreachable& e) const;
    /// One rule for a state store that fails, whatever the moment (docs/DEPLOY.md, "Exit status").
    [[noreturn]] void rethrow_store_failure(std::exception_ptr failure) const;

    boost::asio::any_io_executor executor;
    crawler_config config;
    /// The dispatch buffer behind the frontier (docs/ARCHITECTURE.md, "The engine"): its unfinished count is
    /// every URL the state admitted and not done; join() ends a crawl that is not shared.
    work_queue<crawl_state::ticket> queue;
    crawl_state state;
    fetcher fetch;
    std::unique_ptr<parse_lanes> parse_pool; ///< parse_threads > 0
    record_sink sink;
    body_sink bodies;
    exchange_sink exchanges;
    std::function<bool()> busy;
    crawler::output_flush output_flush;
    logger state_log;
    bool started = false;  ///< async_run was called
    bool crawling = false; ///< the state is open and started: the control API may admit and pump
    stop_level stopping = stop_level::none;
    std::exception_ptr storage_failure;

    // Durability (state.durable()): the store lives on the storage thread's side; the committer is the only
    // part that hands it work after start-up. The lock outlives the store (declared first).
    std::optional<state_lock> state_dir_lock;
    std::unique_ptr<state_store> store;
    std::optional<boost::asio::thread_pool> storage;

    // Seeds (crawler_config::input_file): read on a thread of their own.
    std::unique_ptr<seed_reader> seeds;
    std::optional<boost::asio::thread_pool> seed_thread;

    // A shared crawl (state.redis).
    std::optional<redis::client> redis_client;
    std::string redis_name; // its URL without the password, for messages
    std::optional<shared_store> shared;

    frontier_pump pump;
    seed_feeder feeder;
    worker_pool workers;
    committer commits;
    lease_loop leases;

private:
    crawl_state::hooks state_hooks();
    /// state.recrawl_from: the previous run's records or CDXJ, as the history of a re-crawl.
    void load_recrawl_source();
    /// The end of the work: a shared crawl's lease loop ended, then every URL admitted here is done (or the
    /// queue closed by a stop). Then no part takes new work.
    boost::asio::awaitable<void> until_no_work();
    boost::asio::awaitable<void> workers_then_last_commit();
};

} // namespace asiocrawl::detail

namespace asiocrawl {

struct crawler::impl : detail::engine {
    using detail::engine::engine;

    /// The hooks are read as the crawl starts and goes: one set later would miss what was made meanwhile.
    void before_run(const char* setter) const {
        if (started)
            throw std::logic_error(std::string("crawler::") + setter + " called after async_run");
    }

    /// The whole crawl, from opening its state to the report; throws what ends it.
    static boost::asio::awaitable<report> run(std::shared_ptr<impl> self);
    /// run() with what ends it turned into async_run's code (see failed_run() in crawler.cpp).
    static boost::asio::awaitable<std::tuple<boost::system::error_code, report>>
    run_to_code(std::shared_ptr<impl> self);
};

} // namespace asiocrawl
