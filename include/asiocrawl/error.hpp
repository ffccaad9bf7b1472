// Crawler-specific failure codes, so that records, reports and tests compare codes rather than strings.
#pragma once

#include <boost/system/error_code.hpp>

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
};

const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(error e) noexcept {
    return {static_cast<int>(e), error_category()};
}

/// A short, stable, lower_snake_case name for any failure a record can carry: ours ("redirect_limit"), the
/// network's ("connection_refused", "connection_reset", "host_not_found", "eof"...), or "other" when unknown.
/// Used for the report's fail_<kind> counters and the JSON "error_kind" field.
std::string_view error_kind(const boost::system::error_code& ec) noexcept;

} // namespace asiocrawl

template <>
struct boost::system::is_error_code_enum<asiocrawl::error> : std::true_type {};
