// Page requisites in the crawl (config requisites, wget -p): what an in-scope page needs to display is
// admitted under its own scope rule, fetched once, and never read for links, except a stylesheet, whose
// url() and @import references are requisites too. docs/LINKS.md states the rule and why.
#include "state/crawl_state.hpp"

#include <boost/url/parse.hpp>

#include <unordered_set>

namespace asiocrawl::detail {

bool crawl_state::requisite_in_scope(const boost::urls::url& url, boost::urls::url_view page) {
    const auto verdict = scope_.check_requisite(url, page, config_.requisites.span_hosts);
    if (verdict == scope_verdict::in_scope)
        return true;
    // Counted apart from links: a page's images off its host say nothing about the crawl's link scope.
    skip("requisite_" + std::string(to_string(verdict)));
    say(log_level::debug, "skip requisite ", url.buffer(), ": ", to_string(verdict));
    return false;
}

std::pair<std::size_t, std::size_t>
crawl_state::admit_requisites(const std::vector<resolved_requisite>& found, const work_item& from) {
    if (found.empty())
        return {0, 0};
    const auto page = boost::urls::parse_uri(from.url);
    if (!page)
        return {0, 0};
    std::unordered_set<std::string_view> on_page;
    std::size_t in_scope = 0, admitted = 0;
    for (const auto& requisite : found) {
        if (!on_page.emplace(requisite.url.buffer()).second)
            continue;
        if (!requisite_in_scope(requisite.url, *page))
            continue;
        ++in_scope;
        // No max_depth: a page at the last level still gets what it needs to display (wget -p -l).
        if (admit(requisite.url, from.url, config_.max_redirect, from.depth + 1, item_kind::requisite, false,
                  requisite.kind))
            ++admitted;
    }
    if (admitted != 0) {
        result_.stats["requisites_queued"] += admitted;
        counters_changed_ = true;
    }
    return {in_scope, admitted};
}

void crawl_state::read_stylesheet(ticket& t, const fetch_outcome& response, record& r) {
    const collect_outlinks collect(*this, t);
    if (r.content_type != "text/css")
        return;
    const auto stylesheet = boost::urls::parse_uri(t.item.url);
    if (!stylesheet)
        return;
    auto found = resolve_css_references(*stylesheet, response.body, r.charset);
    // A hostile stylesheet is held to a page's link budget: its references are what it can make us fetch.
    const std::size_t cap = config_.traps.max_links_per_page;
    if (cap != 0 && found.size() > cap) {
        r.links_dropped = found.size() - cap;
        result_.stats["skipped_links_over_page_cap"] += r.links_dropped;
        counters_changed_ = true;
        say(log_level::warning, t.item.url, ": ", r.links_dropped, " references past the first ", cap,
            " ignored (traps.max_links_per_page)");
        found.resize(cap);
    }
    const auto [in_scope, admitted] = admit_requisites(found, t.item);
    r.num_urls = in_scope;
    r.num_new_urls = admitted;
}

} // namespace asiocrawl::detail
