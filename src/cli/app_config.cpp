#include "cli/app_config.hpp"

#include <algorithm>

namespace asiocrawl::cli {

namespace {

constexpr std::string_view failure_classes[] = {"4xx", "5xx", "network", "robots"};

/// HOST:PORT with a non-empty host (a name, an IPv4 address or a bracketed IPv6 address) and a port 0-65535.
bool is_host_and_port(std::string_view text) noexcept {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
        return false;
    const std::string_view host = text.substr(0, colon);
    const std::string_view port = text.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoul(std::string(port)) > 65535)
        return false;
    if (host.front() == '[')
        return host.size() > 2 && host.back() == ']';
    return host.find_first_of(":[]/ \t") == std::string_view::npos;
}

} // namespace

std::vector<config_problem> validate(const app_config& config) {
    std::vector<config_problem> found = validate(config.crawl);
    std::vector<std::string> problems;
    const output_config& output = config.output;
    if (!output.metrics_listen.empty() && !is_host_and_port(output.metrics_listen))
        problems.push_back("output.metrics_listen must be HOST:PORT (127.0.0.1:9100, [::1]:9100), got \"" +
                           output.metrics_listen + "\"");
    if (!output.records.empty() && output.records != "-" && output.records == output.report_json)
        problems.emplace_back("output.report_json must not be the same file as output.records");
    // One stdout, one reader: JSON Lines followed by the text report parse as neither.
    if (output.records == "-" && (output.report || output.report_json == "-"))
        problems.emplace_back("output.records cannot be stdout (\"-\") while the report goes there too (set "
                              "output.report: false, or --no-report)");
    else if (output.report_json == "-" && output.report)
        problems.emplace_back("output.report_json cannot be stdout (\"-\") while the text report goes there "
                              "too (set output.report: false, or --no-report)");
    // Scrapy's feeds choose their format by the file's extension: a records file named for another format
    // is refused rather than filled with JSON Lines.
    for (const std::string_view other : {".csv", ".tsv", ".json", ".xml", ".gz"}) {
        if (output.records.size() > other.size() && output.records.ends_with(other)) {
            problems.push_back(
                "output.records is written as JSON Lines only: name the file .jsonl or .ndjson, "
                "not " +
                std::string(other));
            break;
        }
    }
    if (output.progress_interval < std::chrono::milliseconds{100})
        problems.emplace_back("output.progress_interval must be at least 100ms");
    if (output.queue_limit_bytes < 1024)
        problems.emplace_back("output.queue_limit must be at least 1024");
    if (output.cdxj && output.warc.path.empty())
        problems.emplace_back("output.cdxj indexes the WARC files: it needs output.warc.path (--warc)");
    if (!output.wacz.empty() && output.warc.path.empty())
        problems.emplace_back("output.wacz packages the WARC files: it needs output.warc.path (--warc)");
    if (output.warc.max_file_bytes < 1024)
        problems.emplace_back("output.warc.max_file_bytes must be at least 1024");
    for (std::size_t i = 0; i < config.run.fail_on.size(); ++i) {
        const std::string& name = config.run.fail_on[i];
        if (std::find(std::begin(failure_classes), std::end(failure_classes), name) ==
            std::end(failure_classes))
            problems.push_back("run.fail_on[" + std::to_string(i) +
                               "] must be one of 4xx, 5xx, network, robots, got \"" + name + "\"");
    }
    if (config.run.grace_period.count() < 0)
        problems.emplace_back("run.grace_period must not be negative");
    for (std::string& message : problems)
        found.push_back(config_problem::about(std::move(message)));
    return found;
}

std::vector<std::string> effective_fail_on(const run_config& run) {
    if (!run.fail_on.empty())
        return run.fail_on;
    if (run.fail_on_errors)
        return {"network", "5xx", "4xx"};
    return {};
}

} // namespace asiocrawl::cli
