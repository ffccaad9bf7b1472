#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/system/errc.hpp>

#include <span>
#include <string>
#include <utility>

namespace asiocrawl {

namespace {

struct error_info {
    std::string_view kind;
    const char* message;
};

// The kind is the enumerator's own name so that counters and JSON read like the code. No default case: the
// compiler warns when an enumerator is added without a description.
error_info describe(error e) noexcept {
    switch (e) {
    case error::invalid_url:
        return {"invalid_url", "invalid URL"};
    case error::unsupported_scheme:
        return {"unsupported_scheme", "unsupported URL scheme"};
    case error::redirect_limit:
        return {"redirect_limit", "redirect limit reached"};
    case error::missing_location:
        return {"missing_location", "redirect without a Location header"};
    case error::invalid_location:
        return {"invalid_location", "redirect Location is not a valid http(s) URL"};
    case error::connect_timeout:
        return {"connect_timeout", "connection timed out"};
    case error::request_timeout:
        return {"request_timeout", "request timed out"};
    case error::body_too_large:
        return {"body_too_large", "response body too large"};
    case error::header_too_large:
        return {"header_too_large", "response header too large"};
    case error::bad_response:
        return {"bad_response", "malformed HTTP response"};
    case error::decoding_failed:
        return {"decoding_failed", "response body does not decode (gzip/deflate)"};
    case error::retry_limit:
        return {"retry_limit", "server kept answering 429/503"};
    case error::tls_handshake_failed:
        return {"tls_handshake_failed", "TLS handshake failed"};
    case error::certificate_invalid:
        return {"certificate_invalid", "server certificate did not verify"};
    case error::forbidden_address:
        return {"forbidden_address", "host resolves to a refused address"};
    case error::proxy_failed:
        return {"proxy_failed", "the proxy did not open a tunnel"};
    case error::robots_denied:
        return {"robots_denied", "disallowed by robots.txt"};
    case error::robots_unavailable:
        return {"robots_unavailable", "robots.txt could not be read: the origin is off limits for now"};
    case error::internal_error:
        return {"internal_error", "internal error"};
    case error::type_rejected:
        return {"type_rejected", "media type not accepted (accept_types): body not read"};
    case error::invalid_config:
        return {"invalid_config", "invalid configuration"};
    case error::state_mismatch:
        return {"state_mismatch", "the crawl state belongs to another crawl"};
    case error::state_locked:
        return {"state_locked", "the state directory is in use by another crawl"};
    case error::state_unusable:
        return {"state_unusable", "the state directory cannot be used"};
    case error::store_damaged:
        return {"store_damaged", "the crawl state is damaged"};
    case error::redis_refused:
        return {"redis_refused", "Redis refuses the crawl"};
    case error::output_exists:
        return {"output_exists", "an output exists already"};
    case error::output_unavailable:
        return {"output_unavailable", "an output cannot be opened"};
    case error::store_write_failed:
        return {"store_write_failed", "the crawl state cannot be written"};
    case error::redis_unreachable:
        return {"redis_unreachable", "Redis unreachable"};
    case error::redis_lost:
        return {"redis_lost", "the connection to Redis was lost"};
    case error::output_failed:
        return {"output_failed", "an output could not be written"};
    }
    return {"other", "unknown asiocrawl error"};
}

class asiocrawl_category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "asiocrawl"; }

    std::string message(int value) const override { return describe(static_cast<error>(value)).message; }

    // Lets callers test `ec == boost::system::errc::timed_out` without knowing which layer timed out.
    boost::system::error_condition default_error_condition(int value) const noexcept override {
        switch (static_cast<error>(value)) {
        case error::connect_timeout:
        case error::request_timeout:
            return boost::system::errc::make_error_code(boost::system::errc::timed_out)
                .default_error_condition();
        default:
            return {value, *this};
        }
    }
};

struct network_kind {
    boost::system::error_code code;
    std::string_view kind;
};

// Compared with == (category and value), which is how Asio's own error enums are meant to be matched.
std::span<const network_kind> network_kinds() noexcept {
    namespace asio_error = boost::asio::error;
    static const network_kind table[] = {
        {asio_error::connection_refused, "connection_refused"},
        {asio_error::connection_reset, "connection_reset"},
        {asio_error::connection_aborted, "connection_aborted"},
        {asio_error::timed_out, "timeout"},
        {asio_error::host_not_found, "host_not_found"},
        {asio_error::host_not_found_try_again, "dns_temporary"},
        // "No address of the requested type": the name exists but cannot be reached, which to a crawler is
        // the same as not existing.
        {asio_error::no_data, "host_not_found"},
        {asio_error::network_unreachable, "network_unreachable"},
        {asio_error::host_unreachable, "host_unreachable"},
        {asio_error::eof, "eof"},
        {asio_error::operation_aborted, "cancelled"},
        {asio_error::broken_pipe, "broken_pipe"},
        // The process ran out of descriptors (EMFILE; ENFILE for the whole system): local, and passes.
        {asio_error::no_descriptors, "no_descriptors"},
        {boost::system::error_code(ENFILE, boost::system::system_category()), "no_descriptors"},
        {boost::beast::error::timeout, "timeout"},
        {boost::beast::http::error::end_of_stream, "eof"},
        {boost::beast::http::error::body_limit, "body_too_large"},
        {boost::beast::http::error::header_limit, "header_too_large"},
        {boost::beast::http::error::partial_message, "partial_response"},
    };
    return table;
}

} // namespace

crawl_error::crawl_error(error code, std::string detail)
    : boost::system::system_error(make_error_code(code), detail)
    , detail_(std::move(detail)) {}

const boost::system::error_category& error_category() noexcept {
    static const asiocrawl_category category;
    return category;
}

std::string_view error_kind(const boost::system::error_code& ec) noexcept {
    if (!ec) {
        return {};
    }
    if (ec.category() == error_category()) {
        return describe(static_cast<error>(ec.value())).kind;
    }

    // Asio reports socket errors in the system category; errno values arriving through the generic category
    // (std::errc, some Boost.System paths) are the same errors on POSIX, so look them up as system errors.
    boost::system::error_code lookup = ec;
    if (ec.category() == boost::system::generic_category()) {
        lookup.assign(ec.value(), boost::system::system_category());
    }

    for (const network_kind& known : network_kinds()) {
        if (lookup == known.code) {
            return known.kind;
        }
    }

    // Whatever else the HTTP parser rejects (bad status line, bad chunk, bad field...) is the peer's fault.
    if (ec.category() ==
        boost::beast::http::make_error_code(boost::beast::http::error::bad_version).category()) {
        return "bad_response";
    }
    return "other";
}

} // namespace asiocrawl
