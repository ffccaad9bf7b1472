#include <asiocrawl/scope.hpp>

#include <asiocrawl/url.hpp>

#include <gtest/gtest.h>

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

TEST(ScopeVerdict, Names) {
    const std::vector<std::pair<scope_verdict, std::string_view>> cases = {
        {in_scope, "in_scope"},
        {off_host, "off_host"},
        {excluded, "excluded"},
        {not_included, "not_included"},
    };
    for (const auto& [verdict, name] : cases) {
        EXPECT_EQ(asiocrawl::to_string(verdict), name);
    }
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
