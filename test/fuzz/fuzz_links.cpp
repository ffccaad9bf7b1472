// Link extraction on arbitrary bytes: gumbo plus our walk never crash, and each reference is resolved the
// way the crawler does it.
#include <asiocrawl/links.hpp>
#include <asiocrawl/url.hpp>

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const auto page_url = *asiocrawl::parse_root("http://example.com/dir/page.html");
    const std::string_view html(reinterpret_cast<const char*>(data), size);
    const auto links = asiocrawl::extract_links(html);
    boost::urls::url base = page_url;
    if (links.base_href)
        if (auto resolved = asiocrawl::normalize_reference(page_url, *links.base_href))
            base = *resolved;
    for (const auto& reference : links.references)
        (void)asiocrawl::normalize_reference(base, reference);
    (void)asiocrawl::parse_meta_refresh(html);
    return 0;
}
