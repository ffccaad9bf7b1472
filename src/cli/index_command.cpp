#include "cli/index_command.hpp"

#include <asiocrawl/outputs/archive.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::cli {

int index_command(int argc, char* argv[]) {
    constexpr const char* usage = "usage: asiocrawl index FILE.warc[.gz]...";
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::cout << usage << "\nPrints the CDXJ index of the WARC files, sorted.\n";
            return 0;
        }
        if (arg.starts_with('-') && arg != "-") {
            std::cerr << "asiocrawl index: unknown option " << arg << "\n" << usage << "\n";
            return 2;
        }
        files.emplace_back(arg);
    }
    if (files.empty()) {
        std::cerr << usage << "\n";
        return 2;
    }
    std::vector<std::string> lines;
    for (const auto& file : files) {
        try {
            const auto slash = file.rfind('/');
            const std::string name = slash == std::string::npos ? file : file.substr(slash + 1);
            for (const auto& capture : outputs::index_warc_file(file))
                lines.push_back(outputs::cdxj_line(capture, name));
        } catch (const std::exception& e) {
            std::cerr << "asiocrawl index: " << e.what() << "\n";
            return 1;
        }
    }
    std::sort(lines.begin(), lines.end());
    for (const auto& line : lines)
        std::cout << line << '\n';
    std::cout.flush();
    return std::cout ? 0 : 1;
}

} // namespace asiocrawl::cli
