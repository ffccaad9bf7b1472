// Fetches one URL over HTTP/1.1 or HTTPS with pooled keep-alive connections, timeouts, size limits, gzip and
// deflate decoding, and an optional guard against private addresses. It never follows redirects: a 3xx is an
// answer like any other, handed back to the crawler. docs/FETCHING.md describes the behavior in full.
#pragma once

#include "http/dns_resolver.hpp"
#include "http/fetch_result.hpp"

#include <asiocrawl/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>
#include <boost/url/url_view.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

#include "http/dns_resolver.hpp"
#include "http/fetch_result.hpp"
/// Per-request options.
struct fetch_options {
    /// Keep the raw request and response bytes in the result (for an exchange sink).
    bool capture = false;
    /// Overrides fetch_config::max_body_bytes for this request (robots.txt has its own cap; a body over it is
    /// then truncated, not an error, as RFC 9309 asks). Counted in decoded bytes; the connection is closed
    /// after a cut. Unset: the config's limit, and too large is an error.
    std::optional<std::uint64_t> truncate_body_at;
    /// crawler_config::accept_types: a 2xx answer whose Content-Type is not accepted (media_type_accepted)
    /// ends after its head with error::type_rejected; the body is not read. Null: every type.
    const std::vector<std::string>* accept_types = nullptr;
};

/// Counters a benchmark or test can read.
struct fetcher_stats {
    std::size_t connections_opened = 0;
    std::size_t connections_reused = 0;
    std::size_t stale_retries = 0; ///< requests re-sent because a pooled connection turned out closed
    /// Pooled connections given up when their turn came: the server had closed them, or had sent bytes
    /// nobody asked for while they idled.
    std::size_t idle_connections_dropped = 0;
    /// Times a connect found every descriptor of the process in use and waited for one.
    std::size_t descriptor_waits = 0;
};

class fetcher {
public:
    /// `max_idle_per_origin` bounds the pool: more idle connections to one origin than workers can use are
    /// closed instead of kept.
    /// Throws boost::system::system_error when tls.ca_file cannot be loaded, std::invalid_argument when a
    /// proxy, header or credential setting is invalid or cookies.load_file cannot be read (before the crawl:
    /// the file is read here), std::runtime_error when the DNS resolver cannot start.
    fetcher(boost::asio::any_io_executor executor, fetch_config config, std::size_t max_idle_per_origin);
    ~fetcher();
    fetcher(const fetcher&) = delete;
    fetcher& operator=(const fetcher&) = delete;

    /// One attempt to GET `url` (an http or https URL in normalized form). Retrying is the caller's policy;
    /// the only re-send done here is on a fresh connection when a pooled one turns out to have been closed by
    /// the server while idle (that costs the URL nothing). Never throws for network or protocol failures:
    /// they come back in fetch_result::error.
    boost::asio::awaitable<fetch_result> fetch(boost::urls::url_view url, fetch_options options = {});

    /// The same attempt, for a caller that keeps thousands of fetches waiting at once (the crawler): while
    /// it waits for the server, a fetch holds no fetch_result, parser or read buffer, and `out` is allocated
    /// only when the response starts arriving or the attempt fails. `url` is an http or https URL in
    /// normalized form and must stay valid until the operation completes.
    boost::asio::awaitable<void> fetch_into(std::string_view url, fetch_options options,
                                            std::unique_ptr<fetch_result>& out);

    /// Closes every idle pooled connection (TLS ones get a close_notify when the socket takes it at once) and
    /// ends the DNS lookups still in flight, so that the fetcher keeps no work pending on the executor.
    /// Fetches in flight are not affected.
    void close_idle();

    /// The end of a crawl: close_idle(), then the cookie jar is written to fetch.cookies.save_file when one
    /// is set. Returns what went wrong (for the log); empty when all went well.
    std::vector<std::string> finish();

    const fetcher_stats& stats() const noexcept;
    /// The resolver's counters.
    const dns_stats& dns() const noexcept;
    /// Cookies in the jar (0 with cookies off).
    std::size_t cookies() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// The parts of an absolute http(s) URL that a request needs, sliced from its text without parsing or
/// allocating (it runs for every fetch). Equal to Boost.URL's encoded_* accessors for a valid URI; nullopt
/// when there is no "//" authority or an IPv6 literal is not closed. No validation beyond that: the fetcher
/// takes valid URLs.
struct url_slices {
    std::string_view scheme;
    std::string_view host_and_port;        ///< the authority without userinfo (encoded_host_and_port)
    std::string_view host;                 ///< brackets stripped from an IP literal (encoded_host_address)
    std::optional<std::string_view> port;  ///< after ':', possibly empty; nullopt without ':'
    std::string_view path;                 ///< possibly empty
    std::optional<std::string_view> query; ///< after '?', possibly empty; nullopt without '?'
};
std::optional<url_slices> slice_url(std::string_view url) noexcept;

/// True for failures worth another attempt: the network's (refused, reset, timeouts, lost connections,
/// temporary DNS failures), not the server's answers (bad HTTP, too large) nor permanent DNS failures.
bool is_retryable(const boost::system::error_code& ec) noexcept;

} // namespace asiocrawl::detail
