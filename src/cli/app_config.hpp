// The CLI's whole configuration: the crawl (the library's crawler_config), the outputs (the outputs library's
// output_config) and the run itself (logging, exit status, signals), which only the command needs.
#pragma once

#include <asiocrawl/config.hpp>
#include <asiocrawl/outputs/output_config.hpp>
#include <asiocrawl/record.hpp>
#include <asiocrawl/sink.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::cli {

using outputs::open_mode;
using outputs::output_config;
using outputs::progress_mode;
using outputs::warc_config;

/// Logging, exit status and signals of the CLI / container job.
struct run_config {
    /// Least severe messages logged on stderr. Default warning.
    asiocrawl::log_level log_level = asiocrawl::log_level::warning;
    /// Exit with status 1 when a URL failed in one of the classes of `fail_on`, or of network, 5xx and 4xx
    /// when `fail_on` is empty. Default false.
    bool fail_on_errors = false;
    /// Which records fail the run (exit status 1): "4xx", "5xx", "network", "robots" (failure_class() in
    /// asiocrawl/report.hpp).
    /// Non-empty implies fail_on_errors. Default empty.
    std::vector<std::string> fail_on;
    /// After SIGINT/SIGTERM, how long fetches in flight may take to finish before they are abandoned.
    /// Default 10 s.
    std::chrono::milliseconds grace_period{10'000};
    /// Show internationalized host names in log lines in Unicode ("faß.example") rather than punycode
    /// ("xn--fa-hia.example"), which is what is requested and what records hold. Default false.
    bool unicode_hosts_in_logs = false;
};

/// Everything one run of the CLI is configured by: the YAML file's tree. The library needs only `crawl`.
struct app_config {
    crawler_config crawl;
    output_config output;
    run_config run;
};

/// The whole application config's problems: validate(crawl) and the output and run keys, each message
/// starting with the key's path.
std::vector<config_problem> validate(const app_config& config);

/// The classes that fail the run under `run`: fail_on when set, else network, 5xx and 4xx when
/// fail_on_errors, else none.
std::vector<std::string> effective_fail_on(const run_config& run);

} // namespace asiocrawl::cli
