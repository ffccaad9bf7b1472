// Per-host rules (crawler_config::hosts, docs/CONTROL.md): which rule a URL or a host falls under. Sans-io:
// plain strings in, a rule's index out; first match wins, in the order the config lists them.
#pragma once

#include <asiocrawl/config.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

/// What a rule's `match` is, and its normalized form: a host "example.com", a domain "*.example.com" (kept
/// as "example.com", matching it and its subdomains), or a URL prefix ("https://example.com/docs/", as the
/// crawl normalizes URLs). Nullopt with `problem` set when it is none of them.
struct rule_pattern {
    enum class kind { host, domain, url_prefix } what = kind::host;
    std::string text;
};
std::optional<rule_pattern> parse_rule_pattern(std::string_view match, std::string& problem);

class host_rules {
public:
    /// `rules` must be valid (validate() checks them) and outlive this object.
    explicit host_rules(const std::vector<host_rule>& rules);

    bool empty() const noexcept { return patterns_.empty(); }
    /// The first rule that matches `url` (normalized, as admitted), host patterns and URL prefixes alike.
    const host_rule* for_url(std::string_view url) const;
    /// Its index in the config's list, for counting (max_pages).
    std::optional<std::size_t> index_for_url(std::string_view url) const;
    /// The first host pattern (not URL prefix) that matches `host` (lower case, punycode, no port): what a
    /// host's scheduling (delay, max_per_host) and robots.txt (obey_robots) follow.
    const host_rule* for_host(std::string_view host) const;

private:
    const std::vector<host_rule>& rules_;
    std::vector<rule_pattern> patterns_;
};

/// True when `host` is `domain` or one of its subdomains ("a.b.example.com" under "example.com").
bool host_under(std::string_view host, std::string_view domain) noexcept;

} // namespace asiocrawl::detail
