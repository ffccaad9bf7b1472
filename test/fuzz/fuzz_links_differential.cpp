// The fast link extractor against gumbo, its oracle: on any bytes, both must find the same references and
// base, in the same order, unless a deviation documented in docs/LINKS.md explains it. Also runs the fast
// extractor with a small link cap and with page requisites, which must not crash and must keep what the cap
// promises (docs/LINKS.md): every link when there are no more than the cap, else the first occurrence of each
// of the first `cap` distinct documents (links equal up to the fragment), the others counted as dropped.
#include "html/links.hpp"

#include "support/links_differential.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

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
    if (links.references.size() > 2 || links.requisites.size() > 2)
        std::abort();
    std::vector<std::string> expected;
    std::size_t dropped = 0;
    if (all.size() <= 2) {
        expected.assign(all.begin(), all.end());
    } else {
        std::set<std::string_view> kept;
        for (const auto& link : all) {
            const std::string_view text = link;
            const std::string_view document = text.substr(0, text.find('#'));
            if (kept.contains(document))
                continue;
            if (kept.size() < 2) {
                kept.insert(document);
                expected.emplace_back(link);
            } else {
                ++dropped;
            }
        }
    }
    bool same = links.references.size() == expected.size() && links.dropped_references == dropped;
    for (std::size_t i = 0; same && i < expected.size(); ++i)
        same = links.references[i] == expected[i];
    if (!same) {
        std::fprintf(stderr, "the cap kept %zu links and dropped %zu of %zu; expected %zu and %zu:\n",
                     links.references.size(), links.dropped_references, all.size(), expected.size(), dropped);
        for (const auto& link : links.references)
            std::fprintf(stderr, "  kept \"%s\"\n", link.c_str());
        for (const auto& link : all)
            std::fprintf(stderr, "  all  \"%s\"\n", link.c_str());
        std::abort();
    }
    (void)asiocrawl::extract_css_references(html);
    return 0;
}
