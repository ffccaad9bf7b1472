// asiocrawl-bench-parse-rate: how fast one core extracts links from a site's pages, no network, with each
// HTML parser: the fast streaming extractor (the default) and gumbo behind the markup guard. cores x the rate
// is the ceiling of a crawl on a fast network. Usage: asiocrawl-bench-parse-rate DIR [ROUNDS] [fast|gumbo]...
// (every *.html file under DIR; best of ROUNDS, default 3; both parsers unless named)

#include "html/links.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <time.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct rate {
    double seconds = 0;
    std::size_t references = 0;
};

rate measure(const std::vector<std::string>& pages, int rounds, asiocrawl::html_parser parser) {
    rate best;
    asiocrawl::extract_options options;
    options.parser = parser;
    for (int round = 0; round < rounds; ++round) {
        std::size_t references = 0;
        const double start = thread_cpu_seconds();
        for (const auto& page : pages)
            references += asiocrawl::extract_links(page, options).references.size();
        const double seconds = thread_cpu_seconds() - start;
        if (round == 0 || seconds < best.seconds)
            best = {seconds, references};
    }
    return best;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DIR [ROUNDS] [fast|gumbo]...\n", argv[0]);
        return 2;
    }
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    std::vector<asiocrawl::html_parser> parsers;
    for (int i = 3; i < argc; ++i)
        parsers.push_back(std::strcmp(argv[i], "gumbo") == 0 ? asiocrawl::html_parser::gumbo
                                                             : asiocrawl::html_parser::fast);
    if (parsers.empty())
        parsers = {asiocrawl::html_parser::fast, asiocrawl::html_parser::gumbo};

    std::vector<std::string> pages;
    std::size_t bytes = 0;
    for (const auto& entry : fs::recursive_directory_iterator(argv[1])) {
        if (!entry.is_regular_file() || entry.path().extension() != ".html")
            continue;
        std::ifstream in(entry.path(), std::ios::binary);
        pages.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        bytes += pages.back().size();
    }
    if (pages.empty()) {
        std::fprintf(stderr, "no .html files under %s\n", argv[1]);
        return 1;
    }

    // One line per parser, the default first: "<parser>: pages N, X MB, L links; best of R: S CPU s = M MB/s
    // = P pages/s per core", then the ratio when both ran.
    double fast_rate = 0, gumbo_rate = 0;
    for (const auto parser : parsers) {
        const rate r = measure(pages, rounds, parser);
        const double mb_per_s = static_cast<double>(bytes) / 1e6 / r.seconds;
        const bool fast = parser == asiocrawl::html_parser::fast;
        (fast ? fast_rate : gumbo_rate) = mb_per_s;
        std::printf(
            "%s: pages %zu, %.1f MB, %zu links; best of %d: %.3f CPU s = %.1f MB/s = %.0f pages/s per core\n",
            fast ? "fast" : "gumbo", pages.size(), static_cast<double>(bytes) / 1e6, r.references, rounds,
            r.seconds, mb_per_s, static_cast<double>(pages.size()) / r.seconds);
    }
    if (fast_rate > 0 && gumbo_rate > 0)
        std::printf("fast / gumbo: %.1fx\n", fast_rate / gumbo_rate);
}
