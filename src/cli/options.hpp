// Command-line options: parsed into the library's crawler_config plus what only the CLI needs.
#pragma once

#include <asiocrawl/config.hpp>
#include <asiocrawl/sink.hpp>

#include <string>
#include <variant>
#include <vector>

namespace asiocrawl::cli {

struct cli_options {
    crawler_config crawl;
    /// JSON Lines output, one record per line; empty: none.
    std::string output_path;
    /// -v/-q balance: 0 warnings and errors; 1 (-v) info and a detailed report; 2 (-vv) debug; -1 (-q) errors
    /// only; -2 (-qq) nothing on stderr and no report.
    int verbosity = 0;
};

/// Asked for help or the version: print `text` to stdout and exit 0.
struct print_and_exit {
    std::string text;
};

/// A usage error: print `message` and a hint to stderr and exit 2.
struct usage_error {
    std::string message;
};

using parse_outcome = std::variant<cli_options, print_and_exit, usage_error>;

/// Parses argv. Never throws and never prints.
parse_outcome parse_command_line(int argc, const char* const argv[]);

log_level log_level_for(int verbosity) noexcept;

} // namespace asiocrawl::cli
