#include "cli/exit_status.hpp"

#include <asiocrawl/error.hpp>

namespace asiocrawl::cli {

exit_rule exit_rule_for(const boost::system::error_code& ec) noexcept {
    constexpr exit_rule refused{refused_status, ""};
    constexpr exit_rule failed_write{failed_status, "error: "};
    constexpr exit_rule failed{failed_status, "error: crawl failed: "};
    if (ec.category() != error_category())
        return failed;
    // No default case: the compiler names a crawl failure added to asiocrawl::error without a rule here.
    switch (static_cast<error>(ec.value())) {
    case error::invalid_config:
    case error::state_mismatch:
    case error::state_locked:
    case error::state_unusable:
    case error::store_damaged:
    case error::redis_refused:
    case error::output_exists:
    case error::output_unavailable:
        return refused;
    case error::store_write_failed:
    case error::redis_unreachable:
    case error::redis_lost:
    case error::output_failed:
        return failed_write;
    // A record's errors, never a crawl's: should one come, the crawl failed unforeseen.
    case error::invalid_url:
    case error::unsupported_scheme:
    case error::redirect_limit:
    case error::missing_location:
    case error::invalid_location:
    case error::connect_timeout:
    case error::request_timeout:
    case error::body_too_large:
    case error::header_too_large:
    case error::bad_response:
    case error::decoding_failed:
    case error::retry_limit:
    case error::tls_handshake_failed:
    case error::certificate_invalid:
    case error::forbidden_address:
    case error::proxy_failed:
    case error::robots_denied:
    case error::robots_unavailable:
    case error::internal_error:
    case error::type_rejected:
        break;
    }
    return failed;
}

} // namespace asiocrawl::cli
