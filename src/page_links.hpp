// From a fetched HTML page to the absolute, normalized URLs it links to. Sans-io: pure work that may run on
// the parse pool; the crawler decides what to do with the URLs.
#pragma once

#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace asiocrawl::detail {

/// Links of one page, resolved against its base and normalized.
struct resolved_links {
    std::vector<boost::urls::url> urls; // in document order, duplicates kept
    std::size_t invalid = 0;
    std::size_t not_http = 0;
    std::size_t over_page_cap = 0; // links past trap_config::max_links_per_page, never resolved
    bool parser_gave_up = false;   // page_links::parser_gave_up
    std::string body;              // handed back: the caller still owns the page
};

/// Extracts the links of `body` (at most `max_links`; 0: no cap) and resolves them against `page` or the
/// page's <base href>. The body is moved in and handed back in the result, so it can cross threads.
resolved_links resolve_links(boost::urls::url_view page, std::string body, std::size_t max_links);

} // namespace asiocrawl::detail
