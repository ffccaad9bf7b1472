// The command line: flags, ASIOCRAWL_* variables and the --config file merged into one app_config.
// Precedence, lowest first: defaults < YAML file < environment < flags (ROOT arguments are flags).
#pragma once

#include "cli/app_config.hpp"
#include <asiocrawl/sink.hpp>

#include <string>
#include <variant>
#include <vector>

namespace asiocrawl::cli {

struct cli_options {
    app_config config;
    /// Printed on stderr before the crawl (an unknown ASIOCRAWL_ variable that looks like a typo).
    std::vector<std::string> warnings;
};

/// Asked for help, the version or the effective config: print `text` to stdout and exit 0.
struct print_and_exit {
    std::string text;
    /// For stderr, as in cli_options.
    std::vector<std::string> warnings = {};
};

/// A usage or configuration error: print `message` (one or more lines) and a hint to stderr, exit 2.
struct usage_error {
    std::string message;
};

using parse_outcome = std::variant<cli_options, print_and_exit, usage_error>;

/// Parses argv against `environment` (NAME=VALUE strings). Reads the --config file; never throws, never
/// prints, never touches the network.
parse_outcome parse_command_line(int argc, const char* const argv[],
                                 const std::vector<std::string>& environment);

/// A seed file (-i FILE, not "-") that cannot give a crawl its seeds: "" when it is fine, else the usage
/// error (missing, unreadable, a directory; or, when `needs_a_seed` because nothing else seeds the crawl, a
/// regular file without one URL line). Reads a regular file only up to its first URL line.
std::string check_seed_file(const std::string& path, bool needs_a_seed);

/// The level after `shift` steps of -v (negative) or -q (positive) from `level`, clamped to debug..off.
log_level shifted_level(log_level level, int shift) noexcept;

} // namespace asiocrawl::cli
