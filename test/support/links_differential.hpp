// The differential of the two link extractors: the fast streaming extractor against gumbo, its oracle. Used
// by test/gumbo/links_differential_test.cpp, the fuzz_links_differential target and bench/links_diff.cpp
// (real documents). A difference is either one of the deliberate deviations of docs/LINKS.md, named, or a
// bug.
#pragma once

#include "html/links.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// The deliberate deviations from gumbo (docs/LINKS.md, "Deviations"); `none` when the two agree.
enum class link_deviation {
    none,
    /// gumbo failed one of its assertions and gave up on the page (no links); the fast extractor has none.
    gumbo_gave_up,
    /// The markup guard rewrote the page for gumbo (nesting, attributes, formatting elements or CDATA past
    /// its limits): the extractors were compared on the rewritten copy, which both read.
    guard_rewrote,
};

std::string_view link_deviation_name(link_deviation d) noexcept;

struct differential_result {
    page_links fast;
    page_links gumbo;
    link_deviation deviation = link_deviation::none;
    /// The two lists of references, the base, the canonical link or the robots meta directives differ,
    /// outside a deviation that excuses it.
    bool undocumented = false;

    bool differs() const noexcept { return undocumented; }
    /// The two outcomes side by side, for a report.
    std::string describe() const;
};

/// Runs both extractors on `html` (no link cap) and compares their references and base, in order, and what
/// the page says to crawlers (<meta name=robots>, <link rel=canonical>).
differential_result compare_extractors(std::string_view html);

struct differential_totals {
    std::size_t pages = 0;
    std::size_t identical = 0;
    std::size_t undocumented = 0;
    std::size_t gave_up = 0;       ///< gumbo gave up: not compared
    std::size_t guard_rewrote = 0; ///< compared on the guard's copy
    std::size_t links = 0;         ///< references found by gumbo on the pages compared
    std::size_t canonical = 0;     ///< pages compared where gumbo found a canonical link
    std::size_t meta_robots = 0;   ///< pages compared where gumbo found noindex or nofollow

    void add(const differential_result& r) noexcept;
    std::string summary() const;
};

} // namespace asiocrawl::detail
