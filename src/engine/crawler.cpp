// The crawler's public face and its run: opens the state, starts the engine's parts
// (src/engine/crawler_impl.hpp) and joins them, then closes the state and makes the report. Every decision
// about URLs is the crawl state's (src/state/crawl_state.hpp).
#include "engine/crawler_impl.hpp"

#include "http/fetch_settings.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <sys/resource.h>

namespace asiocrawl {

namespace asio = boost::asio;

namespace detail {

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

/// The state dir's copy of HSTS's known hosts: read when the dir holds a crawl's state and is not being
/// reset (crawler::async_run writes it back when the crawl ends).
hsts_files state_hsts_files(const crawler_config& config) {
    hsts_files files;
    const auto& state = config.state;
    if (config.fetch.hsts.enabled && !state.dir.empty() && state.redis.empty() && !state.reset &&
        state_store::holds_state(state.dir))
        files.load.push_back((std::filesystem::path(state.dir) / state_hsts_file).string());
    return files;
}

} // namespace

engine::engine(asio::any_io_executor ex, crawler_config cfg)
    : executor(std::move(ex))
    , config(with_root_credentials(checked(std::move(cfg)))) // before parse_root drops them
    , queue(executor)
    , state(config, state_hooks(), !config.state.dir.empty() || !config.state.redis.empty(),
            config.state.redis.empty() ? config.state.window : 0)
    , fetch(executor, config.fetch, config.max_tasks, state_hsts_files(config))
    , pump(*this)
    , feeder(*this)
    , workers(*this)
    , commits(*this)
    , leases(*this) {
    // Before anything reads, resets or writes the directory: a second crawl in it is refused here.
    if (!config.state.dir.empty() && config.state.redis.empty())
        state_dir_lock.emplace(config.state.dir);
    if (config.parse_threads > 0)
        parse_pool = std::make_unique<parse_lanes>(config.parse_threads, executor);
    if (!config.state.redis.empty()) {
        state.set_shared();
        config.keep_records = false; // each instance writes its own; Redis keeps no records
    }
    if (!config.input_file.empty())
        seeds = std::make_unique<seed_reader>(config.input_file, config.input_fd); // may throw
    if (!config.state.recrawl_from.empty())
        load_recrawl_source();
}

// Read here, on the embedder's thread like the seed file's opening, not on the executor: a previous run's
// records can be tens of megabytes.
void engine::load_recrawl_source() {
    const auto& path = config.state.recrawl_from;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::invalid_argument("state.recrawl_from " + path + ": cannot open: " + std::strerror(errno));
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad())
        throw std::invalid_argument("state.recrawl_from " + path + ": cannot read: " + std::strerror(errno));
    std::size_t skipped = 0;
    auto history = parse_recrawl_source(text, skipped);
    if (history.empty() && skipped > 0)
        throw std::invalid_argument("state.recrawl_from " + path +
                                    ": holds neither asiocrawl records (JSON Lines) nor a CDXJ index");
    log(log_level::info, "re-crawl from " + path + ": " + std::to_string(history.size()) + " URLs known" +
                             (skipped > 0 ? ", " + std::to_string(skipped) + " lines skipped" : ""));
    state.set_history(std::move(history), 2, true);
}

engine::~engine() {
    if (seeds)
        seeds->cancel(); // a read waiting for stdin ends
    if (seed_thread)
        seed_thread->join();
    if (parse_pool)
        parse_pool->join();
    if (storage)
        storage->join();
}

crawl_state::hooks engine::state_hooks() {
    crawl_state::hooks h;
    h.hold = [this] { return queue.hold(); };
    h.release = [this] { queue.release(); };
    h.emit = [this](const record& r) {
        if (sink)
            sink(r);
    };
    return h;
}

void engine::log(log_level level, const std::string& message) {
    if (state_log.enabled(level))
        state_log.write(level, message);
}

// ---- the crawl: every part started here and joined here ----

asio::awaitable<void> engine::crawl() {
    using namespace asio::experimental::awaitable_operators;
    crawling = true;
    pump.pump();
    co_await (until_no_work() && workers_then_last_commit() && pump.run() && feeder.run() && commits.run());
}

asio::awaitable<void> engine::until_no_work() {
    if (shared)
        co_await leases.run(); // the whole crawl is over (or stopping): nothing more is leased here
    co_await queue.join();
    queue.close();
    pump.close();
    feeder.close();
}

asio::awaitable<void> engine::workers_then_last_commit() {
    co_await workers.run();
    if (parse_pool)
        log(log_level::debug, "parse threads: " + std::to_string(parse_pool->pages_handed_over()) + " of " +
                                  std::to_string(parse_pool->pages_asked()) + " pages handed over");
    // The last changes (counters, the records of the last pages) are written before the report.
    commits.finish();
}

// ---- stopping ----

void engine::request_stop() {
    if (stopping != stop_level::none)
        return;
    stopping = stop_level::graceful;
    if (seeds)
        seeds->cancel();
    log(log_level::info, "stopping: " + std::to_string(queue.unfinished()) + " URLs unfinished");
    state.stop();
    queue.close();
    pump.close();
    feeder.close();
    leases.poke();
}

void engine::request_abort() {
    request_stop();
    if (stopping == stop_level::terminal)
        return;
    stopping = stop_level::terminal;
    log(log_level::info, "aborting: " + std::to_string(state.in_flight()) + " fetches in flight cancelled");
    if (state.in_flight() > 0)
        state.result().stats["aborted_in_flight"] += state.in_flight();
    workers.abort();
    workers.outputs_drained.notify();
    commits.release_waiters();
}

void engine::fail(std::exception_ptr failure) {
    storage_failure = std::move(failure);
    request_abort();
}

crawl_progress engine::snapshot() const {
    crawl_progress p = state.progress();
    const auto in_flight = state.in_flight();
    p.queued = queue.unfinished() > in_flight ? queue.unfinished() - in_flight : 0;
    return p;
}

/// state.redis_timeout passed without an answer: a store that failed (exit status 1, as a full disk),
/// what is held is safe.
crawl_error engine::gave_up_on_redis(const redis::unreachable& e) const {
    return crawl_error(error::redis_unreachable,
                       std::string(e.what()) +
                           ": giving up after state.redis_timeout; the URLs leased here go back to the "
                           "crawl when their leases expire, and running this instance again continues "
                           "the crawl");
}

/// One rule for a state store that fails, whatever the moment (docs/DEPLOY.md, "Exit status"): a store
/// that refuses this crawl, which only a change of configuration cures (a wrong password, another crawl's
/// keys), is error::redis_refused (exit 2); one that is full, unreachable or lost is store_write_failed,
/// redis_unreachable or redis_lost (exit 1), and the same command continues the crawl once it is back.
/// Redis's own errors are sorted here; the others pass unchanged.
[[noreturn]] void engine::rethrow_store_failure(std::exception_ptr failure) const {
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

} // namespace detail

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
    asio::post(impl_->executor, [self = impl_] { self->workers.outputs_drained.notify(); });
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

// ---- steering (docs/CONTROL.md) ----

namespace {

/// Host names as the crawl keys them: the control API's callers may write them in capitals.
std::string host_key(std::string_view host) {
    std::string key(host);
    for (auto& c : key)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return key;
}

} // namespace

void detail::engine::steered() {
    // Before async_run nothing pumps yet; after the crawl closed nothing may be queued.
    if (crawling && stopping == stop_level::none)
        pump.pump();
    else if (state.durable())
        commits.want();
}

// In a shared crawl each change also goes to Redis, for every instance (lease_loop::share_control).

void crawler::pause_host(std::string_view host) {
    const auto key = host_key(host);
    impl_->state.pause_host(key);
    impl_->leases.share_control({detail::lease_loop::control_change::kind::pause, key, {}});
    impl_->steered();
}

bool crawler::resume_host(std::string_view host) {
    const auto key = host_key(host);
    const bool was = impl_->state.resume_host(key);
    impl_->leases.share_control({detail::lease_loop::control_change::kind::resume, key, {}});
    impl_->steered();
    return was;
}

void crawler::set_host_limits(std::string_view host, const host_limits& limits) {
    const auto key = host_key(host);
    std::optional<detail::crawl_state::clock_type::duration> delay;
    if (limits.delay)
        delay = *limits.delay;
    impl_->state.set_host_limits(key, delay, limits.max_per_host);
    impl_->leases.share_control(
        {detail::lease_loop::control_change::kind::limits, key, {limits.delay, limits.max_per_host}});
    impl_->steered();
}

std::vector<seed_verdict> crawler::add_seeds(const std::vector<std::string>& urls) {
    std::vector<seed_verdict> out;
    out.reserve(urls.size());
    for (const auto& url : urls) {
        seed_verdict v;
        v.url = url;
        if (!impl_->crawling || impl_->stopping != detail::stop_level::none)
            v.reason = impl_->crawling ? "stopping" : "not_running";
        else
            v.reason = impl_->state.admit_seed(url);
        v.admitted = v.reason.empty();
        out.push_back(std::move(v));
    }
    impl_->steered();
    return out;
}

std::vector<host_status> crawler::hosts() const {
    return impl_->state.host_statuses();
}

url_page crawler::urls(const url_query& query) const {
    return impl_->state.list_urls(query);
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
    if (std::exchange(self->started, true)) {
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
            co_await self->leases.open();
        else if (state.durable())
            co_await self->commits.open_state();
        state.start();
        self->log(log_level::info, "crawling " + std::to_string(self->config.roots.size()) +
                                       " root(s) with " + std::to_string(self->config.max_tasks) +
                                       " workers as \"" + state.user_agent() + "\"");
        if (self->shared) {
            // The roots are in the shared frontier before any instance may find the crawl over.
            const auto roots = state.take_batch();
            co_await self->leases.commit(roots);
            co_await self->leases.admit_known_urls(); // a re-crawl's new generation
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

    co_await self->crawl();

    if (state.durable() && !self->storage_failure && !self->shared)
        co_await self->commits.close_state();
    if (self->store) {
        // A failed commit: closed as it is (the log holds every commit before it).
        auto close = [&self] { self->store.reset(); };
        co_await self->on_storage(close);
    }
    if (self->shared && !self->storage_failure) {
        try {
            co_await self->leases.give_back_leases();
            co_await self->leases.take_combined_report();
        } catch (...) {
            self->storage_failure = std::current_exception();
        }
    }
    for (const auto& problem : self->fetch.finish()) // idle connections, DNS, the cookie jar's file
        self->log(log_level::error, problem);
    // HSTS's known hosts into the state dir, for the next run of this crawl; never into a directory that
    // holds no crawl state (one refused as foreign).
    const auto& state_dir = self->config.state.dir;
    if (self->fetch.hsts() && !state_dir.empty() && self->config.state.redis.empty() &&
        detail::state_store::holds_state(state_dir))
        if (auto problem = self->fetch.hsts()->save(
                (std::filesystem::path(state_dir) / detail::state_hsts_file).string()))
            self->log(log_level::error, *problem);
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
