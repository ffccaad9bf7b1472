// asiocrawl-bench-seen-set: bytes per URL of the crawler's seen set (src/state/fingerprint_set.hpp: seeded
// 64-bit fingerprints) after inserting N synthetic normalized URLs, measured two ways: the set's own
// memory_bytes() and the growth of the process's resident set. URLs are made on the fly, so the RSS growth is
// the set's alone (plus allocator overhead); the hashing rate is printed too.

#include "state/fingerprint_set.hpp"

#include <chrono>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace {

/// Resident bytes now, from /proc/self/statm.
std::uint64_t resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

/// A plausible crawled URL: a few hosts, directories, pages and queries; about 60-90 characters.
std::string synthetic_url(std::uint64_t i) {
    std::string url = "http://www.site-" + std::to_string(i % 37) + ".example.com/";
    url += i % 3 == 0 ? "articles/" : i % 3 == 1 ? "docs/guide/" : "p/";
    url += std::to_string(2000 + i % 25) + "/" + std::to_string(i * 2654435761u % 1'000'003);
    url += "-page-" + std::to_string(i) + ".html";
    if (i % 4 == 0)
        url += "?ref=" + std::to_string(i % 101);
    return url;
}

} // namespace

int main(int argc, char** argv) {
    const std::uint64_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
    if (count == 0) {
        std::cerr << "Usage: asiocrawl-bench-seen-set [URL_COUNT]   (default 1000000)\n";
        return 2;
    }
    using asiocrawl::detail::url_fingerprint;
    constexpr std::uint64_t seed = 0x5eed;
    const std::uint64_t before = resident_bytes();
    asiocrawl::detail::fingerprint_set seen;
    std::uint64_t url_bytes = 0;
    const auto started = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::string url = synthetic_url(i);
        url_bytes += url.size();
        seen.insert(url_fingerprint(url, seed));
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    const std::uint64_t after = resident_bytes();
    // Every URL is distinct: at these counts a fingerprint collision (probability ~n^2/2^65) would be news.
    if (seen.size() != count || !seen.contains(url_fingerprint(synthetic_url(count / 2), seed)) ||
        seen.insert(url_fingerprint(synthetic_url(0), seed))) {
        std::cerr << "asiocrawl-bench-seen-set: the set lost or duplicated URLs\n";
        return 1;
    }
    const double n = static_cast<double>(seen.size());
    std::printf("urls=%llu mean_url_bytes=%.1f memory_bytes_per_url=%.1f rss_delta_per_url=%.1f "
                "inserts_per_s=%.0f\n",
                static_cast<unsigned long long>(seen.size()), static_cast<double>(url_bytes) / n,
                static_cast<double>(seen.memory_bytes()) / n, static_cast<double>(after - before) / n,
                n / took.count());
    return 0;
}
