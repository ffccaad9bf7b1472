// The fast link extractor against gumbo, its oracle: on any bytes, both must find the same references and
// base, in the same order, unless a deviation documented in docs/LINKS.md explains it. Also runs the fast
// extractor with a small link cap and with page requisites, which must not crash and must keep a prefix of
// the links.
#include "html/links.hpp"

#include "support/links_differential.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view html(reinterpret_cast<const char*>(data), size);
    const auto result = asiocrawl::detail::compare_extractors(html);
    if (result.differs()) {
        std::fprintf(stderr, "links differ:\n%s", result.describe().c_str());
        std::abort();
    }

    asiocrawl::extract_options capped;
    capped.max_links = 2;
    capped.requisites = true;
    const auto links = asiocrawl::extract_links(html, capped);
    const auto all =
        asiocrawl::extract_links(html).references; // the differential may have read the guard's copy
    if (links.references.size() > 2 || links.requisites.size() > 2 ||
        links.references.size() + links.dropped_references != all.size())
        std::abort();
    for (std::size_t i = 0; i < links.references.size(); ++i)
        if (links.references[i] != all[i])
            std::abort();
    (void)asiocrawl::extract_css_references(html);
    return 0;
}
