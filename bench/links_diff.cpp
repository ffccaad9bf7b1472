// asiocrawl-links-diff: the differential of the two link extractors on real documents. Runs the fast
// streaming extractor and gumbo (its oracle, behind the markup guard) on every file given or found under the
// directories given, and reports the pages compared and the pages whose links differ, with the first
// differences. Usage: asiocrawl-links-diff [--show N] [--ext .html,.htm] PATH...
//        exit status 1 when a page differs outside the documented deviations (docs/LINKS.md).

#include "support/links_differential.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    std::size_t show = 5;
    std::vector<std::string> extensions{".html", ".htm", ".xhtml"};
    std::vector<fs::path> roots;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--show" && i + 1 < argc) {
            show = static_cast<std::size_t>(std::atoi(argv[++i]));
        } else if (arg == "--ext" && i + 1 < argc) {
            extensions.clear();
            std::string list = argv[++i];
            for (std::size_t start = 0; start <= list.size();) {
                const std::size_t comma = std::min(list.find(',', start), list.size());
                if (comma > start)
                    extensions.push_back(list.substr(start, comma - start));
                start = comma + 1;
            }
        } else {
            roots.emplace_back(arg);
        }
    }
    if (roots.empty()) {
        std::fprintf(stderr, "usage: %s [--show N] [--ext .html,.htm] PATH...\n", argv[0]);
        return 2;
    }
    const auto wanted = [&](const fs::path& p) {
        if (extensions.empty())
            return true;
        for (const auto& e : extensions)
            if (p.extension() == e)
                return true;
        return false;
    };
    std::vector<fs::path> files;
    for (const auto& root : roots) {
        std::error_code ec;
        if (fs::is_regular_file(root, ec)) {
            files.push_back(root);
            continue;
        }
        for (auto it =
                 fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
             it != fs::recursive_directory_iterator(); it.increment(ec))
            if (it->is_regular_file(ec) && wanted(it->path()))
                files.push_back(it->path());
    }
    asiocrawl::detail::differential_totals totals;
    std::size_t shown = 0;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::string html{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        const auto result = asiocrawl::detail::compare_extractors(html);
        totals.add(result);
        if (!result.differs())
            continue;
        if (shown++ < show)
            std::printf("DIFF %s\n%s", file.c_str(), result.describe().c_str());
    }
    std::printf("%s\n", totals.summary().c_str());
    return totals.undocumented == 0 ? 0 : 1;
}
