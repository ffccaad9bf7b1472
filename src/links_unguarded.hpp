// Internal to asiocrawl: link extraction without the markup guard, for the tests of what the guard prevents.
#pragma once

#include <asiocrawl/links.hpp>

#include <string_view>

namespace asiocrawl::detail {

/// extract_links without the markup guard (src/markup_guard.hpp): gumbo parses `html` as it is, quadratic and
/// assertion-failing markup included. Everything but tests calls extract_links.
page_links extract_links_unguarded(std::string_view html);

} // namespace asiocrawl::detail
