// Redirect policy: what a response means for its redirect chain. Sans-io.
#pragma once

#include <boost/system/error_code.hpp>
#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>

#include <optional>
#include <string_view>

namespace asiocrawl {

/// True for the statuses the crawler follows: 301, 302, 303, 307, 308.
bool is_redirect_status(int status) noexcept;

struct redirect_decision {
    /// The normalized target; set when the chain may go on.
    std::optional<boost::urls::url> target;
    /// Why the chain ends here: error::missing_location, error::invalid_location (also for non-http targets),
    /// or error::redirect_limit (the target is still reported in `target` when it could be resolved).
    boost::system::error_code error;
    /// The request was https:// and `target` is http://: following it leaves TLS for cleartext (anyone on
    /// the way can read and change the next request and its answer). Set whenever `target` is; the crawl
    /// follows such a redirect when scope allows it, and warns once per pair of origins.
    bool downgrade = false;
};

/// Decides the next hop of a redirect response to `request_url`. `location` is the Location header value
/// (nullopt when absent); `redirects_left` is the chain's remaining budget (the item's max_redirect).
/// Scope, exclude and seen-set checks are the crawler's, applied to `target` like any link.
redirect_decision decide_redirect(boost::urls::url_view request_url, std::optional<std::string_view> location,
                                  int redirects_left);

} // namespace asiocrawl
