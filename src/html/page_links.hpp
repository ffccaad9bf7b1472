// From a fetched HTML page to the absolute, normalized URLs it links to (and, when asked, the requisites it
// needs). Sans-io: pure work that may run on the parse pool; the crawler decides what to do with the URLs.
//
// For the crawl state (issue 12): resolve_links() gives the page's links in `urls` and, with
// link_options::requisites, its page requisites in `requisites`, each with its requisite_kind; a stylesheet
// fetched as a requisite gives its own with resolve_css_references(). Admission and scope of requisites are
// the caller's: nothing here fetches or filters them.
#pragma once

#include "html/links.hpp"
#include <asiocrawl/config.hpp>

#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

struct link_options {
    /// Links taken from the page, in document order; 0: no cap (traps.max_links_per_page).
    std::size_t max_links = 0;
    /// Which HTML parser reads the page (html.parser).
    html_parser parser = html_parser::fast;
    /// The page's character encoding, a WHATWG name (record::charset); empty when undeclared (read as UTF-8).
    /// The page is decoded from it, and its links' queries are encoded in it, as browsers do.
    std::string charset;
    /// Also resolve the page requisites (images, scripts, stylesheets, ...).
    bool requisites = false;
    /// Leave out <a>/<area> links with rel=nofollow (robots.obey_rel_nofollow).
    bool skip_rel_nofollow = false;
};

/// The options a crawl with `config` uses for a page whose record says `charset`.
link_options link_options_for(const crawler_config& config, std::string charset);

struct resolved_requisite {
    boost::urls::url url;
    requisite_kind kind;
};

/// Links of one page, resolved against its base and normalized.
struct resolved_links {
    /// Normalized URLs as text (the crawl's keys; Boost.URL's parse of each would cost more than the rest of
    /// the pipeline), in document order, duplicates kept.
    std::vector<std::string> urls;
    std::vector<resolved_requisite> requisites; // with link_options::requisites; http(s) ones only
    std::size_t invalid = 0;
    std::size_t not_http = 0;
    std::size_t over_page_cap = 0;             // links past link_options::max_links, never resolved
    bool parser_gave_up = false;               // page_links::parser_gave_up
    robots_directives meta_robots;             // page_links::meta_robots
    std::size_t rel_nofollow = 0;              // page_links::rel_nofollow
    std::optional<boost::urls::url> canonical; // <link rel=canonical>, resolved like the links
    std::string body;                          // handed back: the caller still owns the page
};

/// Extracts the links of `body` and resolves them against `page` or the page's <base href>. The body is moved
/// in and handed back in the result, so it can cross threads.
resolved_links resolve_links(boost::urls::url_view page, std::string body, const link_options& options);

/// The second half of resolve_links(): the links extracted from the page at `page` resolved against it or
/// its <base href> and normalized into `out` (urls, requisites, invalid, not_http, over_page_cap).
void resolve_page_links(boost::urls::url_view page, page_links& links, const link_options& options,
                        resolved_links& out);

/// The url() and @import references of a fetched stylesheet, resolved against its URL: requisites of kind
/// stylesheet (@import) and style (url()). The bytes are decoded from `charset` first; CSS URLs are UTF-8.
std::vector<resolved_requisite> resolve_css_references(boost::urls::url_view stylesheet, std::string_view css,
                                                       std::string_view charset);

} // namespace asiocrawl::detail
