// How the library talks to its embedder: it never prints; it calls these.
#pragma once

#include <asiocrawl/record.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

enum class log_level { debug = 0, info = 1, warning = 2, error = 3, off = 4 };

/// A level and a function the embedder supplies. Messages below `level` are never formatted.
/// Called on the crawler's executor, one call at a time.
struct logger {
    log_level level = log_level::warning;
    std::function<void(log_level, std::string_view)> write;

    bool enabled(log_level l) const noexcept { return write && l >= level && level != log_level::off; }
};

/// Called once per record, on the crawler's executor, as soon as the record is final. The record is only
/// valid during the call: copy what you keep. Must not throw.
using record_sink = std::function<void(const record&)>;

/// Called with the decoded body of every 2xx response that has one (pages, sitemaps), after its record was
/// made. The view is only valid during the call. Must not throw.
using body_sink = std::function<void(const record&, std::string_view body)>;

/// One HTTP request and its response, as they crossed the wire: what an archive (WARC) stores.
/// Views are only valid during the sink call.
struct http_exchange {
    enum class purpose { page, robots, sitemap };
    purpose kind = purpose::page;
    /// The requested URL.
    std::string_view url;
    /// The peer's IP address ("" when no connection was made).
    std::string_view remote_ip;
    /// When the request was sent.
    std::chrono::system_clock::time_point started{};
    /// The protocol that carried the exchange: "http/1.1" or "h2". An h2 exchange's request and response
    /// are written here in HTTP/1.1 message form (docs/OUTPUTS.md).
    std::string_view protocol;
    /// The request bytes sent (head only: asiocrawl sends GETs).
    std::string_view request;
    /// The response bytes received after TLS, unchanged: head, then the body with its transfer and content
    /// codings. Possibly partial (see `complete` and `error`).
    std::string_view response;
    /// Bytes of `response` that belong to the head (status line and fields, including the blank line).
    std::size_t response_head_bytes = 0;
    /// True when the whole response was received.
    bool complete = false;
    boost::system::error_code error;
    /// Set when the crawl knows this response repeats an earlier capture of the same URL made by a previous
    /// crawl (a re-crawl, crawler_config::state.recrawl): an archive then writes a `revisit` record (WARC 1.1
    /// section 6.7) that refers to that capture instead of a second copy of the payload. Repeats within one
    /// crawl are the archive's own business (it has seen both).
    struct earlier_capture {
        enum class profile {
            none,                    ///< not a revisit
            server_not_modified,     ///< the server answered 304 to a conditional request
            identical_payload_digest ///< a 2xx whose payload equals the earlier capture's
        };
        profile why = profile::none;
        /// The earlier capture's WARC-Target-URI.
        std::string_view target_uri;
        /// The earlier capture's WARC-Date.
        std::chrono::system_clock::time_point date{};
        /// The earlier capture's WARC-Record-ID ("<urn:uuid:...>"); empty when unknown.
        std::string_view record_id;
        /// The earlier capture's payload digest ("sha1:BASE32"); empty when unknown.
        std::string_view payload_digest;
    };
    earlier_capture revisit;
    /// The WARC-Record-ID ("<urn:uuid:...>") a crawl with a fetch history (a state directory) gave this
    /// answer's capture, so that a later crawl's revisit can name it in WARC-Refers-To: an archive gives it
    /// to the record it writes for the response. Empty: the archive makes its own.
    std::string_view record_id;
};

/// Called for every exchange when set (WARC writers). Must not throw.
using exchange_sink = std::function<void(const http_exchange&)>;

/// Where an archive put a capture the crawl named (http_exchange::record_id): an output's flush hands these
/// back to the crawl (crawler::set_output_flush), which keeps them in the URL's fetch history, so that the
/// state says which WARC record holds each URL's last payload.
struct archived_capture {
    /// http_exchange::record_id of the exchange ("<urn:uuid:...>").
    std::string record_id;
    /// http_exchange::url.
    std::string url;
    /// The WARC file's name (its last path component, as CDXJ's `filename`).
    std::string file;
    /// Where the record starts in that file (for a ".warc.gz", where its gzip member starts), and its length
    /// there (compressed, for a ".warc.gz").
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    /// The record's WARC-Payload-Digest: the payload with its content coding (gzip) kept, which is not
    /// record::payload_digest (the decoded body's) when the response was content-coded.
    std::string payload_digest;
};

/// A live picture of a crawl, for progress lines and metrics gauges. Read on the crawler's executor.
struct crawl_progress {
    std::size_t records = 0;       ///< records made so far
    std::size_t queued = 0;        ///< URLs waiting: in the queue, for a host slot, or for a retry
    std::size_t in_flight = 0;     ///< fetches under way
    std::size_t hosts = 0;         ///< distinct hosts seen
    std::size_t failures = 0;      ///< records with an error (robots denials excluded)
    std::size_t robots_denied = 0; ///< URLs refused by robots.txt
    std::size_t retries = 0;       ///< attempts beyond the first
    std::uint64_t bytes = 0;       ///< body bytes received (decoded)
    std::chrono::steady_clock::duration elapsed{};
};

} // namespace asiocrawl
