#include "entities.hpp"

#include "util/ascii.hpp"

#include <algorithm>
#include <array>

namespace asiocrawl::detail::html {

namespace {

struct table_row {
    std::string_view name;
    char32_t first;
    char32_t second;
};

constexpr table_row entity_table[] = {
#include "entities.inc"
};

constexpr std::size_t longest_name =
    std::max_element(std::begin(entity_table), std::end(entity_table),
                     [](const table_row& a, const table_row& b) { return a.name.size() < b.name.size(); })
        ->name.size();

constexpr bool is_sorted_by_bytes() {
    for (std::size_t i = 1; i < std::size(entity_table); ++i)
        if (!(entity_table[i - 1].name < entity_table[i].name))
            return false;
    return true;
}
static_assert(is_sorted_by_bytes(),
              "entities.inc must be sorted: regenerate it with scripts/gen_html_entities.py");

} // namespace

named_reference match_named_reference(std::string_view text) noexcept {
    // Every name is ASCII letters and digits, with an optional final ';': only that prefix of the text can
    // match.
    std::size_t candidate = 0;
    while (candidate < text.size() && candidate < longest_name && ascii::is_alnum(text[candidate]))
        ++candidate;
    if (candidate < text.size() && candidate < longest_name && text[candidate] == ';')
        ++candidate;
    for (std::size_t length = candidate; length > 0; --length) {
        const std::string_view name = text.substr(0, length);
        const auto* row = std::lower_bound(std::begin(entity_table), std::end(entity_table), name,
                                           [](const table_row& r, std::string_view n) { return r.name < n; });
        if (row != std::end(entity_table) && row->name == name)
            return {length, row->first, row->second};
    }
    return {};
}

} // namespace asiocrawl::detail::html
