#include "policy/scope.hpp"

#include "url/url.hpp"

#include <gtest/gtest.h>

#include <boost/url/parse.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using asiocrawl::host_scope;
using asiocrawl::scope_verdict;

std::vector<boost::urls::url> parse_roots(const std::vector<std::string_view>& texts) {
    std::vector<boost::urls::url> roots;
    for (auto text : texts) {
        auto root = asiocrawl::parse_root(text);
        EXPECT_TRUE(root.has_value()) << text;
        if (root) {
            roots.push_back(*root);
        }
    }
    return roots;
}

struct scope_case {
    std::vector<std::string_view> roots;
    host_scope mode;
    std::string_view url;
    scope_verdict expected;
    std::string_view include = {};
    std::string_view exclude = {};
};

std::string_view mode_name(host_scope mode) {
    return mode == host_scope::strict ? "strict" : "lenient";
}

constexpr auto strict = host_scope::strict;
constexpr auto lenient = host_scope::lenient;
constexpr auto in_scope = scope_verdict::in_scope;
constexpr auto off_host = scope_verdict::off_host;
constexpr auto excluded = scope_verdict::excluded;
constexpr auto not_included = scope_verdict::not_included;

TEST(Scope, Verdicts) {
    const std::vector<scope_case> cases = {
        // same host, www. ignored once on either side
        {{"http://example.com/"}, strict, "http://example.com/a", in_scope},
        {{"http://example.com/"}, strict, "http://www.example.com/a", in_scope},
        {{"http://www.example.com/"}, strict, "http://example.com/a", in_scope},
        {{"http://www.example.com/"}, strict, "http://www.www.example.com/", in_scope},
        {{"http://www.www.example.com/"}, strict, "http://www.example.com/", in_scope},
        {{"http://example.com/"}, strict, "http://www.www.example.com/", off_host},
        {{"http://example.com/"}, strict, "http://example.org/", off_host},
        {{"http://example.com/"}, strict, "http://wwwexample.com/", off_host},
        {{"http://example.com/"}, strict, "http://Example.COM./x", in_scope},
        // subdomains: strict keeps them out, lenient lets them in by registrable domain
        {{"http://example.com/"}, strict, "http://blog.example.com/", off_host},
        {{"http://example.com/"}, lenient, "http://blog.example.com/", in_scope},
        {{"http://www.bbc.co.uk/"}, lenient, "http://news.bbc.co.uk/", in_scope},
        {{"http://www.bbc.co.uk/"}, strict, "http://news.bbc.co.uk/", off_host},
        {{"http://bbc.co.uk/"}, lenient, "http://itv.co.uk/", off_host},
        {{"http://bbc.co.uk/"}, lenient, "http://co.uk/", off_host},
        {{"https://foo.github.io/"}, lenient, "https://bar.github.io/", off_host},
        {{"https://foo.github.io/"}, lenient, "https://www.foo.github.io/x", in_scope},
        {{"https://foo.github.io/"}, lenient, "https://a.b.foo.github.io/", in_scope},
        {{"http://example.com/"}, lenient, "http://example.org/", off_host},
        // hosts without a registrable domain fall back to the strict rule
        {{"http://localhost:8080/"}, lenient, "http://localhost:8080/a", in_scope},
        {{"http://localhost:8080/"}, lenient, "http://www.localhost:8080/a", in_scope},
        {{"http://localhost:8080/"}, lenient, "http://other:8080/a", off_host},
        // IP hosts: exact only
        {{"http://127.0.0.1:8080/"}, strict, "http://127.0.0.1:8080/x", in_scope},
        {{"http://127.0.0.1:8080/"}, lenient, "http://127.0.0.1:8080/x", in_scope},
        {{"http://127.0.0.1:8080/"}, lenient, "http://127.0.0.2:8080/x", off_host},
        {{"http://10.0.0.1/"}, lenient, "http://0.0.1/", off_host},
        {{"http://[::1]:8080/"}, strict, "http://[::1]:8080/x", in_scope},
        {{"http://[::1]:8080/"}, lenient, "http://[::2]:8080/x", off_host},
        {{"http://[::1]:8080/"}, strict, "http://127.0.0.1:8080/x", off_host},
        // ports: http and https on their defaults are one server, any other port is its own
        {{"http://example.com/"}, strict, "https://example.com/", in_scope},
        {{"https://example.com/"}, strict, "http://example.com/", in_scope},
        {{"http://example.com:8080/"}, strict, "https://example.com:8080/", in_scope},
        {{"http://example.com:8080/"}, strict, "http://example.com:9090/", off_host},
        {{"http://example.com:8080/"}, strict, "http://example.com/", off_host},
        {{"http://example.com/"}, strict, "http://example.com:8080/", off_host},
        {{"http://example.com/"}, lenient, "http://blog.example.com:8080/", off_host},
        {{"http://example.com/"}, strict, "http://example.com:80/", in_scope},
        // several roots
        {{"http://a.example/", "http://b.example:81/"}, strict, "http://b.example:81/x", in_scope},
        {{"http://a.example/", "http://b.example:81/"}, strict, "http://www.a.example/", in_scope},
        {{"http://a.example/", "http://b.example:81/"}, strict, "http://b.example/", off_host},
        {{"http://a.example/", "http://b.example:81/"}, strict, "http://c.example/", off_host},
        {{}, strict, "http://a.example/", off_host},
        // include and exclude, on the normalized URL string; the host rule comes first
        {{"http://example.com/"}, strict, "http://example.com/logout", excluded, {}, "/logout"},
        {{"http://example.com/"}, strict, "http://example.com/login", in_scope, {}, "/logout"},
        {{"http://example.com/"}, strict, "http://other.com/logout", off_host, {}, "/logout"},
        {{"http://example.com/"},
         strict,
         "http://example.com/img.PNG",
         excluded,
         {},
         R"((?i)\.(png|jpe?g)$)"},
        {{"http://example.com/"}, strict, "http://example.com/docs/a", in_scope, "^https?://[^/]+/docs/"},
        {{"http://example.com/"}, strict, "http://example.com/blog/a", not_included, "^https?://[^/]+/docs/"},
        {{"http://example.com/"},
         strict,
         "http://example.com/docs/x?print=1",
         excluded,
         "/docs/",
         R"(\?print=)"},
        {{"http://example.com/"}, strict, "http://example.com/x?print=1", excluded, "/docs/", R"(\?print=)"},
        {{"http://example.com/"}, strict, "http://example.com/", in_scope, "example\\.com/$", ""},
        {{"http://example.com:8080/"}, strict, "http://example.com:8080/a", in_scope, ":8080/"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message() << mode_name(c.mode) << " url " << c.url << " include \""
                                          << c.include << "\" exclude \"" << c.exclude << "\"");
        const asiocrawl::scope scope(parse_roots(c.roots), c.mode, c.include, c.exclude);
        const auto url = asiocrawl::parse_root(c.url);
        ASSERT_TRUE(url.has_value());
        EXPECT_EQ(asiocrawl::to_string(scope.check(*url)), asiocrawl::to_string(c.expected));
        EXPECT_EQ(scope.host_in_scope(*url), c.expected != off_host);
        const asiocrawl::scope by_text(parse_roots(c.roots), c.mode, c.include, c.exclude);
        EXPECT_EQ(by_text.check_text(url->buffer()), c.expected);
    }
}

TEST(Scope, InvalidPatternThrowsNamingOptionAndPattern) {
    const auto roots = parse_roots({"http://example.com/"});
    const std::vector<std::pair<std::string_view, std::string_view>> cases = {
        {"include", "(unclosed"},
        {"exclude", "[a-"},
        {"exclude", "*oops"},
    };
    for (const auto& [option, pattern] : cases) {
        SCOPED_TRACE(::testing::Message() << option << " " << pattern);
        const bool is_include = option == "include";
        try {
            const asiocrawl::scope scope(roots, strict, is_include ? pattern : "", is_include ? "" : pattern);
            ADD_FAILURE() << "no exception";
        } catch (const std::invalid_argument& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find(option), std::string::npos) << message;
            EXPECT_NE(message.find(pattern), std::string::npos) << message;
        }
    }
}

TEST(Scope, PatternTooComplexToEvaluateFailsClosed) {
    // Catastrophic backtracking: Boost.Regex gives up (throws) instead of running for ages.
    const std::string_view pathological = "(a+)+$";
    const std::string url = "http://example.com/" + std::string(64, 'a') + "!";
    const auto parsed = asiocrawl::parse_root(url);
    ASSERT_TRUE(parsed.has_value());
    const auto roots = parse_roots({"http://example.com/"});
    EXPECT_EQ(asiocrawl::scope(roots, strict, "", pathological).check(*parsed), excluded);
    EXPECT_EQ(asiocrawl::scope(roots, strict, pathological, "").check(*parsed), not_included);
}

TEST(Scope, IsMovable) {
    asiocrawl::scope original(parse_roots({"http://example.com/"}), strict, "", "/x");
    asiocrawl::scope moved(std::move(original));
    const auto url = asiocrawl::parse_root("http://example.com/x");
    ASSERT_TRUE(url.has_value());
    EXPECT_EQ(moved.check(*url), excluded);
    asiocrawl::scope assigned(parse_roots({"http://other.example/"}), strict, "", "");
    assigned = std::move(moved);
    EXPECT_EQ(assigned.check(*url), excluded);
}

asiocrawl::trap_config traps(std::size_t length, std::size_t segments, std::size_t repetitions,
                             std::size_t params, bool permutations = false) {
    asiocrawl::trap_config t;
    t.max_url_length = length;
    t.max_path_segments = segments;
    t.max_segment_repetitions = repetitions;
    t.max_query_params = params;
    t.skip_query_permutations = permutations;
    return t;
}

struct trap_case {
    asiocrawl::trap_config traps;
    std::string url;
    scope_verdict expected;
    std::string_view exclude = {};
};

TEST(ScopeTraps, Verdicts) {
    const asiocrawl::trap_config defaults;
    const auto off = traps(0, 0, 0, 0);
    const std::string host = "http://example.com"; // 18 bytes
    const auto path_of_length = [&](std::size_t total) { return host + "/" + std::string(total - 19, 'a'); };
    const auto segments = [&](std::size_t n) {
        std::string url = host;
        for (std::size_t i = 0; i < n; ++i)
            url += "/s" + std::to_string(i);
        return url;
    };
    const auto params = [&](std::size_t n) {
        std::string url = host + "/q?";
        for (std::size_t i = 0; i < n; ++i)
            url += "p" + std::to_string(i) + "=1&";
        return url;
    };
    const std::vector<trap_case> cases = {
        // URL length, in bytes of the normalized form, inclusive limit
        {defaults, path_of_length(2048), in_scope},
        {defaults, path_of_length(2049), scope_verdict::url_too_long},
        {traps(30, 0, 0, 0), path_of_length(30), in_scope},
        {traps(30, 0, 0, 0), path_of_length(31), scope_verdict::url_too_long},
        {off, path_of_length(100'000), in_scope},
        // the length check comes before the patterns (a huge URL never reaches the regex engine)
        {traps(30, 0, 0, 0), path_of_length(40), scope_verdict::url_too_long, "a"},
        // path segments; a trailing slash adds none, empty inner segments count
        {defaults, segments(32), in_scope},
        {defaults, segments(33), scope_verdict::too_many_segments},
        {defaults, segments(32) + "/", in_scope},
        {traps(0, 3, 0, 0), host + "/a/b/c/", in_scope},
        {traps(0, 3, 0, 0), host + "/a/b/c/d", scope_verdict::too_many_segments},
        {traps(0, 3, 0, 0), host + "/a//c/d", scope_verdict::too_many_segments},
        {traps(0, 3, 0, 0), host + "/", in_scope},
        {off, segments(1000), in_scope},
        // repetitions of one segment anywhere in the path
        {defaults, host + "/a/b/a/b/a/b", in_scope},
        {defaults, host + "/a/b/a/b/a/b/a", scope_verdict::repeated_segment},
        {defaults, host + "/x/a/a/a/a/", scope_verdict::repeated_segment},
        {defaults, host + "/x////y", in_scope},
        {defaults, host + "/x/////y", scope_verdict::repeated_segment},
        {traps(0, 0, 1, 0), host + "/a/b/c", in_scope},
        {traps(0, 0, 1, 0), host + "/a/b/a", scope_verdict::repeated_segment},
        {traps(0, 0, 1, 0), host + "/a/b/%7Ea", in_scope},
        {off, host + "/a/a/a/a/a/a/a/a/a", in_scope},
        // segments are counted before repetitions
        {traps(0, 3, 1, 0), host + "/a/a/a/a", scope_verdict::too_many_segments},
        // query parameters; empty pieces are not parameters
        {defaults, params(32), in_scope},
        {defaults, params(33), scope_verdict::too_many_params},
        {traps(0, 0, 0, 2), host + "/?a=1&b=2", in_scope},
        {traps(0, 0, 0, 2), host + "/?a=1&&b=2&&", in_scope},
        {traps(0, 0, 0, 2), host + "/?a=1&b=2&c", scope_verdict::too_many_params},
        {traps(0, 0, 0, 2), host + "/?", in_scope},
        {off, params(1000), in_scope},
        // the host rule still comes first
        {traps(10, 0, 0, 0), "http://other.example/" + std::string(50, 'a'), off_host},
    };
    const auto roots = parse_roots({"http://example.com/"});
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message() << c.url.substr(0, 120) << " (" << c.url.size() << " bytes)");
        const asiocrawl::scope scope(roots, strict, "", c.exclude, c.traps);
        const auto url = asiocrawl::parse_root(c.url);
        ASSERT_TRUE(url.has_value());
        EXPECT_EQ(asiocrawl::to_string(scope.check(*url)), asiocrawl::to_string(c.expected));
        const asiocrawl::scope by_text(roots, strict, "", c.exclude, c.traps);
        EXPECT_EQ(by_text.check_text(url->buffer()), c.expected);
    }
}

// check_text() gives what parse_uri and check() give, for every shape of text: plain normalized URLs (read
// without a parse), texts the grammar refuses, and rules that need the parsed URL; a scope's state (the query
// orderings it remembers) moves alike.
TEST(ScopeText, AgreesWithParseAndCheck) {
    const std::vector<std::string_view> texts = {
        "http://example.com/a", "http://example.com/", "http://example.com", "https://example.com:443/x",
        "http://example.com:8080/x", "http://www.example.com/docs/x.html", "http://other.example/docs/x",
        "HTTP://EXAMPLE.com./x", "http://user:pw@example.com/x", "http://[::1]:8080/x", "http://127.0.0.1/x",
        "http://example.com/docs/a/a/a/a", "http://example.com/1/2/3/4/5/6/7/8/9", "http://example.com/a//b",
        "http://example.com/p?a=1&b=2&c=3", "http://example.com/p?c=3&a=1&b=2", "http://example.com?x=1&y=2",
        "http://example.com/p?y=2&x=1", "http://example.com/q?", "http://example.com/q??a=/b",
        "http://example.com/img.png", "http://example.com/docs/", "http://example.com/a;b=c,d:e@f!$'()*+~_-.",
        "http://example.com/%41%7e%2F", "http://example.com/logout?print=1",
        // not URLs to parse_uri: the same nullopt
        "http://example.com/a b", "http://example.com/%zz", "http://example.com/%4", "http://example.com/%",
        "http://example.com/a|b", "http://example.com/a?b|c", "http://example.com/\xc3\xbc",
        "http://example.com/[x]", "http://exa mple.com/", "http://example.com:80x/", "http://ex%ample.com/",
        "", "http://", "nothing", ":", "://x/",
        // other shapes: parsed as before
        "http://example.com/a#frag", "http:/example.com/x", "mailto:x@example.com", "http:example.com",
        "urn:isbn:0451450523", "http://example.com/a#b#c"};
    struct config_case {
        std::string_view name;
        asiocrawl::crawler_config config;
    };
    std::vector<config_case> configs(6);
    configs[0].name = "defaults";
    configs[1].name = "lenient, patterns";
    configs[1].config.scope = lenient;
    configs[1].config.include = {"/docs/|/p"};
    configs[1].config.exclude = {R"(print=|\.png$)"};
    configs[2].name = "small trap limits";
    configs[2].config.traps = traps(40, 4, 1, 2, true);
    configs[3].name = "no_parent (parsed)";
    configs[3].config.no_parent = true;
    configs[4].name = "accept/reject (parsed)";
    configs[4].config.reject = {"*.png"};
    configs[5].name = "domains, exclude_domains";
    configs[5].config.domains = {"other.example"};
    configs[5].config.exclude_domains = {"www.example.com"};
    const auto roots = parse_roots({"http://example.com/docs/index.html"});
    for (const auto& c : configs) {
        SCOPED_TRACE(c.name);
        const asiocrawl::scope parsed_scope(roots, c.config);
        const asiocrawl::scope text_scope(roots, c.config);
        for (int pass = 0; pass < 2; ++pass) { // the second pass meets the memo of hosts
            for (const auto text : texts) {
                SCOPED_TRACE(text);
                // "invalid" for a text parse_uri refuses, else the verdict's name.
                const auto parsed = boost::urls::parse_uri(text);
                const std::string expected =
                    parsed ? std::string(asiocrawl::to_string(parsed_scope.check(*parsed))) : "invalid";
                const auto got = text_scope.check_text(text);
                EXPECT_EQ(got ? std::string(asiocrawl::to_string(*got)) : "invalid", expected);
            }
        }
    }
}

// check_text() remembers the host rules' verdict per scheme and authority; a seed added afterwards widens
// them, as it does for check().
TEST(ScopeText, SeedAddedAfterAVerdictWidensTheHostRules) {
    asiocrawl::scope scope(parse_roots({"http://example.com/"}), asiocrawl::crawler_config{});
    EXPECT_EQ(scope.check_text("http://seeded.example/a"), off_host);
    const auto seed = asiocrawl::parse_root("http://seeded.example/start");
    ASSERT_TRUE(seed.has_value());
    scope.add_seed(*seed);
    EXPECT_EQ(scope.check_text("http://seeded.example/a"), in_scope);
    // and many hosts (more than the memo holds) keep their verdicts
    for (int i = 0; i < 3000; ++i) {
        const std::string host = "http://h" + std::to_string(i) + ".example/x";
        ASSERT_EQ(scope.check_text(host), off_host) << host;
    }
    EXPECT_EQ(scope.check_text("http://seeded.example/b"), in_scope);
    EXPECT_EQ(scope.check_text("http://example.com/b"), in_scope);
}

TEST(ScopeTraps, QueryPermutationsOfAnAdmittedUrlAreSkipped) {
    const asiocrawl::scope scope(parse_roots({"http://example.com/"}), strict, "", "");
    const auto check = [&](std::string_view text) {
        const auto url = asiocrawl::parse_root(text);
        EXPECT_TRUE(url.has_value()) << text;
        return url ? asiocrawl::to_string(scope.check(*url)) : "unparsed";
    };
    EXPECT_EQ(check("http://example.com/p?a=1&b=2&c=3"), "in_scope");
    // the same URL again is for dedup to catch, not a permutation
    EXPECT_EQ(check("http://example.com/p?a=1&b=2&c=3"), "in_scope");
    EXPECT_EQ(check("http://example.com/p?c=3&a=1&b=2"), "permuted_query");
    EXPECT_EQ(check("http://example.com/p?b=2&a=1&c=3"), "permuted_query");
    // other values, another path or another host are other pages
    EXPECT_EQ(check("http://example.com/p?a=1&b=2&c=4"), "in_scope");
    EXPECT_EQ(check("http://example.com/other?c=3&a=1&b=2"), "in_scope");
    EXPECT_EQ(check("http://www.example.com/p?c=3&a=1&b=2"), "in_scope");
    // one parameter cannot be permuted; a duplicated parameter is part of the set
    EXPECT_EQ(check("http://example.com/one?a=1"), "in_scope");
    EXPECT_EQ(check("http://example.com/p?a=1&a=1&b=2&c=3"), "in_scope");
    // a URL rejected for another reason claims no ordering
    const asiocrawl::scope excluding(parse_roots({"http://example.com/"}), strict, "", "x=1&y=2");
    const auto first = asiocrawl::parse_root("http://example.com/p?x=1&y=2");
    const auto second = asiocrawl::parse_root("http://example.com/p?y=2&x=1");
    ASSERT_TRUE(first && second);
    EXPECT_EQ(excluding.check(*first), excluded);
    EXPECT_EQ(excluding.check(*second), in_scope);
    // and the defense can be turned off
    const asiocrawl::scope lax(parse_roots({"http://example.com/"}), strict, "", "",
                               traps(0, 0, 0, 0, false));
    EXPECT_EQ(lax.check(*second), in_scope);
    EXPECT_EQ(lax.check(*first), in_scope);
}

TEST(ScopeTraps, TenThousandPermutationsAdmitOne) {
    const asiocrawl::scope scope(parse_roots({"http://example.com/"}), strict, "", "");
    std::vector<std::string> params;
    for (int i = 0; i < 8; ++i)
        params.push_back("k" + std::to_string(i) + "=v");
    std::size_t admitted = 0;
    std::size_t permuted = 0;
    for (int n = 0; n < 10'000 && std::next_permutation(params.begin(), params.end()); ++n) {
        std::string url = "http://example.com/page?";
        for (const auto& p : params)
            url += p + "&";
        const auto parsed = asiocrawl::parse_root(url);
        ASSERT_TRUE(parsed.has_value());
        const auto verdict = scope.check(*parsed);
        admitted += verdict == in_scope;
        permuted += verdict == scope_verdict::permuted_query;
    }
    EXPECT_EQ(admitted, 1u);
    EXPECT_EQ(permuted, 9'999u);
}

TEST(ScopeVerdict, Names) {
    const std::vector<std::pair<scope_verdict, std::string_view>> cases = {
        {in_scope, "in_scope"},
        {off_host, "off_host"},
        {excluded, "excluded"},
        {not_included, "not_included"},
        {scope_verdict::url_too_long, "url_too_long"},
        {scope_verdict::too_many_segments, "too_many_segments"},
        {scope_verdict::repeated_segment, "repeated_segment"},
        {scope_verdict::too_many_params, "too_many_params"},
        {scope_verdict::permuted_query, "permuted_query"},
        {scope_verdict::excluded_domain, "excluded_domain"},
        {scope_verdict::parent_directory, "parent_directory"},
        {scope_verdict::rejected_file, "rejected_file"},
    };
    for (const auto& [verdict, name] : cases) {
        EXPECT_EQ(asiocrawl::to_string(verdict), name);
    }
}

// ---- the rules a crawler_config adds: domains, no_parent, accept/reject, pattern lists ----

struct rule_case {
    std::string_view url;
    scope_verdict expected;
};

void expect_verdicts(const asiocrawl::scope& scope, const std::vector<rule_case>& cases) {
    for (const auto& c : cases) {
        SCOPED_TRACE(c.url);
        const auto url = asiocrawl::parse_root(c.url);
        ASSERT_TRUE(url.has_value());
        EXPECT_EQ(asiocrawl::to_string(scope.check(*url)), asiocrawl::to_string(c.expected));
    }
}

TEST(ScopeRules, DomainsAddHostsWithTheirSubdomains) {
    asiocrawl::crawler_config config;
    config.domains = {"example.org", "CDN.Example.NET."};
    config.exclude_domains = {"ads.example.org", "tracker.example.com"};
    const asiocrawl::scope scope(parse_roots({"http://example.com/"}), config);
    expect_verdicts(scope, {
                               {"http://example.com/a", in_scope},
                               {"http://www.example.com/a", in_scope},
                               {"http://example.org/a", in_scope},
                               {"http://deep.www.example.org/a", in_scope},
                               {"http://cdn.example.net/x.js", in_scope},
                               {"http://badexample.org/", off_host},
                               {"http://example.org.evil.test/", off_host},
                               {"http://other.example.net/", off_host},
                               {"http://ads.example.org/", scope_verdict::excluded_domain},
                               {"http://x.ads.example.org/", scope_verdict::excluded_domain},
                               {"http://tracker.example.com/", scope_verdict::excluded_domain},
                               {"http://notads.example.org/", in_scope},
                           });
    const auto excluded_root_host = asiocrawl::parse_root("http://tracker.example.com/");
    EXPECT_FALSE(scope.host_in_scope(*excluded_root_host));
}

TEST(ScopeRules, NoParentKeepsEachRootsDirectoryOnItsHost) {
    asiocrawl::crawler_config config;
    config.no_parent = true;
    config.domains = {"other.example"};
    const asiocrawl::scope scope(
        parse_roots({"http://example.com/docs/v2/", "http://example.com/blog/post.html",
                     "http://example.com:8080/a/b"}),
        config);
    expect_verdicts(scope, {
                               {"http://example.com/docs/v2/", in_scope},
                               {"http://example.com/docs/v2/intro", in_scope},
                               {"http://www.example.com/docs/v2/x/y", in_scope},
                               {"http://example.com/docs/v1/", scope_verdict::parent_directory},
                               {"http://example.com/docs/", scope_verdict::parent_directory},
                               {"http://example.com/docs/v2", scope_verdict::parent_directory},
                               {"http://example.com/blog/other.html", in_scope},
                               {"http://example.com/blog/2024/x", in_scope},
                               {"http://example.com/", scope_verdict::parent_directory},
                               // "/a/b" names a file in "/a/", as wget reads it
                               {"http://example.com:8080/a/c", in_scope},
                               {"http://example.com:8080/z", scope_verdict::parent_directory},
                               // a host no root has is not restricted
                               {"http://other.example/anywhere", in_scope},
                           });
}

TEST(ScopeRules, AcceptAndRejectFollowWget) {
    asiocrawl::crawler_config config;
    config.accept = {"pdf", "*.jp*g"};
    config.reject = {"secret*.pdf"};
    const asiocrawl::scope scope(parse_roots({"http://example.com/"}), config);
    expect_verdicts(scope, {
                               {"http://example.com/report.pdf", in_scope},
                               {"http://example.com/reportpdf", in_scope}, // a suffix, as wget's
                               {"http://example.com/a/photo.jpeg?size=2", in_scope},
                               {"http://example.com/photo.jpg", in_scope},
                               {"http://example.com/photo.JPG", scope_verdict::rejected_file},
                               {"http://example.com/notes.txt", scope_verdict::rejected_file},
                               {"http://example.com/secret-plan.pdf", scope_verdict::rejected_file},
                               {"http://example.com/secret%2Dplan.pdf", scope_verdict::rejected_file},
                               // fetched to be traversed
                               {"http://example.com/docs/", in_scope},
                               {"http://example.com/index.html", in_scope},
                               {"http://example.com/PAGE.HTM", in_scope},
                               {"http://example.com/list.php?page=2", scope_verdict::rejected_file},
                           });
    const auto kept = [&](std::string_view text) {
        return asiocrawl::file_name_kept(*asiocrawl::parse_root(text), config.accept, config.reject);
    };
    EXPECT_TRUE(kept("http://example.com/report.pdf"));
    EXPECT_FALSE(kept("http://example.com/index.html")) << "traversed, then not kept";
    EXPECT_FALSE(kept("http://example.com/docs/"));
    EXPECT_TRUE(asiocrawl::file_name_kept(*asiocrawl::parse_root("http://example.com/docs/"), {}, {}));
    EXPECT_TRUE(asiocrawl::file_name_kept(*asiocrawl::parse_root("http://example.com/docs/"), {"html"}, {}));
}

TEST(ScopeRules, AnyOfSeveralPatterns) {
    asiocrawl::crawler_config config;
    config.exclude = {"/private/", R"(\.pdf$)"};
    config.include = {"/docs/", "/blog/"};
    const asiocrawl::scope scope(parse_roots({"http://example.com/"}), config);
    expect_verdicts(scope, {
                               {"http://example.com/docs/a", in_scope},
                               {"http://example.com/blog/b", in_scope},
                               {"http://example.com/shop/c", not_included},
                               {"http://example.com/docs/private/d", excluded},
                               {"http://example.com/blog/e.pdf", excluded},
                           });
    config.exclude = {"ok", "(unclosed"};
    EXPECT_THROW(asiocrawl::scope(parse_roots({"http://example.com/"}), config), std::invalid_argument);
    EXPECT_EQ(asiocrawl::pattern_error("a{1,3}"), "");
    EXPECT_NE(asiocrawl::pattern_error("(unclosed"), "");
}

TEST(RegistrableDomain, PublicSuffixList) {
    const std::vector<std::pair<std::string_view, std::string_view>> cases = {
        {"example.com", "example.com"},
        {"www.example.com", "example.com"},
        {"a.b.c.example.com", "example.com"},
        {"news.bbc.co.uk", "bbc.co.uk"},
        {"www.bbc.co.uk", "bbc.co.uk"},
        {"itv.co.uk", "itv.co.uk"},
        {"foo.github.io", "foo.github.io"},
        {"www.foo.github.io", "foo.github.io"},
        {"News.BBC.co.uk.", "bbc.co.uk"},
        {"www.b%62c.co.uk", "bbc.co.uk"}, // escapes decoded before the list is asked
        {"co.uk", ""},
        {"github.io", ""},
        {"com", ""},
        {"localhost", ""},
        {"127.0.0.1", ""},
        {"[::1]", ""},
        {"::1", ""},
        {"", ""},
    };
    for (const auto& [host, expected] : cases) {
        SCOPED_TRACE(host);
        EXPECT_EQ(asiocrawl::registrable_domain(host), expected);
    }
}

} // namespace
