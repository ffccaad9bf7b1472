// Per-host rules (crawler_config::hosts): which rule a URL and a host fall under, first match wins.
#include "policy/host_rules.hpp"

#include <asiocrawl/config.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

using asiocrawl::host_rule;
using asiocrawl::detail::host_rules;
using asiocrawl::detail::host_under;
using asiocrawl::detail::parse_rule_pattern;
using asiocrawl::detail::rule_pattern;
using namespace std::chrono_literals;

host_rule rule(std::string match) {
    host_rule r;
    r.match = std::move(match);
    r.delay = 1s;
    return r;
}

TEST(HostRules, PatternsParse) {
    struct row {
        std::string_view match;
        bool ok;
        rule_pattern::kind kind;
        std::string_view text;
    };
    const row rows[] = {
        {"example.com", true, rule_pattern::kind::host, "example.com"},
        {"Example.COM", true, rule_pattern::kind::host, "example.com"},
        {"*.example.com", true, rule_pattern::kind::domain, "example.com"},
        {"127.0.0.1", true, rule_pattern::kind::host, "127.0.0.1"},
        {"https://Example.com/docs/", true, rule_pattern::kind::url_prefix, "https://example.com/docs/"},
        {"http://example.com", true, rule_pattern::kind::url_prefix, "http://example.com/"},
        {"", false, {}, ""},
        {"*.", false, {}, ""},
        {"*example.com", false, {}, ""},
        {"exa mple.com", false, {}, ""},
        {"example..com", false, {}, ""},
        {".example.com", false, {}, ""},
        {"ftp://example.com/", false, {}, ""},
        {"example.com/docs", false, {}, ""},
    };
    for (const auto& r : rows) {
        std::string problem;
        const auto parsed = parse_rule_pattern(r.match, problem);
        EXPECT_EQ(parsed.has_value(), r.ok) << r.match;
        if (parsed && r.ok) {
            EXPECT_EQ(parsed->what, r.kind) << r.match;
            EXPECT_EQ(parsed->text, r.text) << r.match;
        } else if (!r.ok) {
            EXPECT_FALSE(problem.empty()) << r.match;
        }
    }
}

TEST(HostRules, HostUnderADomain) {
    EXPECT_TRUE(host_under("example.com", "example.com"));
    EXPECT_TRUE(host_under("a.example.com", "example.com"));
    EXPECT_TRUE(host_under("a.b.example.com", "example.com"));
    EXPECT_FALSE(host_under("badexample.com", "example.com"));
    EXPECT_FALSE(host_under("example.com.evil", "example.com"));
    EXPECT_FALSE(host_under("com", "example.com"));
}

TEST(HostRules, FirstMatchWins) {
    const std::vector<host_rule> config{rule("https://docs.example.com/api/"), rule("docs.example.com"),
                                        rule("*.example.com"), rule("other.org")};
    const host_rules rules(config);
    struct row {
        std::string_view url;
        int rule; // -1: none
    };
    const row urls[] = {
        {"https://docs.example.com/api/v1", 0},
        {"https://docs.example.com/api/", 0},
        {"https://docs.example.com/apis", 1},
        {"http://docs.example.com/api/v1", 1}, // another scheme: not the prefix
        {"https://docs.example.com:8443/", 1},
        {"https://user@www.example.com/", 2},
        {"https://example.com/", 2},
        {"https://badexample.com/", -1},
        {"https://other.org/x", 3},
        {"https://sub.other.org/x", -1},
    };
    for (const auto& r : urls) {
        const auto index = rules.index_for_url(r.url);
        EXPECT_EQ(index ? static_cast<int>(*index) : -1, r.rule) << r.url;
        EXPECT_EQ(rules.for_url(r.url), r.rule < 0 ? nullptr : &config[static_cast<std::size_t>(r.rule)])
            << r.url;
    }
    // A host's scheduling follows host patterns only: the URL prefix is skipped.
    EXPECT_EQ(rules.for_host("docs.example.com"), &config[1]);
    EXPECT_EQ(rules.for_host("www.example.com"), &config[2]);
    EXPECT_EQ(rules.for_host("example.com"), &config[2]);
    EXPECT_EQ(rules.for_host("other.org"), &config[3]);
    EXPECT_EQ(rules.for_host("example.org"), nullptr);
    EXPECT_TRUE(host_rules(std::vector<host_rule>{}).empty());
    EXPECT_FALSE(host_rules(std::vector<host_rule>{}).for_url("https://example.com/"));
}

} // namespace
