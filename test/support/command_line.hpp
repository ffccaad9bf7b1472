// The CLI's command-line parser run on arguments as a shell passes them, the program name first.
#pragma once

#include "cli/options.hpp"

#include <string>
#include <vector>

namespace asiocrawl::test {

inline cli::parse_outcome parse_arguments(std::vector<std::string> args,
                                          const std::vector<std::string>& environment = {}) {
    args.insert(args.begin(), "asiocrawl");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    return cli::parse_command_line(static_cast<int>(argv.size()), argv.data(), environment);
}

} // namespace asiocrawl::test
