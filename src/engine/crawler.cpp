// The crawler's I/O loop: workers take tickets from the work queue, fetch them and tell the crawl state
// (src/state/crawl_state.hpp, where every decision is made) what came back. With a state directory, a
// committer writes the state's changes on a storage thread, and a worker's URL counts as done only once the
// commit holding its outcome is written.
#include <asiocrawl/crawler.hpp>

#include "engine/seed_reader.hpp"
#include "engine/work_queue.hpp"
#include "html/page_links.hpp"
#include "http/fetch_settings.hpp"
#include "http/fetcher.hpp"
#include "state/crawl_definition.hpp"
#include "state/crawl_state.hpp"
#include "state/record_codec.hpp"
#include "store/redis_client.hpp"
#include "store/shared_store.hpp"
#include "store/state_store.hpp"

#include "policy/backoff.hpp"
#include <asiocrawl/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <cstdio>
#include <cstdlib>
#include <list>
#include <random>
#include <stdexcept>
#include <tuple>
#include <unordered_set>
#include <utility>

#include <sys/resource.h>
#include <unistd.h>

namespace asiocrawl {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;
using detail::crawl_state;

namespace {

crawler_config checked(crawler_config config) {
    const auto problems = validate(config);
    if (!problems.empty()) {
        std::string message = "invalid crawler config:";
        for (const auto& p : problems)
            message += "\n  " + p.message;
        throw std::invalid_argument(message);
    }
    return config;
}

asio::awaitable<detail::resolved_links> resolve_links_task(std::string page_url, std::string body,
                                                           detail::link_options options) {
    co_return detail::resolve_links(boost::urls::parse_uri(page_url).value(), std::move(body), options);
}

/// A shared crawl's worker named by no one (state.instance empty): 64 random bits, unique enough among the
/// workers of one crawl. The CLI names its workers by host and process id instead.
std::string random_instance_name() {
    std::random_device random;
    const std::uint64_t bits = (std::uint64_t{random()} << 32) | random();
    char text[17] = {};
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
    return std::string("instance-") + text;
}

/// A timer used as an event: wait() until notify(); waiters re-check their condition after each wake-up.
class event {
public:
    explicit event(const asio::any_io_executor& executor)
        : timer_(executor, clock_type::time_point::max()) {}
    asio::awaitable<void> wait() { co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable)); }
    void notify() { timer_.cancel(); }

private:
    asio::steady_timer timer_;
};

} // namespace

struct crawler::impl : std::enable_shared_from_this<crawler::impl> {
    impl(asio::any_io_executor ex, crawler_config cfg)
        : executor(std::move(ex))
        , config(detail::with_root_credentials(checked(std::move(cfg)))) // before parse_root drops them
        , queue(executor)
        , state(config, state_hooks(), !config.state.dir.empty() || !config.state.redis.empty(),
                config.state.redis.empty() ? config.state.window : 0)
        , fetch(executor, config.fetch, config.max_tasks)
        , frontier_timer(executor)
        , workers_exited(executor)
        , outputs_drained(executor)
        , commit_wanted(executor)
        , commit_done(executor)
        , flush_done(executor) {
        // Before anything reads, resets or writes the directory: a second crawl in it is refused here.
        if (!config.state.dir.empty() && config.state.redis.empty())
            state_dir_lock.emplace(config.state.dir);
        if (config.parse_threads > 0)
            parse_pool.emplace(config.parse_threads);
        if (!config.state.redis.empty()) {
            state.set_shared();
            config.keep_records = false; // each instance writes its own; Redis keeps no records
        }
        if (!config.input_file.empty())
            seeds = std::make_unique<detail::seed_reader>(config.input_file, config.input_fd); // may throw
    }

    ~impl() {
        if (seeds)
            seeds->cancel(); // a read waiting for stdin ends
        if (seed_thread)
            seed_thread->join();
        if (parse_pool)
            parse_pool->join();
        if (storage)
            storage->join();
    }

    crawl_state::hooks state_hooks() {
        crawl_state::hooks h;
        h.hold = [this] { return queue.hold(); };
        h.release = [this] { queue.release(); };
        h.emit = [this](const record& r) {
            if (sink)
                sink(r);
        };
        return h;
    }

    asio::any_io_executor executor;
    crawler_config config;
    detail::work_queue<crawl_state::ticket> queue;
    crawl_state state;
    detail::fetcher fetch;
    std::optional<asio::thread_pool> parse_pool;
    asio::steady_timer frontier_timer;
    clock_type::time_point frontier_timer_at = clock_type::time_point::max();
    record_sink sink;
    body_sink bodies;
    exchange_sink exchanges;
    std::function<bool()> busy;
    crawler::output_flush output_flush;
    std::size_t live_workers = 0;
    event workers_exited;
    event outputs_drained;
    // One per worker: a terminal cancellation reaches whatever operation the worker awaits.
    std::list<asio::cancellation_signal> worker_signals;
    bool running = false;
    bool stopping = false;
    bool aborting = false;

    // Durability (state.durable()): the store lives on the storage thread's side; the committer coroutine
    // is the only one that hands it work after start-up. The lock outlives the store (declared first).
    std::optional<detail::state_lock> state_dir_lock;
    std::unique_ptr<detail::state_store> store;
    std::optional<asio::thread_pool> storage;
    event commit_wanted;
    event commit_done;
    event flush_done;
    bool flushed = false;
    std::string flush_error;
    std::uint64_t commits_started = 0;
    std::uint64_t commits_done = 0;
    // A shared crawl's URLs whose workers are through with them, counted as done (task_done) when the commit
    // carrying their changes has been written.
    std::size_t done_awaiting_commit = 0;
    bool committer_running = false;
    bool committer_exit = false;
    std::exception_ptr storage_failure;

    // ---- the frontier ----

    /// Moves every ticket that may start now into the work queue, and wakes up again when the next delay or
    /// backoff ends.
    void pump() {
        if (queue.closed())
            return;
        if (state.out_of_budget()) { // quota or max_time: a graceful stop, as on SIGTERM
            request_stop();
            return;
        }
        while (auto t = state.next())
            queue.put_held(std::move(*t));
        want_seeds();
        if (state.durable())
            commit_wanted.notify(); // refills may be wanted, denials may have made records
        const auto wake = state.next_wakeup();
        if (!wake || *wake >= frontier_timer_at)
            return;
        frontier_timer_at = *wake;
        frontier_timer.expires_at(*wake);
        frontier_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec == asio::error::operation_aborted)
                return; // re-armed earlier, or the crawl is over
            self->frontier_timer_at = clock_type::time_point::max();
            self->pump();
        });
    }

    // ---- seeds (crawler_config::input_file) ----

    // The file is read on a thread of its own, a chunk at a time, when the state asks for more.
    std::unique_ptr<detail::seed_reader> seeds;
    std::optional<asio::thread_pool> seed_thread;
    bool seed_read_running = false;

    asio::awaitable<void> read_seeds() {
        auto read = [reader = seeds.get()]() -> asio::awaitable<detail::seed_chunk> {
            co_return reader->next();
        };
        auto chunk = co_await asio::co_spawn(seed_thread->get_executor(), read, asio::use_awaitable);
        seed_read_running = false;
        state.on_seeds(std::move(chunk));
        pump();
    }

    void want_seeds() {
        if (!seeds || seed_read_running || !state.wants_seeds(queue.unfinished()))
            return;
        if (!seed_thread) {
            seed_thread.emplace(1);
            seeds->start_at(state.seeds_read()); // after a resume: where the previous runs stopped
        }
        seed_read_running = true;
        asio::co_spawn(
            executor, [self = shared_from_this()] { return self->read_seeds(); }, asio::detached);
    }

    // ---- one attempt of one ticket ----

    detail::fetch_options options_for(const detail::work_item& item) const {
        detail::fetch_options options;
        options.capture = static_cast<bool>(exchanges);
        if (item.kind == detail::item_kind::robots)
            options.truncate_body_at = config.robots.max_bytes;
        if (item.kind == detail::item_kind::page && !config.accept_types.empty())
            options.accept_types = &config.accept_types;
        return options;
    }

    void report_exchange(const detail::work_item& item, const detail::fetch_result& response) {
        if (!exchanges || (response.raw_request.empty() && response.raw_response.empty()))
            return;
        http_exchange x;
        x.kind = item.kind == detail::item_kind::robots    ? http_exchange::purpose::robots
                 : item.kind == detail::item_kind::sitemap ? http_exchange::purpose::sitemap
                                                           : http_exchange::purpose::page;
        x.url = item.url;
        x.remote_ip = response.remote_ip;
        x.started = response.started;
        x.request = response.raw_request;
        x.response = response.raw_response;
        x.response_head_bytes = response.raw_head_bytes;
        x.complete = !response.error;
        x.error = response.error;
        exchanges(x);
    }

    /// An output that fell behind holds new fetches back until it says it drained; the slot stays reserved
    /// meanwhile.
    asio::awaitable<void> wait_for_outputs() {
        while (busy && busy() && !aborting)
            co_await outputs_drained.wait();
    }

    /// What comes of one attempt's answer (or failure). Its frame exists only while the answer is handled.
    asio::awaitable<void> handle(crawl_state::ticket& t, detail::fetch_result& response) {
        report_exchange(t.item, response);
        record r;
        switch (state.on_response(t, response, detail::is_retryable(response.error), r)) {
        case crawl_state::next_step::done:
            break;
        case crawl_state::next_step::parse_page: {
            detail::resolved_links links;
            if (parse_pool) {
                // The body travels to the pool and back by move: no copy, and no crawl state leaves this
                // thread.
                links =
                    co_await asio::co_spawn(parse_pool->get_executor(),
                                            resolve_links_task(t.item.url, std::move(response.body),
                                                               detail::link_options_for(config, r.charset)),
                                            asio::use_awaitable);
            } else {
                links = detail::resolve_links(boost::urls::parse_uri(t.item.url).value(),
                                              std::move(response.body),
                                              detail::link_options_for(config, r.charset));
            }
            response.body = std::move(links.body);
            if (aborting)
                co_return;
            state.on_links(t, r, links);
            [[fallthrough]];
        }
        case crawl_state::next_step::record_ready:
            if (bodies && r.status >= 200 && r.status < 300 && !response.body.empty())
                bodies(r, response.body);
            state.finish(t, std::move(r));
            break;
        }
        pump();
    }

    /// In flight from the request's start to the end of the fetch, however it ends.
    struct in_flight_guard {
        crawl_state& state;
        crawl_state::ticket& t;
        ~in_flight_guard() { state.fetch_finished(t); }
    };

    /// A worker: one ticket at a time, each to exactly one task_done. This frame is what waits for the
    /// server, thousands at once, so it holds the ticket and a pointer to the result and nothing sized by
    /// the response (see fetcher::fetch_into); the work on the answer happens in handle().
    asio::awaitable<void> work() {
        std::optional<crawl_state::ticket> t;
        while (co_await queue.get(t)) {
            try {
                if (state.begin_attempt(*t)) {
                    if (busy && busy() && !aborting)
                        co_await wait_for_outputs();
                    std::unique_ptr<detail::fetch_result> response;
                    {
                        in_flight_guard guard{state, *t};
                        state.fetch_started(*t);
                        pump();
                        if (shared && t->item.kind == detail::item_kind::robots)
                            co_await fetch_robots_once(t->item, response);
                        else
                            co_await fetch.fetch_into(t->item.url, options_for(t->item), response);
                    }
                    pump();
                    // After an abort the URL stays unfinished: part of the todo.
                    if (!aborting)
                        co_await handle(*t, *response);
                }
            } catch (const std::exception& e) {
                if (!aborting)
                    state.internal_error(*t, e.what());
            } catch (...) {
                if (!aborting)
                    state.internal_error(*t, "unknown exception");
            }
            t.reset(); // the host slot goes back before the commit
            if (aborting)
                continue;
            if (shared) {
                // Done once its changes are in Redis; the committer says so, and this worker fetches the
                // next URL meanwhile instead of idling through the round trip. A kill costs at most the
                // URLs leased here, which these still are.
                ++done_awaiting_commit;
                commit_wanted.notify();
                continue;
            }
            // With a state dir a kill costs at most the max_tasks URLs in flight: a worker takes its next URL
            // once its last one is written.
            if (state.durable())
                co_await committed();
            if (!aborting)
                queue.task_done();
        }
    }

    // ---- durability ----

    /// Runs `f` on the storage thread; the awaiting coroutine resumes on the crawler's executor. Not a
    /// coroutine itself, and callers pass a named function object: g++ 12 destroys temporaries of a co_await
    /// expression twice when they own memory.
    template <class F>
    asio::awaitable<std::invoke_result_t<F&>> on_storage(F f) {
        using result_type = std::invoke_result_t<F&>;
        return asio::co_spawn(
            storage->get_executor(),
            [f = std::move(f)]() mutable -> asio::awaitable<result_type> { co_return f(); },
            asio::use_awaitable);
    }

    /// Waits until the changes made so far are written: the next commit to start carries them.
    asio::awaitable<void> committed() {
        const auto target = commits_started + 1;
        commit_wanted.notify();
        while (commits_done < target && !aborting && committer_running)
            co_await commit_done.wait();
    }

    asio::awaitable<void> flush_outputs() {
        if (!output_flush)
            co_return;
        flushed = false;
        output_flush(config.state.fsync, [self = shared_from_this()](const std::string& error) {
            asio::post(self->executor, [self, error] {
                self->flush_error = error;
                self->flushed = true;
                self->flush_done.notify();
            });
        });
        while (!flushed)
            co_await flush_done.wait();
        if (!flush_error.empty())
            throw crawl_error(error::output_failed,
                              "an output could not be written (" + flush_error +
                                  "): the crawl stops rather than count URLs whose output was lost as done");
    }

    /// Writes the state's changes as they come, one batch at a time (group commit: whatever accumulated
    /// while the previous batch was being written goes in the next), and reads spilled URLs back.
    asio::awaitable<void> commit_loop() {
        try {
            for (;;) {
                auto batch = state.take_batch();
                auto refills = state.take_refills();
                if (batch.empty() && refills.empty() && done_awaiting_commit == 0) {
                    if (committer_exit)
                        break;
                    co_await commit_wanted.wait();
                    continue;
                }
                const auto generation = ++commits_started;
                const auto done_here = std::exchange(done_awaiting_commit, 0);
                if (!batch.empty()) {
                    // The outputs first: a URL the state counts as done must have its record written.
                    co_await flush_outputs();
                    if (shared) {
                        co_await commit_shared(batch);
                    } else {
                        auto write = [store = store.get(), &batch, sync = config.state.fsync] {
                            store->write(batch, sync);
                        };
                        co_await on_storage(write);
                    }
                }
                for (const auto& refill : refills) {
                    auto read = [store = store.get(), &refill] {
                        return store->read_waiting(refill.host, refill.from_seq, refill.count);
                    };
                    auto items = co_await on_storage(read);
                    state.on_refill(refill.host, std::move(items));
                }
                commits_done = generation;
                commit_done.notify();
                for (std::size_t i = 0; i < done_here && !aborting; ++i)
                    queue.task_done();
                if (shared)
                    poke_lease_loop();
                pump();
            }
        } catch (...) {
            storage_failure = std::current_exception();
            request_abort();
        }
        committer_running = false;
        commit_done.notify();
        workers_exited.notify();
    }

    /// Opens the state directory, checks that it belongs to this crawl and loads what a resume needs.
    asio::awaitable<void> open_state() {
        storage.emplace(1);
        const std::string definition = detail::crawl_definition_json(config);
        const std::uint64_t fresh_seed = state.seed();
        auto& seen = state.seen_set();
        auto open = [&]() {
            const std::filesystem::path dir = config.state.dir;
            if (config.state.reset)
                detail::state_store::reset(dir);
            auto s = detail::state_store::open(dir);
            auto meta = s->meta();
            if (!meta) {
                s->write_meta({fresh_seed, definition});
                return std::tuple{std::move(s), fresh_seed, detail::restored_state{}};
            }
            if (auto change = detail::describe_definition_change(meta->definition, definition))
                throw crawl_error(error::state_mismatch,
                                  "state directory " + dir.string() +
                                      " belongs to another crawl: " + *change +
                                      " (use --state-reset to start over, or another state directory)");
            auto loaded = s->load(seen);
            return std::tuple{std::move(s), meta->seed, std::move(loaded)};
        };
        auto [opened, seed, restored] = co_await on_storage(open);
        store = std::move(opened);
        state.set_seed(seed);
        state.restore(restored);
        if (state.result().runs > 0)
            log(log_level::info, "resuming the crawl from " + config.state.dir + ": " +
                                     std::to_string(state.result().done) + " URLs done, " +
                                     std::to_string(queue.unfinished()) + " waiting");
    }

    /// The kept records of every run, for the classic report, and the store closed cleanly.
    asio::awaitable<void> close_state() {
        std::vector<record> records;
        const bool keep = config.keep_records;
        auto read_and_close = [&] {
            if (keep) {
                store->for_each_record([&](std::string_view url, std::string_view bytes) {
                    auto r = detail::decode_record(bytes);
                    if (!r)
                        throw crawl_error(error::store_damaged, "state directory " + config.state.dir +
                                                                    ": the record of " + std::string(url) +
                                                                    " does not decode (damaged)");
                    records.push_back(std::move(*r));
                });
            }
            store.reset();
        };
        co_await on_storage(read_and_close);
        state.result().records = std::move(records);
    }

    void log(log_level level, const std::string& message) {
        if (state_log.enabled(level))
            state_log.write(level, message);
    }
    logger state_log;

    // ---- a shared crawl (state.redis, docs/DEPLOY.md) ----

    std::optional<redis::client> redis_client;
    std::string redis_name; // its URL without the password, for messages
    std::optional<detail::shared_store> shared;
    std::unordered_set<std::uint64_t> leased_ids; // leased here, not yet finished in Redis
    asio::steady_timer lease_timer{executor};
    bool lease_poked = false;
    bool lease_loop_running = false;

    asio::awaitable<void> open_shared() {
        auto where = redis::parse_url(config.state.redis, config.state.redis_password);
        if (!where.value)
            throw crawl_error(error::invalid_config, "state.redis: " + where.error);
        redis_name = redis::redacted(*where.value);
        redis::client_options options;
        options.where = *where.value;
        const redis_tls_config& tls = config.state.redis_tls;
        options.tls = {tls.ca_file, tls.cert_file, tls.key_file, tls.insecure};
        if (where.value->tls && tls.insecure)
            log(log_level::warning, "state.redis_tls.insecure: the certificate of " +
                                        redis::redacted(*where.value) + " is not verified");
        options.give_up_after = config.state.redis_timeout;
        options.on_retry = [this](int attempt, const std::string& why) {
            if (attempt == 1 || attempt % 10 == 0)
                log(log_level::warning,
                    "Redis unreachable (attempt " + std::to_string(attempt) + "): " + why);
        };
        try {
            redis_client.emplace(executor, std::move(options));
        } catch (const redis::tls_file_error& e) {
            throw crawl_error(error::invalid_config, "state.redis_tls." + e.which + ": " + e.what());
        }
        const std::string definition = detail::crawl_definition_json(config);
        detail::shared_store::settings settings;
        settings.crawl_id =
            config.state.crawl_id.empty() ? detail::default_crawl_id(definition) : config.state.crawl_id;
        settings.instance = config.state.instance.empty() ? random_instance_name() : config.state.instance;
        settings.lease = config.state.lease;
        settings.max_per_host = config.politeness.max_per_host;
        settings.delay = std::chrono::duration_cast<std::chrono::milliseconds>(config.politeness.delay);
        shared.emplace(*redis_client, settings);
        // A Redis unreachable from the start (down, or refusing its TLS certificate) is given up like one
        // lost mid-crawl: after state.redis_timeout, exit status 2.
        std::uint64_t seed = 0;
        try {
            seed = co_await shared->join(state.seed(), definition);
        } catch (const redis::unreachable& e) {
            throw gave_up_on_redis(e);
        }
        state.set_seed(seed);
        log(log_level::info, "joined the shared crawl " + settings.crawl_id + " at " +
                                 redis::redacted(*where.value) + " as " + settings.instance);
    }

    /// Commits a batch to Redis, again and again while Redis is away (the client reconnects with backoff):
    /// the batch is held here meanwhile, and a repeated commit changes nothing that the first one did.
    asio::awaitable<void> commit_shared(const detail::state_batch& batch) {
        for (int attempt = 1;; ++attempt) {
            try {
                co_await shared->commit(batch);
                break;
            } catch (const redis::connection_lost& e) {
                if (attempt == 1)
                    log(log_level::warning, std::string(e.what()) + ": results held, retrying");
            } catch (const redis::unreachable& e) {
                throw gave_up_on_redis(e);
            }
        }
        for (const auto& finished : batch.finished)
            leased_ids.erase(finished.second);
    }

    /// robots.txt of an origin is fetched by one instance of a shared crawl; the others take its answer from
    /// Redis (waiting for it at most a lease). Without Redis each instance fetches it itself.
    asio::awaitable<void> fetch_robots_once(const detail::work_item& item,
                                            std::unique_ptr<detail::fetch_result>& response) {
        bool mine = false;
        try {
            const auto give_up_at = clock_type::now() + config.state.lease;
            asio::steady_timer pause(executor);
            while (!aborting) {
                if (auto cached = co_await shared->cached_robots(item.url, detail::robots_cache_lifetime)) {
                    response = std::make_unique<detail::fetch_result>();
                    response->status = cached->status;
                    response->location = std::move(cached->location);
                    response->body = std::move(cached->body);
                    co_return;
                }
                if (co_await shared->claim_robots(item.url)) {
                    mine = true;
                    break;
                }
                if (clock_type::now() >= give_up_at)
                    break;
                pause.expires_after(std::chrono::milliseconds(20));
                co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
            }
        } catch (const std::exception& e) {
            log(log_level::warning, item.url + ": robots.txt is not shared (" + e.what() + "): fetched here");
        }
        if (aborting)
            co_return; // the worker leaves the URL unfinished
        co_await fetch.fetch_into(item.url, options_for(item), response);
        // Only a final answer is shared: a network failure or a 429/503 is this instance's to retry.
        if (!mine || !response || response->error || is_retryable_status(response->status))
            co_return;
        try {
            detail::shared_store::robots_answer answer{response->status, response->location, response->body};
            co_await shared->store_robots(item.url, answer);
        } catch (const std::exception& e) {
            log(log_level::warning, item.url + ": robots.txt answer not shared (" + e.what() + ")");
        }
    }

    /// state.redis_timeout passed without an answer: a store that failed (exit status 1, as a full disk),
    /// what is held is safe.
    crawl_error gave_up_on_redis(const redis::unreachable& e) const {
        return crawl_error(error::redis_unreachable,
                           std::string(e.what()) +
                               ": giving up after state.redis_timeout; the URLs leased here go back to the "
                               "crawl when their leases expire, and running this instance again continues "
                               "the crawl");
    }

    /// One rule for a state store that fails, whatever the moment (docs/DEPLOY.md, "Exit status"): a store
    /// that refuses this crawl, which only a change of configuration cures (a wrong password, another crawl's
    /// keys), is error::redis_refused (exit 2); one that is full, unreachable or lost is
    /// store_write_failed, redis_unreachable or redis_lost (exit 1), and the same command continues the
    /// crawl once it is back. Redis's own errors are sorted here; the
    /// others pass unchanged.
    [[noreturn]] void rethrow_store_failure(std::exception_ptr failure) const {
        try {
            std::rethrow_exception(failure);
        } catch (const redis::server_error& e) {
            // "redis: OOM command not allowed...", "redis: MISCONF ... unable to persist to disk".
            std::string_view answer = e.what();
            if (answer.starts_with("redis: "))
                answer.remove_prefix(7);
            if (answer.starts_with("OOM") || answer.starts_with("MISCONF"))
                throw crawl_error(error::store_write_failed,
                                  "state.redis: " + redis_name + " cannot store the crawl: " + e.what() +
                                      "; what was committed is kept, and running this instance again once "
                                      "Redis has room continues the crawl");
            throw crawl_error(error::redis_refused,
                              "state.redis: " + redis_name + " refuses the crawl: " + e.what());
        } catch (const redis::connection_lost& e) {
            throw crawl_error(error::redis_lost, "state.redis: " + redis_name + ": " + e.what() +
                                                     "; running this instance again continues the crawl");
        }
    }

    /// A graceful stop: the URLs leased here and not finished are handed back at once (their leases made to
    /// expire now), so the other instances take them without waiting a lease.
    asio::awaitable<void> give_back_leases() {
        while (lease_loop_running)
            co_await workers_exited.wait();
        if (leased_ids.empty())
            co_return;
        const std::vector<std::uint64_t> held(leased_ids.begin(), leased_ids.end());
        try {
            co_await shared->give_back(held);
            log(log_level::info,
                "gave back " + std::to_string(held.size()) + " leased URLs to the shared crawl");
            leased_ids.clear();
        } catch (const redis::unreachable& e) {
            throw gave_up_on_redis(e);
        }
    }

    /// Every instance's final report counts the whole crawl: the counters of every instance, added up.
    asio::awaitable<void> take_combined_report() {
        try {
            const auto status = co_await shared->read_status();
            const auto combined = detail::combined_report(status.counters);
            auto& result = state.result();
            result.stats = combined.stats;
            result.done = combined.done;
            result.runs = combined.runs;
            result.started_at = combined.started_at;
        } catch (const redis::connection_lost& e) {
            log(log_level::warning, std::string(e.what()) + ": the report counts this instance only");
        } catch (const redis::unreachable& e) {
            throw gave_up_on_redis(e);
        }
    }

    void poke_lease_loop() {
        lease_poked = true;
        lease_timer.cancel();
    }

    /// Leases URLs from the shared frontier as workers have room for them, renews the leases held here, and
    /// ends when the crawl-wide unfinished counter reaches zero (nothing waits, nothing is leased).
    asio::awaitable<void> lease_loop() {
        lease_loop_running = true;
        // Enough to keep every worker busy plus a quarter for the round trip: a larger hoard starves the
        // other instances while the frontier is small (the first levels of a site, the last pages).
        const std::size_t wanted = config.max_tasks + std::max<std::size_t>(config.max_tasks / 4, 1);
        // An instance with idle workers asks again soon, then less often: URLs appear when another instance
        // commits a page's links, which no answer can announce.
        constexpr auto idle_poll_min = std::chrono::milliseconds(2);
        constexpr auto idle_poll_max = std::chrono::milliseconds(20);
        auto idle_poll = idle_poll_min;
        auto renewed_at = clock_type::now();
        try {
            while (!stopping) {
                lease_poked = false;
                // The queue's count includes this loop's own hold.
                const std::size_t local = queue.unfinished() > 0 ? queue.unfinished() - 1 : 0;
                const std::size_t room = local < wanted ? wanted - local : 0;
                const std::size_t occupied = local - std::min(local, done_awaiting_commit);
                const std::size_t idle = occupied < config.max_tasks ? config.max_tasks - occupied : 0;
                detail::shared_store::lease_answer answer;
                try {
                    if (clock_type::now() - renewed_at > config.state.lease / 3) {
                        const std::vector<std::uint64_t> held(leased_ids.begin(), leased_ids.end());
                        co_await shared->renew(held);
                        renewed_at = clock_type::now();
                    }
                    answer = co_await shared->lease(room, idle);
                } catch (const redis::connection_lost& e) {
                    log(log_level::warning, std::string(e.what()) + ": retrying");
                    continue;
                } catch (const redis::unreachable& e) {
                    throw gave_up_on_redis(e);
                }
                if (stopping)
                    break;
                for (auto& taken : answer.items) {
                    const auto id = taken.id;
                    if (state.take_leased(id, std::move(taken.item)))
                        leased_ids.insert(id);
                }
                if (!answer.items.empty())
                    pump();
                if (answer.unfinished <= 0)
                    break; // the whole crawl is done: every instance sees the same zero
                if (answer.items.size() == room && room > 0 && !lease_poked)
                    continue; // there may be more
                if (lease_poked)
                    continue;
                // Workers idle: ask again soon (or when a host's delay ends). All busy: a finish pokes this
                // loop, and a host ready now but held for an idle worker must not make it spin.
                auto wait = idle_poll_max;
                if (idle > 0) {
                    wait = idle_poll;
                    if (answer.wait_ms >= 0)
                        wait = std::min(wait, std::chrono::milliseconds(answer.wait_ms));
                }
                idle_poll = answer.items.empty() ? std::min(idle_poll * 2, idle_poll_max) : idle_poll_min;
                wait = std::max(wait, idle_poll_min);
                lease_timer.expires_after(wait);
                co_await lease_timer.async_wait(asio::as_tuple(asio::use_awaitable));
            }
        } catch (...) {
            storage_failure = std::current_exception();
            request_abort();
        }
        lease_loop_running = false;
        workers_exited.notify(); // give_back_leases waits for this loop
        queue.release();
    }

    // ---- stopping ----

    void request_stop() {
        if (stopping)
            return;
        stopping = true;
        if (seeds)
            seeds->cancel();
        log(log_level::info, "stopping: " + std::to_string(queue.unfinished()) + " URLs unfinished");
        state.stop();
        queue.close();
        frontier_timer.cancel();
        poke_lease_loop();
    }

    void request_abort() {
        request_stop();
        if (aborting)
            return;
        aborting = true;
        log(log_level::info,
            "aborting: " + std::to_string(state.in_flight()) + " fetches in flight cancelled");
        if (state.in_flight() > 0)
            state.result().stats["aborted_in_flight"] += state.in_flight();
        for (auto& signal : worker_signals)
            signal.emit(asio::cancellation_type::terminal);
        outputs_drained.notify();
        commit_done.notify();
    }

    /// The hooks are read as the crawl starts and goes: one set later would miss what was made meanwhile.
    void before_run(const char* setter) const {
        if (running)
            throw std::logic_error(std::string("crawler::") + setter + " called after async_run");
    }

    /// The whole crawl, from opening its state to the report; throws what ends it.
    static asio::awaitable<report> run(std::shared_ptr<impl> self);
    /// run() with what ends it turned into async_run's code (see failed_run()).
    static asio::awaitable<std::tuple<boost::system::error_code, report>>
    run_to_code(std::shared_ptr<impl> self);

    crawl_progress snapshot() const {
        crawl_progress p = state.progress();
        const auto in_flight = state.in_flight();
        p.queued = queue.unfinished() > in_flight ? queue.unfinished() - in_flight : 0;
        return p;
    }
};

crawler::crawler(executor_type executor, crawler_config config)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(config))) {}

crawler::~crawler() {
    if (impl_)
        stop();
}

crawler::executor_type crawler::get_executor() const noexcept {
    return impl_->executor;
}

const crawler_config& crawler::config() const noexcept {
    return impl_->config;
}

void crawler::set_record_sink(record_sink sink) {
    impl_->before_run("set_record_sink");
    impl_->sink = std::move(sink);
}

void crawler::set_logger(logger log) {
    impl_->before_run("set_logger");
    impl_->state_log = log;
    impl_->state.set_logger(std::move(log));
}

void crawler::set_body_sink(body_sink sink) {
    impl_->before_run("set_body_sink");
    impl_->bodies = std::move(sink);
}

void crawler::set_exchange_sink(exchange_sink sink) {
    impl_->before_run("set_exchange_sink");
    impl_->exchanges = std::move(sink);
}

void crawler::set_backpressure(std::function<bool()> busy) {
    impl_->before_run("set_backpressure");
    impl_->busy = std::move(busy);
}

void crawler::notify_drained() {
    asio::post(impl_->executor, [self = impl_] { self->outputs_drained.notify(); });
}

void crawler::set_output_flush(output_flush flush) {
    impl_->before_run("set_output_flush");
    impl_->output_flush = std::move(flush);
}

bool crawler::has_saved_state(const std::string& state_dir) {
    return !state_dir.empty() && detail::state_store::holds_state(state_dir);
}

crawl_progress crawler::progress() const {
    return impl_->snapshot();
}

void crawler::stop() {
    asio::dispatch(impl_->executor, [self = impl_] { self->request_stop(); });
}

void crawler::abort() {
    asio::dispatch(impl_->executor, [self = impl_] { self->request_abort(); });
}

namespace {

using run_result = std::tuple<boost::system::error_code, report>;

/// async_run's completion for a crawl that `failure` ended: its code, and the report of what was done
/// before with the failure's text. One place turns what the layers below throw into codes: theirs
/// (crawl_error), or internal_error for anything else (a bug, or memory exhausted).
run_result failed_run(std::exception_ptr failure, report done) {
    try {
        std::rethrow_exception(failure);
    } catch (const crawl_error& e) {
        done.failure = e.detail();
        return {e.code(), std::move(done)};
    } catch (const std::exception& e) {
        done.failure = e.what();
    } catch (...) {
        done.failure = "unknown exception";
    }
    return {make_error_code(error::internal_error), std::move(done)};
}

} // namespace

asio::awaitable<run_result> crawler::impl::run_to_code(std::shared_ptr<impl> self) {
    std::exception_ptr failure;
    try {
        co_return run_result{boost::system::error_code{}, co_await run(self)};
    } catch (...) {
        failure = std::current_exception();
    }
    // The counters of what was done before the failure (a resumed crawl's, every run's).
    co_return failed_run(failure, std::move(self->state.result()));
}

void crawler::start(std::shared_ptr<impl> self, run_handler handler) {
    auto handler_executor = asio::get_associated_executor(handler, self->executor);
    if (std::exchange(self->running, true)) {
        asio::post(self->executor,
                   asio::bind_executor(handler_executor, [handler = std::move(handler)]() mutable {
                       std::move(handler)(asio::error::already_started, report{});
                   }));
        return;
    }
    auto slot = asio::get_associated_cancellation_slot(handler);
    if (slot.is_connected()) {
        // Any cancellation drains gracefully; a terminal one (the strongest) also cancels what is in flight.
        slot.assign([weak = std::weak_ptr<impl>(self)](asio::cancellation_type type) {
            auto alive = weak.lock();
            if (!alive)
                return;
            if ((type & asio::cancellation_type::terminal) != asio::cancellation_type::none)
                asio::dispatch(alive->executor, [alive] { alive->request_abort(); });
            else
                asio::dispatch(alive->executor, [alive] { alive->request_stop(); });
        });
    }
    auto executor = self->executor;
    asio::co_spawn(
        executor, impl::run_to_code(std::move(self)),
        asio::bind_executor(handler_executor, [handler = std::move(handler),
                                               slot](std::exception_ptr e, run_result result) mutable {
            if (slot.is_connected())
                slot.clear();
            auto& [ec, r] = result;
            if (e) // run_to_code's own frame could not be made
                std::tie(ec, r) = failed_run(e, report{});
            std::move(handler)(ec, std::move(r));
        }));
}

asio::awaitable<report> crawler::impl::run(std::shared_ptr<impl> self) {
    auto& state = self->state;
    // However the run ends, the state directory is another crawl's to take afterwards (the store closed
    // first; it normally is by then, on the storage thread).
    struct release_state_dir {
        impl& self;
        ~release_state_dir() {
            self.store.reset();
            self.state_dir_lock.reset();
        }
    } release{*self};

    try {
        if (!self->config.state.redis.empty())
            co_await self->open_shared();
        else if (state.durable())
            co_await self->open_state();
        state.start();
        self->log(log_level::info, "crawling " + std::to_string(self->config.roots.size()) +
                                       " root(s) with " + std::to_string(self->config.max_tasks) +
                                       " workers as \"" + state.user_agent() + "\"");
        if (self->shared) {
            // The roots are in the shared frontier before any instance may find the crawl over.
            const auto roots = state.take_batch();
            co_await self->commit_shared(roots);
        }
    } catch (...) {
        self->rethrow_store_failure(std::current_exception());
    }
    if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0) {
        const std::size_t own =
            detail::own_descriptors + (state.durable() ? detail::state_dir_descriptors : 0);
        if (auto shortfall =
                detail::descriptor_shortfall(self->config.max_tasks, own, files.rlim_cur, files.rlim_max))
            self->log(log_level::warning, *shortfall);
    }
    if (self->shared) {
        self->queue.hold(); // the lease loop's: the queue joins once the shared crawl is over
        asio::co_spawn(
            self->executor, [self] { return self->lease_loop(); }, asio::detached);
    }
    if (state.durable()) {
        self->committer_running = true;
        asio::co_spawn(
            self->executor, [self] { return self->commit_loop(); }, asio::detached);
    }
    self->pump();

    for (std::size_t i = 0; i < self->config.max_tasks; ++i) {
        ++self->live_workers;
        auto& signal = self->worker_signals.emplace_back();
        asio::co_spawn(
            self->executor, [self]() { return self->work(); },
            asio::bind_cancellation_slot(signal.slot(), [self](std::exception_ptr) {
                if (--self->live_workers == 0)
                    self->workers_exited.notify();
            }));
    }

    co_await self->queue.join();
    self->queue.close();
    self->frontier_timer.cancel();
    while (self->live_workers > 0)
        co_await self->workers_exited.wait();
    if (state.durable()) {
        // The last changes (counters, the records of the last pages) are written before the report.
        self->committer_exit = true;
        self->commit_wanted.notify();
        while (self->committer_running)
            co_await self->workers_exited.wait();
        if (!self->storage_failure && !self->shared)
            co_await self->close_state();
    }
    if (self->store) {
        // A failed commit: closed as it is (the log holds every commit before it).
        auto close = [&self] { self->store.reset(); };
        co_await self->on_storage(close);
    }
    if (self->shared && !self->storage_failure) {
        try {
            co_await self->give_back_leases();
            co_await self->take_combined_report();
        } catch (...) {
            self->storage_failure = std::current_exception();
        }
    }
    for (const auto& problem : self->fetch.finish()) // idle connections, DNS, the cookie jar's file
        self->log(log_level::error, problem);
    if (self->redis_client)
        self->redis_client->close();
    if (self->storage_failure)
        self->rethrow_store_failure(self->storage_failure);

    // Only now: fetches that were in flight when a stop came have finished and are no longer "todo".
    auto& result = state.result();
    result.todo = self->queue.unfinished() + state.deferred();
    result.elapsed = state.progress().elapsed;
    self->log(log_level::info, "finished: " + std::to_string(result.done) + " records, " +
                                   std::to_string(result.todo) + " left");
    co_return std::move(result);
}

} // namespace asiocrawl
