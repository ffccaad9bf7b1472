#include <asiocrawl/config.hpp>

#include <string_view>

#include <arpa/inet.h>

namespace asiocrawl {

namespace {

// Above this, the workers alone would exhaust file descriptors and memory long before the network is busy.
constexpr std::size_t max_tasks_limit = 100'000;
// A smaller head cannot hold a status line and the handful of fields every real server sends.
constexpr std::uint32_t min_header_bytes = 1024;

bool is_blank(std::string_view text) noexcept {
    return text.find_first_not_of(" \t\n\v\f\r") == std::string_view::npos;
}

bool is_ip_address(const std::string& text) noexcept {
    unsigned char buffer[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, text.c_str(), buffer) == 1 ||
           ::inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

} // namespace

std::vector<std::string> validate(const crawler_config& config) {
    std::vector<std::string> problems;

    if (config.roots.empty()) {
        problems.emplace_back("roots must contain at least one URL");
    }
    for (std::size_t i = 0; i < config.roots.size(); ++i) {
        if (is_blank(config.roots[i])) {
            problems.push_back("roots[" + std::to_string(i) + "] must not be empty");
        }
    }

    if (config.max_tasks < 1) {
        problems.emplace_back("max_tasks must be at least 1");
    } else if (config.max_tasks > max_tasks_limit) {
        problems.push_back("max_tasks must be at most " + std::to_string(max_tasks_limit));
    }
    if (config.max_redirect < 0) {
        problems.emplace_back("max_redirect must be at least 0");
    }
    if (config.max_tries < 1) {
        problems.emplace_back("max_tries must be at least 1");
    }
    if (config.max_depth && *config.max_depth < 0) {
        problems.emplace_back("max_depth must be at least 0");
    }
    if (config.max_pages && *config.max_pages == 0) {
        problems.emplace_back("max_pages must be at least 1");
    }

    const fetch_config& fetch = config.fetch;
    if (fetch.connect_timeout.count() <= 0) {
        problems.emplace_back("fetch.connect_timeout must be positive");
    }
    if (fetch.request_timeout.count() <= 0) {
        problems.emplace_back("fetch.request_timeout must be positive");
    }
    if (fetch.max_body_bytes == 0) {
        problems.emplace_back("fetch.max_body_bytes must be at least 1");
    }
    if (fetch.max_header_bytes < min_header_bytes) {
        problems.push_back("fetch.max_header_bytes must be at least " + std::to_string(min_header_bytes));
    }
    if (fetch.idle_timeout.count() < 0) {
        problems.emplace_back("fetch.idle_timeout must not be negative");
    }
    for (const auto& [host, address] : fetch.host_overrides) {
        if (is_blank(host))
            problems.emplace_back("fetch.host_overrides has an empty host name");
        if (!is_ip_address(address))
            problems.push_back("fetch.host_overrides[\"" + host +
                               "\"] must be an IPv4 or IPv6 address, got \"" + address + "\"");
    }

    return problems;
}

} // namespace asiocrawl

namespace asiocrawl {

std::vector<std::string> validate(const app_config& config) {
    auto problems = validate(config.crawl);
    if (config.output.warc.max_file_bytes < 1024)
        problems.emplace_back("output.warc.max_file_bytes must be at least 1024");
    if (config.run.grace_period.count() < 0)
        problems.emplace_back("run.grace_period must not be negative");
    return problems;
}

} // namespace asiocrawl
