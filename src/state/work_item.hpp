// One unit of a crawl's work, and its byte form in a durable state.
#pragma once

#include "html/links.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// A requisite is fetched for a page that needs it (config requisites): it is not read for links, except
/// a stylesheet for its url() and @import references.
enum class item_kind : std::uint8_t { page = 0, robots = 1, sitemap = 2, requisite = 3 };

/// The work queue's (url, max_redirect) pair, plus what the crawl carries along with it.
struct work_item {
    std::string url;      // normalized: the dedup key
    std::string referrer; // the page that linked here, the URL that redirected here, or the sitemap
    int redirects_left = 0;
    int depth = 0;
    item_kind kind = item_kind::page;
    bool from_sitemap = false;
    bool guessed = false; // kind sitemap: /sitemap.xml tried by convention, named by no robots.txt (or its
                          // redirect target): its absence (404, 410) is no broken link
    requisite_kind requisite = requisite_kind::image; // kind requisite: what the page needs it as
    int tries = 0;                                    // attempts made so far
    std::int64_t first_started_us = -1; // when the first attempt started, from the crawl's start; -1: not yet
    std::uint64_t seq = 0;              // its place in its host's line, the key of its durable copy; 0: none
    std::uint32_t robots_for = 0;       // kind robots: the origin (an index in the state) it is fetched for
};

/// The record's `requisite` of an item: its requisite kind's name, or "" when it is not a requisite.
std::string_view requisite_name(const work_item& item) noexcept;

/// The durable form of an item (everything but seq and robots_for, which are the key and transient):
/// varints, then the two strings with their lengths. Stable across versions of the same state format.
std::string encode(const work_item& item);
/// nullopt when `bytes` is not what encode() writes (a corrupt state).
std::optional<work_item> decode_work_item(std::string_view bytes);

} // namespace asiocrawl::detail
