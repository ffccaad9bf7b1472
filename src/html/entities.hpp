// The HTML Standard's named character references ("&amp;", "&eacute", ...): the full table of 2,231 names,
// generated from the standard's entities.json by scripts/gen_html_entities.py (src/html/entities.inc).
#pragma once

#include <cstddef>
#include <string_view>

namespace asiocrawl::detail::html {

struct named_reference {
    /// Bytes of the name matched, its ';' included when it has one; 0 when no name matches.
    std::size_t length = 0;
    char32_t first = 0;
    /// A second code point for the 93 names that stand for two; 0 otherwise.
    char32_t second = 0;
};

/// The longest name of the table that `text` (what follows a '&') starts with, as the tokenizer's "consume
/// the maximum number of characters possible" asks.
named_reference match_named_reference(std::string_view text) noexcept;

} // namespace asiocrawl::detail::html
