#include "policy/redirect.hpp"

#include <asiocrawl/error.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string_view>
#include <vector>

namespace {

using asiocrawl::error;

TEST(IsRedirectStatus, OnlyTheFollowedStatuses) {
    const std::vector<std::pair<int, bool>> cases = {
        {301, true},  {302, true},  {303, true},  {307, true},   {308, true},  {300, false},
        {304, false}, {305, false}, {306, false}, {309, false},  {200, false}, {204, false},
        {404, false}, {500, false}, {0, false},   {-301, false},
    };
    for (const auto& [status, expected] : cases) {
        SCOPED_TRACE(status);
        EXPECT_EQ(asiocrawl::is_redirect_status(status), expected);
    }
}

struct redirect_case {
    std::string_view request_url;
    std::optional<std::string_view> location;
    int redirects_left;
    std::optional<std::string_view> expected_target;
    error expected_error{};
};

constexpr std::string_view request = "http://example.com/dir/page?x=1";

TEST(DecideRedirect, Table) {
    const std::vector<redirect_case> cases = {
        // relative, absolute and protocol-relative Locations, normalized
        {request, "next", 5, "http://example.com/dir/next"},
        {request, "/other#frag", 5, "http://example.com/other"},
        {request, "../up?y=2", 5, "http://example.com/up?y=2"},
        {request, "?y=2", 5, "http://example.com/dir/page?y=2"},
        {request, "HTTPS://Example.com:443/secure", 5, "https://example.com/secure"},
        {request, "http://other.example/", 5, "http://other.example/"},
        {request, "//cdn.example/a b", 5, "http://cdn.example/a%20b"},
        {"https://example.com/", "//cdn.example/x", 5, "https://cdn.example/x"},
        {request, "  /trimmed  ", 1, "http://example.com/trimmed"},
        {request, "http://example.com/dir/page?x=1", 5, "http://example.com/dir/page?x=1"},
        // missing or empty Location
        {request, std::nullopt, 5, std::nullopt, error::missing_location},
        {request, "", 5, std::nullopt, error::missing_location},
        {request, " \t\r\n", 5, std::nullopt, error::missing_location},
        {request, std::nullopt, 0, std::nullopt, error::missing_location},
        // Locations that lead nowhere we can fetch
        {request, "http://[bad", 5, std::nullopt, error::invalid_location},
        {request, "http://example.com:port/", 5, std::nullopt, error::invalid_location},
        {request, "http://example.com:99999/", 5, std::nullopt, error::invalid_location},
        {request, "http:///nohost", 5, "http://nohost/", {}}, // slashes repaired, as browsers do
        {request, "http://../", 5, std::nullopt, error::invalid_location},
        {request, "mailto:x", 5, std::nullopt, error::invalid_location},
        {request, "ftp://h/", 5, std::nullopt, error::invalid_location},
        {request, "javascript:alert(1)", 0, std::nullopt, error::invalid_location},
        // the budget: the target is reported even when the chain has to stop
        {request, "next", 1, "http://example.com/dir/next"},
        {request, "next", 0, "http://example.com/dir/next", error::redirect_limit},
        {request, "next", -1, "http://example.com/dir/next", error::redirect_limit},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message()
                     << "location \"" << c.location.value_or("<none>") << "\" budget " << c.redirects_left);
        const auto decision =
            asiocrawl::decide_redirect(boost::urls::url_view(c.request_url), c.location, c.redirects_left);
        if (c.expected_error == error{}) {
            EXPECT_FALSE(decision.error) << decision.error.message();
        } else {
            EXPECT_EQ(decision.error, make_error_code(c.expected_error)) << decision.error.message();
        }
        ASSERT_EQ(decision.target.has_value(), c.expected_target.has_value());
        if (c.expected_target) {
            EXPECT_EQ(decision.target->buffer(), *c.expected_target);
        }
    }
}

TEST(DecideRedirect, MarksHttpsToHttpAsADowngrade) {
    struct row {
        std::string_view request_url;
        std::string_view location;
        int redirects_left;
        bool downgrade;
    };
    const std::vector<row> rows = {
        {"https://a.example/", "http://a.example/", 5, true},
        {"https://a.example/x", "http://b.example/y", 5, true},
        {"HTTPS://a.example/", "HTTP://b.example/", 5, true},
        {"https://a.example/", "//b.example/", 5, false}, // the request's scheme: https
        {"https://a.example/", "/next", 5, false},
        {"https://a.example/", "https://b.example/", 5, false},
        {"http://a.example/", "https://a.example/", 5, false}, // an upgrade
        {"http://a.example/", "http://b.example/", 5, false},
        {"https://a.example/", "http://b.example/", 0, true}, // reported with the target, even at the limit
        {"https://a.example/", "ftp://b.example/", 5, false}, // no target
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(::testing::Message() << r.request_url << " -> " << r.location);
        const auto decision =
            asiocrawl::decide_redirect(boost::urls::url_view(r.request_url), r.location, r.redirects_left);
        EXPECT_EQ(decision.downgrade, r.downgrade);
    }
}

} // namespace
