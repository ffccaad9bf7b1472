#include "page_links.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl/links.hpp>
#include <asiocrawl/url.hpp>

namespace asiocrawl::detail {

resolved_links resolve_links(boost::urls::url_view page, std::string body, std::size_t max_links) {
    resolved_links out;
    // With the cap, the parse stops at the first max_links link-bearing tags and counts the others.
    page_links links = extract_links(body, max_links);
    out.parser_gave_up = links.parser_gave_up;
    out.over_page_cap = links.dropped_references;
    if (max_links != 0 && links.references.size() > max_links) {
        out.over_page_cap += links.references.size() - max_links;
        links.references.resize(max_links);
    }
    boost::urls::url base{page};
    if (links.base_href) {
        if (auto resolved = normalize_reference(page, *links.base_href))
            base = std::move(*resolved);
    }
    out.urls.reserve(links.references.size());
    for (const auto& reference : links.references) {
        auto link = normalize_reference(base, reference);
        if (link)
            out.urls.push_back(std::move(*link));
        else if (link.error() == error::unsupported_scheme)
            ++out.not_http;
        else
            ++out.invalid;
    }
    out.body = std::move(body);
    return out;
}

} // namespace asiocrawl::detail
