#include "policy/host_rules.hpp"

#include "url/url.hpp"

#include <stdexcept>

namespace asiocrawl::detail {

namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

bool host_name_chars(std::string_view host) noexcept {
    if (host.empty() || host.size() > 253 || host.front() == '.' || host.back() == '.')
        return false;
    for (const char c : host)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'))
            return false;
    return host.find("..") == std::string_view::npos;
}

std::string_view host_of_url(std::string_view url) noexcept {
    auto start = url.find("://");
    if (start == std::string_view::npos)
        return {};
    start += 3;
    auto authority = url.substr(start, url.find_first_of("/?#", start) - start);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    if (!authority.empty() && authority.front() == '[')
        return authority.substr(0, authority.find(']') + 1);
    return authority.substr(0, authority.find(':'));
}

bool matches_host(const rule_pattern& p, std::string_view host) noexcept {
    return p.what == rule_pattern::kind::host ? host == p.text : host_under(host, p.text);
}

} // namespace

bool host_under(std::string_view host, std::string_view domain) noexcept {
    if (host.size() == domain.size())
        return host == domain;
    return host.size() > domain.size() && host.ends_with(domain) &&
           host[host.size() - domain.size() - 1] == '.';
}

std::optional<rule_pattern> parse_rule_pattern(std::string_view match, std::string& problem) {
    if (match.find("://") != std::string_view::npos) {
        auto url = parse_root(match);
        if (!url) {
            problem = "a URL prefix must be an http or https URL (" + url.error().message() + ")";
            return std::nullopt;
        }
        return rule_pattern{rule_pattern::kind::url_prefix, std::string(url->buffer())};
    }
    const std::string text = lower(match);
    if (text.starts_with("*.")) {
        if (!host_name_chars(std::string_view(text).substr(2))) {
            problem = "\"" + std::string(match) + "\" is not *.DOMAIN (a host name after \"*.\")";
            return std::nullopt;
        }
        return rule_pattern{rule_pattern::kind::domain, text.substr(2)};
    }
    if (!host_name_chars(text)) {
        problem =
            "\"" + std::string(match) +
            "\" is not a host name, *.DOMAIN or an http(s) URL prefix (internationalized names in punycode)";
        return std::nullopt;
    }
    return rule_pattern{rule_pattern::kind::host, text};
}

host_rules::host_rules(const std::vector<host_rule>& rules)
    : rules_(rules) {
    patterns_.reserve(rules.size());
    for (const auto& rule : rules) {
        std::string problem;
        auto pattern = parse_rule_pattern(rule.match, problem);
        if (!pattern)
            throw std::invalid_argument("hosts: " + problem);
        patterns_.push_back(std::move(*pattern));
    }
}

std::optional<std::size_t> host_rules::index_for_url(std::string_view url) const {
    if (patterns_.empty())
        return std::nullopt;
    const std::string_view host = host_of_url(url);
    for (std::size_t i = 0; i < patterns_.size(); ++i) {
        const auto& p = patterns_[i];
        if (p.what == rule_pattern::kind::url_prefix ? url.starts_with(p.text) : matches_host(p, host))
            return i;
    }
    return std::nullopt;
}

const host_rule* host_rules::for_url(std::string_view url) const {
    const auto i = index_for_url(url);
    return i ? &rules_[*i] : nullptr;
}

const host_rule* host_rules::for_host(std::string_view host) const {
    for (std::size_t i = 0; i < patterns_.size(); ++i)
        if (patterns_[i].what != rule_pattern::kind::url_prefix && matches_host(patterns_[i], host))
            return &rules_[i];
    return nullptr;
}

} // namespace asiocrawl::detail
