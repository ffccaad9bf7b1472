// Internal to asiocrawl: link extraction with gumbo, the parser of record behind `html.parser: gumbo` and the
// oracle of the fast extractor's differential tests (test/gumbo/links_differential_test.cpp,
// fuzz_links_differential).
#pragma once

#include "html/links.hpp"

#include <cstddef>
#include <string_view>

namespace asiocrawl::detail {

/// gumbo's parse behind the markup guard (src/gumbo/markup_guard.hpp), on a per-thread arena, with its
/// assertions made recoverable: what extract_links does with html_parser::gumbo.
page_links extract_links_gumbo(std::string_view html, std::size_t max_links, bool skip_rel_nofollow = false);

/// The same without the markup guard: gumbo parses `html` as it is, quadratic and assertion-failing markup
/// included. For the tests of what the guard prevents.
page_links extract_links_unguarded(std::string_view html, bool skip_rel_nofollow = false);

} // namespace asiocrawl::detail
