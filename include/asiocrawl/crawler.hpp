// The embeddable crawler: build it from an executor and a config, co_await async_run, get a report.
#pragma once

#include <asiocrawl/config.hpp>
#include <asiocrawl/report.hpp>
#include <asiocrawl/sink.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>

#include <exception>
#include <memory>
#include <utility>

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

    /// Throws std::invalid_argument listing every problem when the config does not validate (see validate())
    /// or a pattern is not a valid regular expression. Nothing touches the network before async_run.
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
    /// new fetch starts (checked every few milliseconds, never blocking the executor). Set before async_run.
    void set_backpressure(std::function<bool()> busy);

    /// A snapshot for progress lines and metrics. Call on the crawler's executor.
    crawl_progress progress() const;

    /// Runs the crawl to the end: until no URL is queued or in flight, or until stop().
    /// Completion signature: void(std::exception_ptr, asiocrawl::report). Works with any Asio completion
    /// token (use_awaitable, deferred, use_future, a plain callback). Call at most once per crawler.
    template <class CompletionToken>
    auto async_run(CompletionToken&& token) {
        return boost::asio::co_spawn(get_executor(), run(impl_), std::forward<CompletionToken>(token));
    }

    /// Graceful stop: queued URLs are not started (they count in report::todo), fetches in flight finish,
    /// then async_run completes. Safe to call from any thread, any number of times.
    void stop();

private:
    struct impl;
    static boost::asio::awaitable<report> run(std::shared_ptr<impl> self);
    std::shared_ptr<impl> impl_;
};

} // namespace asiocrawl
