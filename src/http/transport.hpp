// The seam between the engine and the wire: one attempt to fetch a URL, whatever protocol carries it.
//
// A transport is an abstract class, not a template or a type-erased handler: one virtual call per fetch costs
// nothing beside a network round trip, and the engine, the CLI and the tests then compile against this header
// alone. What a transport does is the whole attempt: resolve, connect (proxy, TLS), send, read the answer
// within the fetch_config bounds, decode it, keep connections for reuse. It never follows redirects, never
// retries beyond a re-send on a pooled connection that went stale, and never throws for network or protocol
// failures: they come back in fetch_result::error, with the error kinds of asiocrawl/error.hpp.
//
// HTTP/1.1 is http1_transport (src/http/http1_transport.hpp). A second protocol (HTTP/2) is a second
// implementation beside it, made by fetcher's constructor; the engine holds a `fetcher`, which owns one
// transport, and does not change. docs/FETCHING.md describes the parts.
#pragma once

#include "http/dns_resolver.hpp"
#include "http/fetch_result.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

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
    /// A conditional request (RFC 9110 13.1): sent as If-None-Match / If-Modified-Since when not empty, from
    /// an earlier capture's ETag and Last-Modified (a re-crawl). Views valid until the attempt completes.
    std::string_view if_none_match;
    std::string_view if_modified_since;
    /// More header fields, each "Name: value\r\n" (crawler_config::hosts headers). Valid until the attempt
    /// completes.
    std::string_view extra_fields;
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
    /// HTTP/2: connections that negotiated h2 (or h2c), streams opened on them, and fetches sent again on a
    /// new connection because theirs went away before answering (GOAWAY, REFUSED_STREAM, a lost connection).
    std::size_t h2_connections = 0;
    std::size_t h2_streams = 0;
    std::size_t h2_retries = 0;
};

/// One protocol's way of making fetch attempts. Used from the executor it was made with, one thread.
class transport {
public:
    virtual ~transport() = default;

    /// One attempt to GET `url` (an http or https URL in normalized form, valid until the operation
    /// completes). `out` is reset at the start and holds the result at the end; while the attempt waits for
    /// the server it holds nothing response-sized (`out` is allocated when the answer starts arriving or
    /// the attempt fails), since the crawler keeps thousands of fetches waiting at once.
    virtual boost::asio::awaitable<void> fetch_into(std::string_view url, fetch_options options,
                                                    std::unique_ptr<fetch_result>& out) = 0;

    /// Closes every idle connection and ends the DNS lookups still in flight, so that the transport keeps no
    /// work pending on the executor. Fetches in flight are not affected.
    virtual void close_idle() = 0;

    /// The end of a crawl: close_idle(), then what must outlive the crawl is written (the cookie jar's
    /// file). Returns what went wrong (for the log); empty when all went well.
    virtual std::vector<std::string> finish() = 0;

    virtual const fetcher_stats& stats() const noexcept = 0;
    /// The resolver's counters.
    virtual const dns_stats& dns() const noexcept = 0;
    /// Cookies in the jar (0 with cookies off).
    virtual std::size_t cookies() const noexcept = 0;
};

/// True for failures worth another attempt: the network's (refused, reset, timeouts, lost connections,
/// temporary DNS failures), not the server's answers (bad HTTP, too large) nor permanent DNS failures.
bool is_retryable(const boost::system::error_code& ec) noexcept;

} // namespace asiocrawl::detail
