// What a response's headers ask of a crawler beyond robots.txt: X-Robots-Tag (Google's robots meta tag
// specification, which has no RFC) and a canonical URL named in a Link header (RFC 8288, RFC 6596). Sans-io:
// header values in, directives out. The page's own <meta name=robots> and <link rel=canonical> are read by
// the HTML extractor (html/links.hpp).
#pragma once

#include "html/links.hpp"

#include <optional>
#include <string_view>

namespace asiocrawl {

/// The directives of X-Robots-Tag header values (one a line, '\n'-separated) that apply to a crawler whose
/// User-Agent product token is `product_token`. Each value is a comma-separated list; an item "NAME: rule"
/// whose NAME is not a directive that takes a value (unavailable_after, max-snippet, max-image-preview,
/// max-video-preview) names the user agent that it and the rest of that value are for: those apply only when
/// NAME is our product token (ASCII case-insensitively). Rules other than noindex, nofollow and none are
/// ignored.
robots_directives parse_x_robots_tag(std::string_view values, std::string_view product_token) noexcept;

/// The target of the first link whose rel holds "canonical" in a Link header value (several fields joined
/// by commas), as written between its angle brackets; nullopt when there is none. Malformed link-values end
/// the search.
std::optional<std::string_view> canonical_link_target(std::string_view value);

} // namespace asiocrawl
