#include "policy/page_directives.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string_view>

namespace {

using asiocrawl::canonical_link_target;
using asiocrawl::parse_x_robots_tag;
using asiocrawl::robots_directives;

constexpr robots_directives nothing{false, false};
constexpr robots_directives noindex{true, false};
constexpr robots_directives nofollow{false, true};
constexpr robots_directives both{true, true};

struct x_robots_case {
    std::string_view values;
    robots_directives expected;
};

TEST(XRobotsTag, AppliesWhatIsForEveryCrawlerOrNamesOurs) {
    const x_robots_case cases[] = {
        {"", nothing},
        {"noindex", noindex},
        {"noindex, nofollow", both},
        {"none", both},
        {"NoFollow", nofollow},
        {"all", nothing},
        {"asiocrawl: nofollow", nofollow},
        {"AsioCrawl : noindex, nofollow", both},
        {"googlebot: nofollow", nothing},
        {"otherbot: noindex, nofollow", nothing},
        {"noindex, otherbot: nofollow", noindex},
        // Google's rules that take a value are not user agents.
        {"unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow", nofollow},
        {"max-snippet: 20, noindex", noindex},
        {"asiocrawl: unavailable_after: 25 Jun 2010", nothing},
        // One field a line: a user agent named in one is not carried into the next.
        {"googlebot: noindex\nnofollow", nofollow},
        {"otherbot: none\nasiocrawl: noindex", noindex},
    };
    for (const auto& c : cases)
        EXPECT_EQ(parse_x_robots_tag(c.values, "asiocrawl"), c.expected) << c.values;
}

TEST(XRobotsTag, WithoutAProductTokenNoNamedGroupApplies) {
    EXPECT_EQ(parse_x_robots_tag("asiocrawl: noindex, nofollow", ""), nothing);
    EXPECT_EQ(parse_x_robots_tag("nofollow", ""), nofollow);
}

TEST(LinkHeader, FindsTheCanonicalTarget) {
    const std::pair<std::string_view, std::optional<std::string_view>> cases[] = {
        {"", std::nullopt},
        {"<https://a.test/p>; rel=\"canonical\"", "https://a.test/p"},
        {"<https://a.test/p>; rel=canonical", "https://a.test/p"},
        {"</p?a=1,2>;rel=\"Canonical\"", "/p?a=1,2"},
        {"</next>; rel=next, </c>; title=\"x, y; z\"; rel=\"alternate canonical\"", "/c"},
        {"</a>; rel=\"alternate\"; hreflang=de, </b>; rel=\"preload\"", std::nullopt},
        {"</a>; rel=\"canonicalx\"", std::nullopt},
        {"</first>; rel=canonical, </second>; rel=canonical", "/first"},
        {"</q>; title=\"a \\\" quote\"; rel=canonical", "/q"},
        {"<>; rel=canonical", ""},
        {"no brackets; rel=canonical", std::nullopt},
        {"</unclosed; rel=canonical", std::nullopt},
        {"</a> junk, </b>; rel=canonical", std::nullopt},
        {"</a>; rel=\"canonical", "/a"},
        {"</a>; rel", std::nullopt},
    };
    for (const auto& [value, expected] : cases)
        EXPECT_EQ(canonical_link_target(value), expected) << value;
}

} // namespace
