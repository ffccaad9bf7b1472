#include "http/cookie_jar.hpp"

#include "support/files.hpp"
#include "url/url.hpp"

#include <boost/url/parse.hpp>

#include <gtest/gtest.h>

#include <iostream>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using asiocrawl::test::read_file;

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

// RFC 6265bis 4.1.3 and 5.7, as browsers enforce them.
TEST(CookieJar, SecureAndHostPrefixesAreEnforced) {
    cookie_jar jar;
    EXPECT_FALSE(jar.set_cookie(https("h.example"), "__Secure-a=1", now)) << "not Secure";
    EXPECT_FALSE(jar.set_cookie(http("h.example"), "__Secure-a=1; Secure", now)) << "not from https";
    EXPECT_TRUE(jar.set_cookie(https("h.example"), "__Secure-a=1; Secure; Domain=h.example", now));
    EXPECT_FALSE(jar.set_cookie(https("h.example"), "__secure-b=1", now)) << "prefixes ignore case";
    EXPECT_FALSE(jar.set_cookie(https("h.example"), "__Host-c=1; Path=/", now)) << "not Secure";
    EXPECT_FALSE(jar.set_cookie(https("h.example"), "__Host-c=1; Secure; Path=/; Domain=h.example", now))
        << "a Domain attribute";
    EXPECT_FALSE(jar.set_cookie(https("h.example", "/a/b"), "__Host-c=1; Secure", now)) << "path /a, not /";
    EXPECT_TRUE(jar.set_cookie(https("h.example", "/a/b"), "__Host-c=1; Secure; Path=/", now));
    EXPECT_TRUE(jar.set_cookie(https("h.example"), "__Hostile=1", now)) << "no prefix";
    EXPECT_EQ(jar.cookie_header(https("h.example"), now), "__Secure-a=1; __Host-c=1; __Hostile=1");
}

TEST(CookieJar, AnInsecureOriginLeavesSecureCookiesAlone) {
    cookie_jar jar;
    ASSERT_TRUE(
        jar.set_cookie(https("www.h.example"), "id=secret; Secure; Domain=h.example; Path=/app", now));
    EXPECT_FALSE(jar.set_cookie(http("www.h.example"), "id=forged; Path=/app/x", now)) << "would shadow it";
    EXPECT_FALSE(
        jar.set_cookie(http("a.www.h.example"), "id=forged; Domain=a.www.h.example; Path=/app", now));
    EXPECT_TRUE(jar.set_cookie(http("www.h.example"), "id=other; Path=/", now)) << "/ is outside /app";
    EXPECT_TRUE(jar.set_cookie(http("other.example"), "id=x; Path=/app", now)) << "another domain";
    EXPECT_TRUE(jar.set_cookie(http("www.h.example"), "other=1; Path=/app", now)) << "another name";
    EXPECT_TRUE(jar.set_cookie(https("www.h.example"), "id=new; Path=/app/x", now)) << "https may";
    EXPECT_EQ(jar.cookie_header(https("www.h.example", "/app/x"), now),
              "id=new; id=secret; other=1; id=other");
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

// ---- The http-state suite (test/data/http-state/, see test/data/README.md) ----
// Each NNNN-test file holds the header fields a server at http://home.example.org:8888/cookie-parser?NNNN
// answers with (Set-Cookie fields, maybe a Location); the browser follows the Location (by default
// /cookie-parser-result?NNNN) and the Cookie field it sends there is in NNNN-expected (empty: none).

std::string lowercase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; });
    return text;
}

struct http_state_case {
    std::string name;
    std::vector<std::string> set_cookies;
    std::string result_url = "/cookie-parser-result";
    std::string expected;
};

// "Name: value" lines as the suite's server reads them: the name is the first word before a ':', the value
// the rest after blanks; a receiving HTTP parser drops trailing blanks (and a stray CR) from the value.
std::vector<std::pair<std::string, std::string>> header_lines(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> fields;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0 ||
            line.substr(0, colon).find_first_of(" \t") != line.npos)
            continue;
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
            value.remove_suffix(1);
        fields.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    }
    return fields;
}

std::vector<http_state_case> load_http_state() {
    const std::filesystem::path dir = std::filesystem::path(ASIOCRAWL_SOURCE_DIR) / "test/data/http-state";
    std::vector<http_state_case> cases;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string file = entry.path().filename().string();
        if (!file.ends_with("-test"))
            continue;
        http_state_case c;
        c.name = file.substr(0, file.size() - 5);
        bool has_location = false;
        for (auto& [name, value] : header_lines(read_file(entry.path()))) {
            if (lowercase(name) == "set-cookie")
                c.set_cookies.push_back(std::move(value));
            else if (lowercase(name) == "location") {
                c.result_url = std::move(value);
                has_location = true;
            }
        }
        if (!has_location)
            c.result_url += "?" + c.name;
        for (auto& [name, value] : header_lines(read_file(dir / (c.name + "-expected"))))
            if (name == "Cookie")
                c.expected = std::move(value);
        cases.push_back(std::move(c));
    }
    std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return cases;
}

struct http_state_difference {
    std::string_view name;
    std::string_view ours;
    std::string_view why;
};

const http_state_difference http_state_differences[] = {
#include "data/http_state_differences.inc"
};

// What the browser sends to the suite's result URL after the Set-Cookie fields of one test.
std::string run_http_state(const http_state_case& c) {
    // The suite's dates were written in 2017 ("Expires=... 2019" is a future date there).
    const auto suite_now = at(2017, 8, 9, 12);
    cookie_jar jar;
    for (const auto& field : c.set_cookies)
        jar.set_cookie(http("home.example.org", "/cookie-parser"), field, suite_now);
    // The crawl requests the Location in its canonical form (lowercase host, "%6F" as "o"): so does the test.
    const std::string request_url = "http://home.example.org:8888/cookie-parser?" + c.name;
    const auto request = boost::urls::parse_uri(request_url).value();
    const auto result = asiocrawl::normalize_reference(request, c.result_url);
    if (!result)
        return "(no URL: " + c.result_url + ")";
    const std::string host(result->encoded_host());
    const std::string path(result->encoded_path());
    return jar.cookie_header(http(host, path), suite_now + std::chrono::seconds(1));
}

TEST(HttpState, EveryCaseOfTheSuite) {
    const auto cases = load_http_state();
    ASSERT_EQ(cases.size(), 222u) << "test/data/http-state holds the whole suite";
    std::map<std::string_view, const http_state_difference*> differences;
    for (const auto& d : http_state_differences)
        differences[d.name] = &d;
    std::size_t passed = 0;
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const auto got = run_http_state(c);
        if (const auto it = differences.find(c.name); it != differences.end()) {
            EXPECT_NE(got, c.expected) << "listed as a difference but now passes: remove it from the list";
            EXPECT_EQ(got, it->second->ours) << it->second->why;
            continue;
        }
        EXPECT_EQ(got, c.expected);
        passed += got == c.expected;
    }
    std::cout << "http-state: " << passed << " of " << cases.size() << " cases as the suite expects, "
              << std::size(http_state_differences) << " deliberately different\n";
}

} // namespace
