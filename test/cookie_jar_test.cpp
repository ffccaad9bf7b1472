#include "cookie_jar.hpp"

#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <vector>

namespace {

using namespace asiocrawl::detail;
using clock_type = std::chrono::system_clock;

clock_type::time_point at(int year, int month, int day, int h = 0, int m = 0, int s = 0) {
    std::tm t{};
    t.tm_year = year - 1900;
    t.tm_mon = month - 1;
    t.tm_mday = day;
    t.tm_hour = h;
    t.tm_min = m;
    t.tm_sec = s;
    return clock_type::from_time_t(timegm(&t));
}

const auto now = at(2025, 6, 1, 12);

cookie_target http(std::string_view host, std::string_view path = "/") {
    return {"http", host, path};
}
cookie_target https(std::string_view host, std::string_view path = "/") {
    return {"https", host, path};
}

TEST(CookieDate, Rfc6265Algorithm) {
    struct row {
        std::string_view text;
        std::optional<clock_type::time_point> expected;
    };
    const std::vector<row> rows{
        {"Wed, 21 Oct 2015 07:28:00 GMT", at(2015, 10, 21, 7, 28)},
        {"Wednesday, 21-Oct-15 07:28:00 GMT", at(2015, 10, 21, 7, 28)},
        {"Wed Oct 21 07:28:00 2015", at(2015, 10, 21, 7, 28)},
        {"21 october 1999 1:2:3", at(1999, 10, 21, 1, 2, 3)},
        {"Thu, 01 Jan 70 00:00:00 GMT", at(1970, 1, 1)},
        {"Sat, 01 Jan 2000 00:00:00", at(2000, 1, 1)},
        {"Wed, 21 Oct 2015 25:28:00 GMT", std::nullopt},
        {"Wed, 31 Feb 2015 07:28:00 GMT", std::nullopt},
        {"Wed, 21 Foo 2015 07:28:00 GMT", std::nullopt},
        {"21 Oct 2015", std::nullopt},
        {"Wed, 21 Oct 4070 07:28:00 GMT", at(2200, 1, 1)}, // the last date the clock holds
        {"", std::nullopt},
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.text);
        EXPECT_EQ(parse_cookie_date(r.text), r.expected);
    }
}

TEST(CookieMatching, DomainAndPath) {
    EXPECT_TRUE(domain_matches("example.com", "example.com"));
    EXPECT_TRUE(domain_matches("www.example.com", "example.com"));
    EXPECT_FALSE(domain_matches("badexample.com", "example.com"));
    EXPECT_FALSE(domain_matches("example.com", "www.example.com"));
    EXPECT_FALSE(domain_matches("1.2.3.4", "2.3.4"));
    EXPECT_TRUE(path_matches("/a/b", "/a"));
    EXPECT_TRUE(path_matches("/a/b", "/a/"));
    EXPECT_TRUE(path_matches("/a", "/a"));
    EXPECT_FALSE(path_matches("/ab", "/a"));
    EXPECT_FALSE(path_matches("/", "/a"));
}

TEST(CookieJar, SendsBackWhatWasSetWhereItApplies) {
    cookie_jar jar;
    EXPECT_TRUE(jar.set_cookie(http("www.example.com", "/dir/page"), "sid=abc", now));
    EXPECT_TRUE(jar.set_cookie(http("www.example.com", "/"), "lang=en; Path=/; Domain=.example.com", now));
    EXPECT_TRUE(jar.set_cookie(http("www.example.com", "/"), "deep=1; path=/dir/sub", now));
    EXPECT_EQ(jar.cookie_header(http("www.example.com", "/dir/other"), now), "sid=abc; lang=en");
    EXPECT_EQ(jar.cookie_header(http("www.example.com", "/dir/sub/x"), now), "deep=1; sid=abc; lang=en");
    EXPECT_EQ(jar.cookie_header(http("news.example.com", "/dir/x"), now), "lang=en")
        << "host-only stays home";
    EXPECT_EQ(jar.cookie_header(http("www.example.com", "/"), now), "lang=en") << "default path is /dir";
    EXPECT_EQ(jar.cookie_header(http("example.org", "/"), now), "");
}

TEST(CookieJar, ReplacesByNameDomainAndPathAndDeletesByExpiry) {
    cookie_jar jar;
    jar.set_cookie(http("h.example"), "a=1", now);
    jar.set_cookie(http("h.example"), "a=2", now);
    EXPECT_EQ(jar.cookie_header(http("h.example"), now), "a=2");
    EXPECT_EQ(jar.size(), 1u);
    jar.set_cookie(http("h.example"), "a=3; Max-Age=0", now);
    EXPECT_EQ(jar.cookie_header(http("h.example"), now), "");
    jar.set_cookie(http("h.example"), "b=1; Expires=Thu, 01 Jan 1970 00:00:01 GMT", now);
    EXPECT_EQ(jar.size(), 0u);
}

TEST(CookieJar, ExpiresAndMaxAge) {
    cookie_jar jar;
    jar.set_cookie(http("h.example"), "short=1; Max-Age=60", now);
    jar.set_cookie(http("h.example"), "dated=1; Expires=Sun, 01 Jun 2025 13:00:00 GMT", now);
    jar.set_cookie(http("h.example"), "both=1; Expires=Sun, 01 Jun 2025 13:00:00 GMT; Max-Age=1", now);
    jar.set_cookie(http("h.example"), "session=1", now);
    EXPECT_EQ(jar.cookie_header(http("h.example"), now), "short=1; dated=1; both=1; session=1");
    EXPECT_EQ(jar.cookie_header(http("h.example"), now + std::chrono::seconds(30)),
              "short=1; dated=1; session=1");
    EXPECT_EQ(jar.cookie_header(http("h.example"), now + std::chrono::minutes(30)), "dated=1; session=1");
    EXPECT_EQ(jar.cookie_header(http("h.example"), now + std::chrono::hours(2)), "session=1");
}

TEST(CookieJar, NoCookieOutlivesFourHundredDays) {
    cookie_jar jar;
    jar.set_cookie(http("h.example"), "far=1; Expires=Wed, 21 Oct 4070 07:28:00 GMT", now);
    jar.set_cookie(http("h.example"), "long=1; Max-Age=999999999999999999999", now);
    for (const auto& c : jar.all()) {
        ASSERT_TRUE(c.expires.has_value());
        EXPECT_EQ(*c.expires, now + std::chrono::hours(400 * 24)) << c.name;
    }
    EXPECT_EQ(jar.size(), 2u);
}

TEST(CookieJar, SecureCookiesGoOnlyOverHttpsAndComeOnlyFromIt) {
    cookie_jar jar;
    EXPECT_FALSE(jar.set_cookie(http("h.example"), "s=1; Secure", now));
    EXPECT_TRUE(jar.set_cookie(https("h.example"), "s=1; Secure; HttpOnly", now));
    EXPECT_EQ(jar.cookie_header(http("h.example"), now), "");
    EXPECT_EQ(jar.cookie_header(https("h.example"), now), "s=1");
    ASSERT_EQ(jar.all().size(), 1u);
    EXPECT_TRUE(jar.all()[0].http_only);
}

TEST(CookieJar, RefusesForeignAndPublicSuffixDomains) {
    cookie_jar jar;
    EXPECT_FALSE(jar.set_cookie(http("www.example.com"), "a=1; Domain=other.com", now));
    EXPECT_FALSE(jar.set_cookie(http("www.example.com"), "a=1; Domain=www2.example.com", now));
    EXPECT_FALSE(jar.set_cookie(http("www.example.com"), "a=1; Domain=com", now));
    EXPECT_FALSE(jar.set_cookie(http("foo.co.uk"), "a=1; Domain=co.uk", now));
    EXPECT_FALSE(jar.set_cookie(http("a.github.io"), "a=1; Domain=github.io", now));
    EXPECT_TRUE(jar.set_cookie(http("a.github.io"), "a=1; Domain=a.github.io", now));
    EXPECT_EQ(jar.cookie_header(http("b.a.github.io"), now), "a=1");
    EXPECT_EQ(jar.cookie_header(http("b.github.io"), now), "");
    EXPECT_FALSE(jar.set_cookie(http("1.2.3.4"), "a=1; Domain=2.3.4", now));
}

TEST(CookieJar, IgnoresMalformedCookies) {
    cookie_jar jar;
    EXPECT_FALSE(jar.set_cookie(http("h.example"), "novalue", now));
    EXPECT_FALSE(jar.set_cookie(http("h.example"), "=value", now));
    EXPECT_FALSE(jar.set_cookie(http("h.example"), "a=b\r\nX-Injected: 1", now));
    EXPECT_FALSE(jar.set_cookie(http("h.example"), "big=" + std::string(5000, 'x'), now));
    EXPECT_TRUE(jar.set_cookie(http("h.example"), " spaced = value ; SameSite=Strict; Path=", now));
    EXPECT_EQ(jar.cookie_header(http("h.example"), now), "spaced=value");
}

TEST(CookieJar, BoundsAHostileServer) {
    cookie_jar jar;
    for (int i = 0; i < 200; ++i)
        jar.set_cookie(http("h.example"), "c" + std::to_string(i) + "=1", now + std::chrono::seconds(i));
    EXPECT_EQ(jar.size(), cookie_jar::max_per_domain);
    EXPECT_EQ(jar.cookie_header(http("h.example"), now + std::chrono::hours(1)).find("c0="),
              std::string::npos)
        << "the oldest went first";
    for (int i = 0; i < 4000; ++i)
        jar.set_cookie(http("h" + std::to_string(i) + ".example"), "a=1", now);
    EXPECT_EQ(jar.size(), cookie_jar::max_cookies);
}

TEST(CookieJar, NetscapeFormatRoundTrip) {
    const std::string text = "# Netscape HTTP Cookie File\n"
                             ".example.com\tTRUE\t/\tFALSE\t0\tsession\tone\n"
                             "www.example.com\tFALSE\t/docs\tTRUE\t1893456000\tsecure\ttwo\n"
                             "#HttpOnly_www.example.com\tFALSE\t/\tFALSE\t1893456000\tho\tthree\n"
                             "expired.example\tFALSE\t/\tFALSE\t1000\told\tgone\n"
                             "malformed line\n"
                             "\n";
    cookie_jar jar;
    EXPECT_EQ(jar.load_netscape(text, now), 3u);
    EXPECT_EQ(jar.cookie_header(https("www.example.com", "/docs/a"), now),
              "secure=two; session=one; ho=three");
    EXPECT_EQ(jar.cookie_header(http("a.example.com", "/"), now), "session=one");
    const std::string written = jar.to_netscape(now);
    EXPECT_NE(written.find(".example.com\tTRUE\t/\tFALSE\t0\tsession\tone\n"), std::string::npos) << written;
    EXPECT_NE(written.find("www.example.com\tFALSE\t/docs\tTRUE\t1893456000\tsecure\ttwo\n"),
              std::string::npos);
    EXPECT_NE(written.find("#HttpOnly_www.example.com\tFALSE\t/\tFALSE\t1893456000\tho\tthree\n"),
              std::string::npos);
    cookie_jar again;
    EXPECT_EQ(again.load_netscape(written, now), 3u);
    EXPECT_EQ(again.to_netscape(now), written);
}

} // namespace
