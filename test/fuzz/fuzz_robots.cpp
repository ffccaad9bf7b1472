// robots.txt parsing and matching on arbitrary bytes: never crashes, never hangs on wildcard patterns.
#include "policy/robots.hpp"

#include <cstdint>
#include <string_view>

// Input: "<path and query>\n<robots.txt body>".
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto newline = input.find('\n');
    const std::string_view path = input.substr(0, newline);
    const std::string_view body = newline == std::string_view::npos ? input : input.substr(newline + 1);
    for (const std::string_view token : {"asiocrawl", "*"}) {
        const auto rules = asiocrawl::robots_rules::parse(body, token);
        (void)rules.allowed(path);
        (void)rules.allowed("/");
        (void)rules.crawl_delay();
        (void)rules.sitemaps();
    }
    return 0;
}
