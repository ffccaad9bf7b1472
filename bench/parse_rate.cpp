// asiocrawl-bench-parse-rate: how fast one core extracts links from a site's pages with the crawler's own
// extract_links (gumbo), no network. cores x this rate is the ceiling of a crawl on a fast network, the
// figure the throughput table is compared with. Usage: asiocrawl-bench-parse-rate DIR [ROUNDS]     (every
// *.html file under DIR; best of ROUNDS, default 3)

#include <asiocrawl/links.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DIR [ROUNDS]\n", argv[0]);
        return 2;
    }
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;

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

    double best = 0;
    std::size_t references = 0;
    for (int round = 0; round < rounds; ++round) {
        references = 0;
        const auto start = std::chrono::steady_clock::now();
        for (const auto& page : pages)
            references += asiocrawl::extract_links(page).references.size();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = round == 0 ? seconds : std::min(best, seconds);
    }
    std::printf("pages %zu, %.1f MB, %zu links; best of %d: %.3f s = %.1f MB/s = %.0f pages/s per core\n",
                pages.size(), static_cast<double>(bytes) / 1e6, references, rounds, best,
                static_cast<double>(bytes) / 1e6 / best, static_cast<double>(pages.size()) / best);
}
