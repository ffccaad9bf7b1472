#include "html/page_links.hpp"

#include "html/charset.hpp"
#include "url/url.hpp"
#include <asiocrawl/error.hpp>

#include <optional>
#include <string_view>
#include <unordered_set>

namespace asiocrawl::detail {

link_options link_options_for(const crawler_config& config, std::string charset) {
    link_options options;
    options.max_links = config.traps.max_links_per_page;
    options.parser = config.html.parser;
    options.charset = std::move(charset);
    options.requisites = config.requisites.enabled;
    options.skip_rel_nofollow = config.robots.obey_rel_nofollow;
    return options;
}

void resolve_page_links(boost::urls::url_view page, page_links& links, const link_options& options,
                        resolved_links& out) {
    out.over_page_cap = links.dropped_references;
    const std::string_view encoding = options.charset;
    boost::urls::url base{page};
    if (links.base_href) {
        if (auto resolved = normalize_reference(page, *links.base_href, encoding))
            base = std::move(*resolved);
    }
    if (links.canonical)
        if (auto canonical = normalize_reference(base, *links.canonical, encoding))
            out.canonical = std::move(*canonical);
    const reference_resolver resolver(base, encoding);
    out.urls.reserve(links.references.size());
    for (const auto& reference : links.references) {
        auto link = resolver.resolve_text(reference);
        if (link)
            out.urls.push_back(std::move(*link));
        else if (link.error() == error::unsupported_scheme)
            ++out.not_http;
        else
            ++out.invalid;
    }
    if (options.max_links != 0 && out.urls.size() > options.max_links) {
        // The cap counts distinct URLs (the extractor's repeats of a kept link make it this far): the first
        // max_links of them stay, with their repeats; the links to the others are counted.
        std::unordered_set<std::string_view> kept;
        std::vector<bool> keep(out.urls.size());
        for (std::size_t i = 0; i < out.urls.size(); ++i) {
            keep[i] = kept.contains(out.urls[i]) ||
                      (kept.size() < options.max_links && kept.insert(out.urls[i]).second);
            out.over_page_cap += !keep[i];
        }
        std::size_t n = 0;
        for (std::size_t i = 0; i < out.urls.size(); ++i)
            if (keep[i] && n++ != i)
                out.urls[n - 1] = std::move(out.urls[i]);
        out.urls.resize(n);
    }
    out.requisites.reserve(links.requisites.size());
    for (const auto& requisite : links.requisites)
        if (auto url = resolver.resolve(requisite.url))
            out.requisites.push_back({std::move(*url), requisite.kind});
}

resolved_links resolve_links(boost::urls::url_view page, std::string body, const link_options& options) {
    resolved_links out;
    // The parser reads UTF-8: a page in another encoding is decoded first, as a browser decodes it before
    // tokenizing (a UTF-8 byte order mark is dropped the same way).
    const std::optional<std::string> decoded = decode_to_utf8(body, options.charset);
    std::string_view html = decoded ? std::string_view(*decoded) : std::string_view(body);
    if (html.starts_with("\xEF\xBB\xBF"))
        html.remove_prefix(3);
    extract_options extract;
    extract.parser = options.parser;
    extract.max_links = options.max_links;
    extract.requisites = options.requisites;
    extract.skip_rel_nofollow = options.skip_rel_nofollow;
    page_links links = extract_links(html, extract);
    if (options.requisites && options.parser == html_parser::gumbo) {
        // gumbo's tree walk collects links only. The streaming extractor, which finds the links gumbo finds
        // (the differential's promise), reads the same page for its requisites.
        extract.parser = html_parser::fast;
        links.requisites = extract_links(html, extract).requisites;
    }
    out.parser_gave_up = links.parser_gave_up;
    out.meta_robots = links.meta_robots;
    out.rel_nofollow = links.rel_nofollow;
    resolve_page_links(page, links, options, out);
    out.body = std::move(body);
    return out;
}

std::vector<resolved_requisite> resolve_css_references(boost::urls::url_view stylesheet, std::string_view css,
                                                       std::string_view charset) {
    const std::optional<std::string> decoded = decode_to_utf8(css, charset);
    std::string_view text = decoded ? std::string_view(*decoded) : css;
    if (text.starts_with("\xEF\xBB\xBF"))
        text.remove_prefix(3);
    std::vector<resolved_requisite> out;
    for (const auto& reference : extract_css_references(text))
        if (auto url = normalize_reference(stylesheet, reference.url))
            out.push_back(
                {std::move(*url), reference.import ? requisite_kind::stylesheet : requisite_kind::style});
    return out;
}

} // namespace asiocrawl::detail
