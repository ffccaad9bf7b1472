// Fetches one URL over HTTP/1.1 with pooled keep-alive connections, timeouts, size limits and retries.
// It never follows redirects: a 3xx is an answer like any other, handed back to the crawler.
#pragma once

#include <asiocrawl/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>
#include <boost/url/url_view.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace asiocrawl::detail {

/// What one fetch produced. `error` set means no usable response: `status` is then 0, unless the failure came
/// after the head (body too large, connection lost mid-body), where status and headers are those of the head.
struct fetch_result {
    boost::system::error_code error;
    int status = 0;
    /// Content-Type header as sent (empty when absent).
    std::string content_type;
    /// Location header, when present (possibly empty).
    std::optional<std::string> location;
    std::string body;
    /// Body bytes received (equals body.size() on success).
    std::uint64_t body_bytes = 0;
    /// Attempts that counted against max_tries (a stale pooled connection is retried for free).
    int attempts = 0;
};

/// Counters a benchmark or test can read.
struct fetcher_stats {
    std::size_t connections_opened = 0;
    std::size_t connections_reused = 0;
    std::size_t stale_retries = 0; ///< requests re-sent because a pooled connection turned out closed
};

class fetcher {
public:
    /// `max_idle_per_origin` bounds the pool: more idle connections to one origin than workers can use are
    /// closed instead of kept.
    fetcher(boost::asio::any_io_executor executor, fetch_config config, int max_tries,
            std::size_t max_idle_per_origin);
    ~fetcher();
    fetcher(const fetcher&) = delete;
    fetcher& operator=(const fetcher&) = delete;

    /// GETs `url` (an http URL in normalized form), retrying network failures up to max_tries attempts in
    /// total. Never throws for network or protocol failures: they come back in fetch_result::error.
    boost::asio::awaitable<fetch_result> fetch(boost::urls::url_view url);

    /// Closes every idle pooled connection (at the end of a crawl). Fetches in flight are not affected.
    void close_idle();

    /// Attempts under way finish, but no fetch starts another one: a stopping crawl should not wait for
    /// max_tries more timeouts.
    void stop_retrying() noexcept;

    const fetcher_stats& stats() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// True for failures worth another attempt: the network's (refused, reset, timeouts, lost connections,
/// temporary DNS failures), not the server's answers (bad HTTP, too large) nor permanent DNS failures.
bool is_retryable(const boost::system::error_code& ec) noexcept;

} // namespace asiocrawl::detail
