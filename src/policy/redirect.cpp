// Redirect policy: which statuses are followed and where a Location leads.
#include "policy/redirect.hpp"

#include "url/url.hpp"
#include <asiocrawl/error.hpp>

namespace asiocrawl {
namespace {

// The same bytes clean_reference() trims: a Location made only of them names nothing.
bool names_nothing(std::string_view value) noexcept {
    for (char c : value) {
        if (static_cast<unsigned char>(c) > 0x20) {
            return false;
        }
    }
    return true;
}

} // namespace

bool is_redirect_status(int status) noexcept {
    switch (status) {
    case 301:
    case 302:
    case 303:
    case 307:
    case 308:
        return true;
    default:
        return false;
    }
}

redirect_decision decide_redirect(boost::urls::url_view request_url, std::optional<std::string_view> location,
                                  int redirects_left) {
    redirect_decision decision;
    if (!location || names_nothing(*location)) {
        decision.error = make_error_code(error::missing_location);
        return decision;
    }
    auto target = normalize_reference(request_url, *location);
    if (!target) {
        decision.error = make_error_code(error::invalid_location);
        return decision;
    }
    decision.downgrade = request_url.scheme_id() == boost::urls::scheme::https &&
                         target->scheme_id() == boost::urls::scheme::http;
    decision.target = std::move(*target);
    if (redirects_left <= 0) {
        decision.error = make_error_code(error::redirect_limit);
    }
    return decision;
}

} // namespace asiocrawl
