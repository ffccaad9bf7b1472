#include "support/links_differential.hpp"

#include "gumbo/links_gumbo.hpp"
#include "gumbo/markup_guard.hpp"

#include <sstream>

namespace asiocrawl::detail {

std::string_view link_deviation_name(link_deviation d) noexcept {
    switch (d) {
    case link_deviation::none:
        return "none";
    case link_deviation::gumbo_gave_up:
        return "gumbo_gave_up";
    case link_deviation::guard_rewrote:
        return "guard_rewrote";
    }
    return "unknown";
}

differential_result compare_extractors(std::string_view html) {
    differential_result r;
    const markup_guard_result guarded = guard_markup(html);
    std::string_view document = html;
    if (guarded.rewritten) {
        r.deviation = link_deviation::guard_rewrote;
        document = *guarded.rewritten;
    }
    r.gumbo = extract_links_unguarded(document);
    extract_options fast;
    r.fast = extract_links(document, fast);
    if (r.gumbo.parser_gave_up) {
        r.deviation = link_deviation::gumbo_gave_up;
        return r;
    }
    r.undocumented = r.fast.references != r.gumbo.references || r.fast.base_href != r.gumbo.base_href ||
                     r.fast.meta_robots != r.gumbo.meta_robots || r.fast.canonical != r.gumbo.canonical;
    return r;
}

std::string differential_result::describe() const {
    std::ostringstream out;
    const auto list = [&](const char* name, const page_links& links) {
        out << "  " << name
            << " base=" << (links.base_href ? "[" + *links.base_href + "]" : std::string("none"))
            << " canonical=" << (links.canonical ? "[" + *links.canonical + "]" : std::string("none"))
            << " robots=" << (links.meta_robots.noindex ? "noindex," : "")
            << (links.meta_robots.nofollow ? "nofollow" : "") << " links=" << links.references.size() << ":";
        for (const auto& r : links.references)
            out << " [" << r << "]";
        out << '\n';
    };
    list("fast ", fast);
    list("gumbo", gumbo);
    return out.str();
}

void differential_totals::add(const differential_result& r) noexcept {
    ++pages;
    if (r.deviation == link_deviation::gumbo_gave_up) {
        ++gave_up;
        return;
    }
    if (r.deviation == link_deviation::guard_rewrote)
        ++guard_rewrote;
    links += r.gumbo.references.size();
    canonical += r.gumbo.canonical ? 1 : 0;
    meta_robots += r.gumbo.meta_robots.noindex || r.gumbo.meta_robots.nofollow ? 1 : 0;
    if (r.undocumented)
        ++undocumented;
    else
        ++identical;
}

std::string differential_totals::summary() const {
    std::ostringstream out;
    out << "pages " << pages << ", identical " << identical << ", undocumented differences " << undocumented
        << ", gumbo gave up " << gave_up << ", compared on the guard's copy " << guard_rewrote
        << ", links (gumbo) " << links;
    return out.str();
}

} // namespace asiocrawl::detail
