// The embeddable crawler: build it from an executor and a config, co_await async_run, get a report.
#pragma once

#include <asiocrawl/config.hpp>
#include <asiocrawl/report.hpp>
#include <asiocrawl/sink.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/co_spawn.hpp>

#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace asiocrawl {

/// The crawl's state store refuses it, which only a change of configuration or command cures: a state
/// directory that belongs to another crawl definition (the message names what changed), holds something
/// else, is damaged or is in use by a running crawl; a shared crawl's Redis that refuses the password
/// (WRONGPASS, NOAUTH), holds another definition under the crawl id, or answers another error than a full
/// one. async_run completes with it, before anything is fetched unless Redis refuses a reconnection
/// mid-crawl (the CLI's exit status 2). docs/DEPLOY.md, "Exit status".
class state_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A write failed: the state directory's (no space left on device, an I/O error), or an output's, which the
/// output flush (set_output_flush) reports; or a shared crawl's Redis failed: unreachable for
/// state.redis_timeout, out of memory (OOM) or unable to persist (MISCONF), the connection lost. Before or
/// during the crawl alike. The crawl stops there; what was committed stays whole, and the same crawl run
/// again with the same state directory or Redis resumes from its last commit once the cause is gone (the
/// CLI's exit status 1).
class state_write_error : public state_error {
public:
    using state_error::state_error;
};

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

    /// Throws std::invalid_argument listing every problem when the config does not validate (see validate())
    /// or a pattern is not a valid regular expression. Nothing touches the network before async_run.
    ///
    /// With a state directory (config.state.dir) the constructor locks it (creating it when absent) before
    /// anything else reads, resets or writes it, and holds it until async_run has completed (or, never
    /// run, until the crawler is destroyed): a directory that another crawl holds, in this process or
    /// another, throws state_error naming that process's pid.
    crawler(executor_type executor, crawler_config config);
    ~crawler();
    crawler(const crawler&) = delete;
    crawler& operator=(const crawler&) = delete;

    executor_type get_executor() const noexcept;
    const crawler_config& config() const noexcept;

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
    /// state_write_error) instead of counting as done URLs whose output was lost. Set before async_run.
    using output_flush = std::function<void(bool sync, std::function<void(const std::string& error)> done)>;
    void set_output_flush(output_flush flush);

    /// True when `state_dir` holds a crawl's state (a crawl run with it would resume). Reads one file.
    static bool has_saved_state(const std::string& state_dir);

    /// A snapshot for progress lines and metrics. Call on the crawler's executor.
    crawl_progress progress() const;

    /// Runs the crawl to the end: until no URL is queued, waiting or in flight, or until stop().
    /// Completion signature: void(std::exception_ptr, asiocrawl::report). Works with any Asio completion
    /// token (use_awaitable, deferred, use_future, a plain callback). Call at most once per crawler.
    ///
    /// Per-operation cancellation: a cancellation slot bound to the token (bind_cancellation_slot, or the
    /// awaiting coroutine's own) is honoured. Partial or total cancellation drains gracefully, as stop();
    /// terminal cancellation aborts, as abort(). Either way the operation completes with the report so far.
    template <class CompletionToken>
    auto async_run(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::exception_ptr, report)>(
            [](auto handler, std::shared_ptr<impl> self) {
                auto slot = boost::asio::get_associated_cancellation_slot(handler);
                if (slot.is_connected()) {
                    slot.assign([weak = std::weak_ptr<impl>(self)](boost::asio::cancellation_type type) {
                        if (auto alive = weak.lock())
                            on_cancellation(alive, type);
                    });
                }
                auto executor = self_executor(*self);
                auto handler_executor = boost::asio::get_associated_executor(handler, executor);
                boost::asio::co_spawn(
                    executor, run(std::move(self)),
                    boost::asio::bind_executor(handler_executor, [handler = std::move(handler), slot](
                                                                     std::exception_ptr e, report r) mutable {
                        if (slot.is_connected())
                            slot.clear();
                        std::move(handler)(e, std::move(r));
                    }));
            },
            token, impl_);
    }

    /// Graceful stop: queued URLs are not started (they count in report::todo), fetches in flight finish,
    /// then async_run completes. Safe to call from any thread, any number of times.
    void stop();

    /// Immediate stop: like stop(), and fetches in flight are cancelled too (their URLs count in
    /// report::todo, without records). Safe to call from any thread, any number of times.
    void abort();

private:
    struct impl;
    static boost::asio::awaitable<report> run(std::shared_ptr<impl> self);
    static void on_cancellation(const std::shared_ptr<impl>& self, boost::asio::cancellation_type type);
    static executor_type self_executor(const impl& self) noexcept;
    std::shared_ptr<impl> impl_;
};

} // namespace asiocrawl
