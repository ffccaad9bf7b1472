// Link extraction with gumbo (html.parser: gumbo) on arbitrary bytes: the markup guard, gumbo and our walk
// never crash, and each reference is resolved the way the crawler does it. fuzz_links_differential fuzzes the
// fast extractor against it.
#include "html/links.hpp"
#include "url/url.hpp"

#include "gumbo/markup_guard.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

asiocrawl::page_links gumbo(std::string_view html, std::size_t max_links = 0) {
    asiocrawl::extract_options options;
    options.parser = asiocrawl::html_parser::gumbo;
    options.max_links = max_links;
    return asiocrawl::extract_links(html, options);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const auto page_url = *asiocrawl::parse_root("http://example.com/dir/page.html");
    const std::string_view html(reinterpret_cast<const char*>(data), size);
    const auto links = gumbo(html);
    boost::urls::url base = page_url;
    if (links.base_href)
        if (auto resolved = asiocrawl::normalize_reference(page_url, *links.base_href))
            base = *resolved;
    for (const auto& reference : links.references)
        (void)asiocrawl::normalize_reference(base, reference);
    (void)asiocrawl::parse_meta_refresh(html);

    // The markup guard with limits small enough for fuzzed inputs to cross them: the rewritten document has
    // the same length, differs only by spaces (and "</" made "<!"), and parses.
    static const asiocrawl::detail::markup_guard_limits small{
        .max_depth = 8, .max_attributes = 4, .max_reconstructed = 8};
    const auto guarded = asiocrawl::detail::guard_markup(html, small);
    if (guarded.rewritten) {
        const std::string& out = *guarded.rewritten;
        if (out.size() != html.size())
            std::abort();
        for (std::size_t i = 0; i < out.size(); ++i)
            if (out[i] != html[i] && out[i] != ' ' && !(out[i] == '!' && html[i] == '/'))
                std::abort();
        (void)gumbo(out);
    }

    // The element and link budgets, small enough to be crossed: the copy may then be shorter (tags past the
    // element budget are cut out, the document is cut at the link budget), never longer, and it parses.
    static const asiocrawl::detail::markup_guard_limits budgets{.max_elements = 16, .max_links = 3};
    const auto budgeted = asiocrawl::detail::guard_markup(html, budgets);
    if (budgeted.rewritten) {
        if (budgeted.rewritten->size() > html.size() || budgeted.cut > html.size())
            std::abort();
        (void)gumbo(*budgeted.rewritten);
    }
    (void)gumbo(html, 3);
    return 0;
}
