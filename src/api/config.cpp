#include <asiocrawl/config.hpp>

#include "policy/host_rules.hpp"
#include "policy/revisit_schedule.hpp"

#include "policy/scope.hpp"
#include "url/url.hpp"

#include "http/fetch_settings.hpp"
#include "util/ascii.hpp"

#include <string>
#include <string_view>
#include <utility>

#include <arpa/inet.h>

namespace asiocrawl {

namespace {

// Above this, the workers alone would exhaust file descriptors and memory long before the network is busy.
constexpr std::size_t max_tasks_limit = 100'000;
// A smaller head cannot hold a status line and the handful of fields every real server sends.
constexpr std::uint32_t min_header_bytes = 1024;
// More parser threads than this only contend for the crawl thread that feeds them.
constexpr std::size_t max_parse_threads = 256;

bool is_c_blank(std::string_view text) noexcept {
    return text.find_first_not_of(" \t\n\v\f\r") == std::string_view::npos;
}

bool has_control_character(std::string_view text) noexcept {
    for (char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return true;
    return false;
}

/// A host name to compare hosts with: letters, digits, '-', '.', '_' and non-ASCII (IDN) bytes, with at
/// least one character that is not a dot.
bool is_domain_name(std::string_view text) noexcept {
    if (text.find_first_not_of('.') == std::string_view::npos)
        return false;
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '-' || c == '.' || c == '_' || byte >= 0x80;
        if (!ok)
            return false;
    }
    return true;
}

/// "type/subtype", "type/*" or "*/*": RFC 9110 tokens, no parameters.
bool is_media_range(std::string_view text) noexcept {
    const auto slash = text.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size())
        return false;
    const auto token = [](std::string_view part) {
        for (char c : part) {
            const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
            if (!ok)
                return false;
        }
        return true;
    };
    const auto type = text.substr(0, slash);
    const auto subtype = text.substr(slash + 1);
    if (type == "*" && subtype != "*")
        return false;
    return token(type) && token(subtype);
}

bool is_ip_address(const std::string& text) noexcept {
    unsigned char buffer[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, text.c_str(), buffer) == 1 ||
           ::inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

std::vector<std::string> problem_messages(const crawler_config& config) {
    std::vector<std::string> problems;

    if (config.roots.empty() && config.input_file.empty()) {
        problems.emplace_back("roots must contain at least one URL (or give input_file)");
    }
    for (std::size_t i = 0; i < config.roots.size(); ++i) {
        const std::string name = "roots[" + std::to_string(i) + "]";
        if (is_c_blank(config.roots[i])) {
            problems.push_back(name + " must not be empty");
        } else if (auto parsed = parse_root(config.roots[i]); !parsed) {
            problems.push_back(name + " must be an http or https URL (" + parsed.error().message() +
                               "), got \"" + config.roots[i] + "\"");
        }
    }
    const auto check_patterns = [&](std::string_view key, const std::vector<std::string>& patterns) {
        for (std::size_t i = 0; i < patterns.size(); ++i)
            if (std::string why = pattern_error(patterns[i]); !why.empty())
                problems.push_back(std::string(key) + "[" + std::to_string(i) +
                                   "] must be a regular expression (Perl syntax): " + why + ", got \"" +
                                   patterns[i] + "\"");
    };
    check_patterns("include", config.include);
    check_patterns("exclude", config.exclude);
    const auto check_domains = [&](std::string_view key, const std::vector<std::string>& domains) {
        for (std::size_t i = 0; i < domains.size(); ++i)
            if (!is_domain_name(domains[i]))
                problems.push_back(std::string(key) + "[" + std::to_string(i) +
                                   "] must be a domain name such as " +
                                   "example.com (no scheme, port or path), got \"" + domains[i] + "\"");
    };
    check_domains("domains", config.domains);
    check_domains("exclude_domains", config.exclude_domains);
    const auto check_names = [&](std::string_view key, const std::vector<std::string>& names) {
        for (std::size_t i = 0; i < names.size(); ++i)
            if (is_c_blank(names[i]) || names[i].find('/') != std::string::npos)
                problems.push_back(std::string(key) + "[" + std::to_string(i) +
                                   "] must be a file-name suffix or pattern such as pdf or *.jpg (no '/'), "
                                   "got \"" +
                                   names[i] + "\"");
    };
    check_names("accept", config.accept);
    check_names("reject", config.reject);

    for (std::size_t i = 0; i < config.accept_types.size(); ++i)
        if (!is_media_range(config.accept_types[i]))
            problems.push_back("accept_types[" + std::to_string(i) +
                               "] must be a media type such as text/html, image/* or */*, got \"" +
                               config.accept_types[i] + "\"");
    if (has_control_character(config.input_file))
        problems.emplace_back("input_file must not contain control characters");
    if (config.input_fd >= 0 && config.input_file.empty())
        problems.emplace_back("input_file must name the seeds read from input_fd");

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
        if (is_c_blank(host))
            problems.emplace_back("fetch.host_overrides has an empty host name");
        if (!is_ip_address(address))
            problems.push_back("fetch.host_overrides[\"" + host +
                               "\"] must be an IPv4 or IPv6 address, got \"" + address + "\"");
    }

    // The User-Agent goes into a header line: a line break would inject header fields.
    if (has_control_character(fetch.user_agent))
        problems.emplace_back("fetch.user_agent must not contain control characters");
    if (has_control_character(fetch.contact_url))
        problems.emplace_back("fetch.contact_url must not contain control characters");
    // Headers, credentials, proxies, DNS: src/http/fetch_settings.cpp.
    for (auto& problem : detail::fetch_settings_problems(fetch))
        problems.push_back(std::move(problem));

    if (config.parse_threads > max_parse_threads)
        problems.push_back("parse_threads must be at most " + std::to_string(max_parse_threads));

    const retry_config& retry = config.retry;
    if (retry.initial_backoff.count() < 0)
        problems.emplace_back("retry.initial_backoff must not be negative");
    if (!(retry.multiplier >= 1))
        problems.emplace_back("retry.multiplier must be at least 1");
    if (!(retry.jitter >= 0 && retry.jitter <= 1))
        problems.emplace_back("retry.jitter must be between 0 and 1");
    if (retry.max_backoff.count() < 0)
        problems.emplace_back("retry.max_backoff must not be negative");
    for (std::size_t i = 0; i < retry.statuses.size(); ++i)
        if (retry.statuses[i] < 400 || retry.statuses[i] > 599)
            problems.push_back("retry.statuses[" + std::to_string(i) +
                               "] must be an HTTP error status from 400 to 599, got " +
                               std::to_string(retry.statuses[i]));
    if (config.max_time.count() < 0)
        problems.emplace_back("max_time must not be negative");

    const robots_config& robots = config.robots;
    if (robots.max_bytes == 0)
        problems.emplace_back("robots.max_bytes must be at least 1");
    if (robots.max_redirects < 0)
        problems.emplace_back("robots.max_redirects must be at least 0");
    if (robots.unavailable_retry.count() < 0)
        problems.emplace_back("robots.unavailable_retry must not be negative");
    if (robots.max_crawl_delay.count() < 0)
        problems.emplace_back("robots.max_crawl_delay must not be negative");

    if (config.politeness.max_per_host < 1)
        problems.emplace_back("politeness.max_per_host must be at least 1");
    if (config.politeness.delay.count() < 0)
        problems.emplace_back("politeness.delay must not be negative");
    const autothrottle_config& throttle = config.politeness.autothrottle;
    if (throttle.start_delay.count() < 0)
        problems.emplace_back("politeness.autothrottle.start_delay must not be negative");
    if (throttle.max_delay.count() < 0)
        problems.emplace_back("politeness.autothrottle.max_delay must not be negative");
    if (!(throttle.target_concurrency > 0) || !(throttle.target_concurrency <= 1000))
        problems.emplace_back("politeness.autothrottle.target_concurrency must be above 0 and at most 1000");

    if (config.state.window < 1)
        problems.emplace_back("state.window must be at least 1");
    if (config.state.recrawl && config.state.dir.empty() && config.state.redis.empty())
        problems.emplace_back("state.recrawl needs a state (state.dir or state.redis): without one, give the "
                              "previous run's records with state.recrawl_from");
    if (!config.state.recrawl_from.empty() && (!config.state.dir.empty() || !config.state.redis.empty()))
        problems.emplace_back("state.recrawl_from excludes state.dir and state.redis: a crawl with a state "
                              "re-crawls from its own fetch history (state.recrawl)");
    if (!config.state.redis.empty() && !config.state.dir.empty())
        problems.emplace_back(
            "state.redis and state.dir exclude each other: a shared crawl keeps its state in Redis");
    if (!config.state.redis.empty() && !config.state.redis.starts_with("redis://") &&
        !config.state.redis.starts_with("rediss://"))
        problems.emplace_back("state.redis must be a redis:// or rediss:// URL");
    const redis_tls_config& redis_tls = config.state.redis_tls;
    const bool any_redis_tls = !redis_tls.ca_file.empty() || !redis_tls.cert_file.empty() ||
                               !redis_tls.key_file.empty() || redis_tls.insecure;
    // TLS settings beside a plain URL would let an operator believe the traffic is encrypted.
    if (any_redis_tls && !config.state.redis.starts_with("rediss://"))
        problems.emplace_back("state.redis_tls.* is set but state.redis is not a rediss:// URL");
    if (!redis_tls.key_file.empty() && redis_tls.cert_file.empty())
        problems.emplace_back("state.redis_tls.key_file needs state.redis_tls.cert_file (--redis-cert)");
    if (config.state.lease.count() < 100)
        problems.emplace_back("state.lease must be at least 100 ms");
    if (config.state.redis_timeout.count() < 100)
        problems.emplace_back("state.redis_timeout must be at least 100 ms");

    if (config.requisites.span_hosts && !config.requisites.enabled)
        problems.emplace_back("requisites.span_hosts needs requisites.enabled (--page-requisites)");

    for (std::size_t i = 0; i < config.hosts.size(); ++i) {
        const host_rule& rule = config.hosts[i];
        const std::string name = "hosts[" + std::to_string(i) + "]";
        std::string problem;
        const auto pattern = detail::parse_rule_pattern(rule.match, problem);
        if (rule.match.empty())
            problems.push_back(name + ".match must be a host, *.DOMAIN or an http(s) URL prefix");
        else if (!pattern)
            problems.push_back(name + ".match: " + problem);
        else if (pattern->what == detail::rule_pattern::kind::url_prefix &&
                 (rule.delay || rule.max_per_host || rule.obey_robots))
            problems.push_back(name + ": delay, max_per_host and obey_robots need a host pattern, not a URL "
                                      "prefix (a host is scheduled, and robots.txt read, as a whole)");
        if (rule.delay && rule.delay->count() < 0)
            problems.push_back(name + ".delay must not be negative");
        if (rule.max_per_host && *rule.max_per_host < 1)
            problems.push_back(name + ".max_per_host must be at least 1");
        for (std::size_t h = 0; h < rule.headers.size(); ++h)
            if (auto parsed = detail::parse_header_option(rule.headers[h]); !parsed.field)
                problems.push_back(name + ".headers[" + std::to_string(h) + "]: " + parsed.problem);
            else if (const auto& field = parsed.field->name;
                     detail::ascii::iequals(field, "user-agent") ||
                     detail::ascii::iequals(field, "accept-encoding") ||
                     detail::ascii::iequals(field, "cookie") || detail::ascii::iequals(field, "accept"))
                problems.push_back(
                    name + ".headers[" + std::to_string(h) + "]: " + field +
                    " is set for the whole crawl (fetch.headers, fetch.user_agent), not per rule");
        if (!rule.delay && !rule.max_per_host && !rule.max_pages && !rule.obey_robots && rule.headers.empty())
            problems.push_back(name +
                               " sets nothing: give delay, max_per_host, max_pages, obey_robots or headers");
    }

    return problems;
}

} // namespace

config_problem config_problem::about(std::string message) {
    std::string key = message.substr(0, message.find_first_of(" [:"));
    return {std::move(key), std::move(message)};
}

std::vector<config_problem> validate(const crawler_config& config) {
    std::vector<config_problem> problems;
    for (std::string& message : problem_messages(config))
        problems.push_back(config_problem::about(std::move(message)));
    if (config.continuous) {
        for (auto& problem : validate(settings_of(config.revisit)))
            problems.push_back(std::move(problem));
        // A continuous shared crawl never ends a generation: each URL has its own schedule in Redis, and a
        // re-crawl's new generation (a cleared seen set) would queue the scheduled URLs twice.
        if (!config.state.redis.empty() && config.state.recrawl)
            problems.push_back(config_problem::about(
                "state.recrawl excludes continuous in a shared crawl (state.redis): a continuous crawl "
                "fetches each URL again when it is due, with no generations"));
    }
    return problems;
}

} // namespace asiocrawl
