// What makes a crawl the same crawl: a resumed state must have been made with the same definition.
#pragma once

#include <asiocrawl/config.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// The settings that decide which URLs belong to the crawl (roots, scope, include/exclude, depth, robots,
/// sitemaps, trap limits, page requisites) as one JSON document. Budgets and manners (max_pages, max_tasks,
/// delays, timeouts, outputs) are not part of it: a resumed crawl may change those.
std::string crawl_definition_json(const crawler_config& config);

/// nullopt when both definitions are the same; otherwise one line naming each setting that changed, with
/// its value then and now ("roots changed: was [\"http://a/\"], now [\"http://b/\"]").
std::optional<std::string> describe_definition_change(std::string_view before, std::string_view now);

} // namespace asiocrawl::detail
