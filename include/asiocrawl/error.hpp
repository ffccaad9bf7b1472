// Crawler-specific failure codes, so that records, reports and tests compare codes rather than strings.
#pragma once

#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace asiocrawl {

/// Failures that are the crawler's own verdicts rather than the network's. Values start at 1 so that a
/// default-constructed error_code always means "no error".
enum class error {
    // URL handling
    invalid_url = 1,    ///< the reference could not be parsed or resolved into an absolute URL
    unsupported_scheme, ///< not http or https
    // redirects
    redirect_limit,   ///< the chain ran out of its max_redirect budget
    missing_location, ///< a redirect status without a Location header (or an empty one)
    invalid_location, ///< a Location that cannot be resolved into an http(s) URL
    // fetching
    connect_timeout,      ///< no TCP connection within fetch_config::connect_timeout
    request_timeout,      ///< the response did not complete within fetch_config::request_timeout
    body_too_large,       ///< the body exceeded fetch_config::max_body_bytes
    header_too_large,     ///< the response head exceeded fetch_config::max_header_bytes
    bad_response,         ///< the peer answered something that is not valid HTTP/1.x
    decoding_failed,      ///< a gzip/deflate body that does not decode
    retry_limit,          ///< the server answered 429 or 503 to every one of max_tries attempts
    tls_handshake_failed, ///< the TLS handshake failed (protocol, cipher, or the peer is not TLS)
    certificate_invalid,  ///< the server's certificate did not verify (chain, expiry, or host name)
    forbidden_address, ///< the host resolved to an address refused by fetch_config::refuse_private_addresses
    proxy_failed,      ///< the proxy refused the CONNECT tunnel or answered something other than HTTP
    // policy
    robots_denied,      ///< robots.txt disallows the URL for our user agent (not a failure of the site)
    robots_unavailable, ///< robots.txt answered 5xx or could not be fetched: the origin is off limits (RFC
                        ///< 9309)
    // anything else
    internal_error, ///< an unexpected exception while processing one URL (a bug; the crawl goes on)
    // policy, added later (values are stored in durable state: new ones go last)
    type_rejected, ///< a 2xx answer whose Content-Type is not in crawler_config::accept_types (body not read)

    // The crawl's own failures: what crawler::async_run completes with (and crawler's constructor throws as
    // a crawl_error), never a record's error. The CLI's exit status follows the value (docs/DEPLOY.md, "Exit
    // status"): the first seven refuse the crawl before anything is fetched (2), the next five end it where
    // it is, what was committed kept (1).
    invalid_config, ///< the configuration does not validate (validate() lists every problem)
    state_mismatch, ///< the state directory or the Redis crawl id belongs to another crawl definition
    state_locked,   ///< the state directory is in use by another running crawl (the detail names its pid)
    state_unusable, ///< the state directory cannot be used: not a directory, not empty and not a crawl's
    store_damaged,  ///< the state directory's database, or what Redis holds for the crawl, does not decode
    redis_refused,  ///< the shared crawl's Redis refuses it: a wrong password (WRONGPASS, NOAUTH), an error
    output_exists,  ///< an output file or directory exists and the open mode is create_new
    output_unavailable, ///< an output cannot be opened (a path that cannot be created, an address in use)
    store_write_failed, ///< the state store cannot be written: no space left, an I/O error, Redis OOM/MISCONF
    redis_unreachable,  ///< the shared crawl's Redis did not answer for state.redis_timeout
    redis_lost,         ///< the connection to the shared crawl's Redis was lost and could not be resumed
    output_failed,      ///< an output could not be written (its flush failed): the crawl stops
};

const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(error e) noexcept {
    return {static_cast<int>(e), error_category()};
}

/// A short, stable, lower_snake_case name for any failure a record can carry: ours ("redirect_limit"), the
/// network's ("connection_refused", "connection_reset", "host_not_found", "eof"...), or "other" when unknown.
/// Used for the report's fail_<kind> counters and the JSON "error_kind" field.
std::string_view error_kind(const boost::system::error_code& ec) noexcept;

/// A crawl refused by one of the crawl's own failures (invalid_config ... output_failed), thrown by
/// crawler's constructor (state_locked, state_unusable: the state directory is locked there); async_run
/// completes with such a code and the detail in report::failure instead. code() is the value; detail() is the
/// text that names what failed (the path, the pid, the key), the line the CLI prints. what() is detail()
/// followed by the code's message.
class crawl_error : public boost::system::system_error {
public:
    crawl_error(error code, std::string detail);
    const std::string& detail() const noexcept { return detail_; }

private:
    std::string detail_;
};

} // namespace asiocrawl

template <>
struct boost::system::is_error_code_enum<asiocrawl::error> : std::true_type {};
