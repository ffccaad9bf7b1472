// The embeddable crawler: build it from an executor and a config, co_await async_run, get a report.
#pragma once

#include <asiocrawl/config.hpp>
#include <asiocrawl/control.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/report.hpp>
#include <asiocrawl/sink.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

/// A crawl over one executor. All crawl state lives on that executor (one thread, no locks), like the
/// asyncio crawler it descends from: `max_tasks` worker coroutines pull (url, max_redirect) items from a
/// joinable work queue, fetch them, follow redirects themselves and queue the links they find.
///
/// The library never prints and installs no signal handlers: records go to the record sink, messages to the
/// logger, and the final report to the completion of async_run.
///
/// Lifetime: state is held in a shared impl that a running crawl keeps alive, so destroying the crawler
/// during a crawl is safe; it stops the crawl (as stop() does) and the operation still completes.
class crawler {
public:
    using executor_type = boost::asio::any_io_executor;

    /// Throws std::invalid_argument listing every problem when the config does not validate (see validate(),
    /// which returns them one by one), a pattern is not a valid regular expression, or config.input_file
    /// cannot be opened. Nothing touches the network before async_run.
    ///
    /// With a state directory (config.state.dir) the constructor locks it (creating it when absent) before
    /// anything else reads, resets or writes it, and holds it until async_run has completed (or, never
    /// run, until the crawler is destroyed): a directory that another crawl holds, in this process or
    /// another, throws crawl_error with error::state_locked, its detail() naming that process's pid
    /// (error::state_unusable: a directory that cannot be created, opened or locked).
    crawler(executor_type executor, crawler_config config);
    ~crawler();
    crawler(const crawler&) = delete;
    crawler& operator=(const crawler&) = delete;

    executor_type get_executor() const noexcept;
    const crawler_config& config() const noexcept;

    /// The set_* hooks below are set before async_run: called once the crawl has started, they throw
    /// std::logic_error (a hook that came late would miss what was already made, silently).

    /// Receives every record as it is made. Set before async_run.
    void set_record_sink(record_sink sink);
    /// Receives log messages. Set before async_run.
    void set_logger(logger log);
    /// Receives the decoded body of every 2xx response. Set before async_run.
    void set_body_sink(body_sink sink);
    /// Receives every HTTP exchange as it crossed the wire (turns capture on). Set before async_run.
    void set_exchange_sink(exchange_sink sink);
    /// Back-pressure from an output that can fall behind (a writer thread): while `busy()` returns true, no
    /// new fetch starts. The output calls notify_drained() when it stops being busy; nothing polls. Set
    /// before async_run.
    void set_backpressure(std::function<bool()> busy);
    /// An output that was busy() has room again: waiting fetches may start. Safe from any thread.
    void notify_drained();
    /// With a state directory: called before each commit of the crawl's state, with a completion to call
    /// (from any thread) once everything handed to the sinks so far has been written out; `sync` asks for
    /// fsync too (state.fsync). The commit waits for it, so a resumed crawl never lacks the output of a URL
    /// its state counts as done. A non-empty error ends the crawl (async_run completes with a
    /// error::output_failed) instead of counting as done URLs whose output was lost. `archived`: where the
    /// archive put the captures the crawl named since the previous flush (may be empty); the state keeps
    /// them in the fetch history. Set before async_run.
    using output_flush_done =
        std::function<void(const std::string& error, std::vector<archived_capture> archived)>;
    using output_flush = std::function<void(bool sync, output_flush_done done)>;
    void set_output_flush(output_flush flush);

    /// True when `state_dir` holds a crawl's state (a crawl run with it would resume). Reads one file.
    static bool has_saved_state(const std::string& state_dir);

    /// A snapshot for progress lines and metrics. Call on the crawler's executor.
    crawl_progress progress() const;

    /// Runs the crawl to the end: until no URL is queued, waiting or in flight, or until stop().
    /// Completion signature: void(boost::system::error_code, asiocrawl::report). Works with any Asio
    /// completion token (use_awaitable, deferred, use_future, a plain callback). Call at most once per
    /// crawler (a second call completes with boost::asio::error::already_started).
    ///
    /// The code is empty when the crawl ran to its end or was stopped (stop(), abort(), a cancellation, a
    /// quota): the report then says how far it got (report::todo). Otherwise it is one of the crawl's own
    /// failures, values of asiocrawl::error_category() (state_mismatch, store_damaged, store_write_failed,
    /// redis_unreachable, output_failed... see error.hpp), or error::internal_error for an unexpected
    /// exception; report::failure then holds the text naming what failed (the path, the key, the pid), and
    /// the report counts what was done before. Nothing is thrown through the completion.
    ///
    /// Per-operation cancellation: a cancellation slot bound to the token (bind_cancellation_slot, or the
    /// awaiting coroutine's own) is honoured. Partial or total cancellation drains gracefully, as stop();
    /// terminal cancellation aborts, as abort(). Either way the operation completes with the report so far.
    ///
    /// The operation itself is compiled into the library (start()): this template only adapts the token.
    template <class CompletionToken>
    auto async_run(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, report)>(
            [](auto handler, std::shared_ptr<impl> self) { start(std::move(self), std::move(handler)); },
            token, impl_);
    }

    /// Graceful stop: queued URLs are not started (they count in report::todo), fetches in flight finish,
    /// then async_run completes. Safe to call from any thread, any number of times.
    void stop();

    /// Immediate stop: like stop(), and fetches in flight are cancelled too (their URLs count in
    /// report::todo, without records). Safe to call from any thread, any number of times.
    void abort();

    /// Steering a running crawl (docs/CONTROL.md; the CLI's control API calls these). Call them on the
    /// crawler's executor, before or during async_run. Hosts are named as the crawl keys them: lower case,
    /// internationalized names in punycode, without the port. In a shared crawl (state.redis) pauses, resumes
    /// and limits act crawl-wide: applied here at once, then through Redis by every instance.

    /// Nothing of `host` starts until resume_host (fetches in flight finish). A host not seen yet is paused
    /// for when its URLs come. Kept in a durable crawl's state, so a resumed crawl keeps the pause. While a
    /// paused host has URLs waiting, the crawl does not end (stop() ends it).
    void pause_host(std::string_view host);
    /// Undoes pause_host. False when the host was not paused.
    bool resume_host(std::string_view host);
    /// Changes a host's delay and requests in flight from now on (kept in a durable crawl's state too).
    /// Throws std::invalid_argument for a max_per_host of 0 or a negative delay.
    void set_host_limits(std::string_view host, const host_limits& limits);
    /// Admits URLs as links are admitted (depth 0, the same scope rules, filters and max_pages), not as
    /// roots: they never widen the scope.
    std::vector<seed_verdict> add_seeds(const std::vector<std::string>& urls);
    /// Every host seen (or paused, or limited), in the order first seen.
    std::vector<host_status> hosts() const;
    /// The failures crawler::urls() can list, the latest ones.
    static constexpr std::size_t kept_failures = 1000;
    url_page urls(const url_query& query) const;

private:
    struct impl;
    using run_handler = boost::asio::any_completion_handler<void(boost::system::error_code, report)>;
    /// async_run's operation: runs the crawl on its executor and completes `handler` on the handler's own.
    static void start(std::shared_ptr<impl> self, run_handler handler);
    std::shared_ptr<impl> impl_;
};

} // namespace asiocrawl
