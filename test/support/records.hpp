// Looking up a crawl's records in its report.
#pragma once

#include <asiocrawl/report.hpp>

#include <string_view>

namespace asiocrawl::test {

/// The record of `url` in a report that kept its records; null when there is none.
inline const record* find(const report& r, std::string_view url) {
    for (const auto& rec : r.records)
        if (rec.url == url)
            return &rec;
    return nullptr;
}

} // namespace asiocrawl::test
