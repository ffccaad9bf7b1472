#include "http/fetch_settings.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace asiocrawl;
using namespace asiocrawl::detail;

TEST(HeaderOption, AcceptsFieldsAndRefusesWhatTheFetcherOwns) {
    struct row {
        std::string_view text;
        std::string_view name; // "" when refused
        std::string_view value;
    };
    const std::vector<row> rows{
        {"X-Token: abc", "X-Token", "abc"},
        {"Accept-Language:fr, en;q=0.5 ", "Accept-Language", "fr, en;q=0.5"},
        {"User-Agent: MyBot/1.0", "User-Agent", "MyBot/1.0"},
        {"Cookie: a=b", "Cookie", "a=b"},
        {"Empty:", "Empty", ""},
        {"Host: other.example", "", ""},
        {"host: other.example", "", ""},
        {"Content-Length: 5", "", ""},
        {"Authorization: Basic eDp5", "", ""},
        {"Proxy-Authorization: Basic eDp5", "", ""},
        {"Connection: close", "", ""},
        {"Transfer-Encoding: chunked", "", ""},
        {"Upgrade: h2c", "", ""},
        {"TE: trailers", "", ""},
        {"X-Evil: a\r\nHost: b", "", ""},
        {"No colon", "", ""},
        {": value", "", ""},
        {"Bad Name: x", "", ""},
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.text);
        const auto parsed = parse_header_option(r.text);
        if (r.name.empty()) {
            EXPECT_FALSE(parsed.field);
            EXPECT_FALSE(parsed.problem.empty());
            continue;
        }
        ASSERT_TRUE(parsed.field) << parsed.problem;
        EXPECT_EQ(parsed.field->name, r.name);
        EXPECT_EQ(parsed.field->value, r.value);
    }
}

TEST(Credentials, OriginKeysAndBasicValues) {
    EXPECT_EQ(origin_key("https://Example.COM"), "https://example.com:443");
    EXPECT_EQ(origin_key("http://example.com:80/path?q"), "http://example.com:80");
    EXPECT_EQ(origin_key("http://user:pw@example.com:8080/"), "http://example.com:8080");
    EXPECT_EQ(origin_key("http://fa\xc3\x9f.example/"), "http://xn--fa-hia.example:80");
    EXPECT_EQ(origin_key("http://[::1]:8080"), "http://::1:8080");
    EXPECT_EQ(origin_key("ftp://example.com"), std::nullopt);
    EXPECT_EQ(origin_key("example.com"), std::nullopt);
    EXPECT_EQ(basic_authorization("Aladdin:open sesame"), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
    EXPECT_EQ(basic_authorization("a:b"), "Basic YTpi");
    EXPECT_EQ(basic_authorization("ab:"), "Basic YWI6");
}

TEST(Credentials, TakenFromRootsBeforeNormalizationDropsThem) {
    const auto found =
        credentials_in_roots({"https://alice:s%40cret@Example.com/start", "http://plain.example/",
                              "http://bob@other.example:8080/", "dave:pw@bare.example/x"});
    EXPECT_EQ(found, (std::map<std::string, std::string>{{"https://example.com:443", "alice:s@cret"},
                                                         {"http://other.example:8080", "bob:"},
                                                         {"http://bare.example:80", "dave:pw"}}));
    crawler_config config;
    config.roots = {"https://alice:pw@example.com/"};
    config.fetch.credentials["https://example.com"] = "carol:configured";
    const auto merged = with_root_credentials(config);
    EXPECT_EQ(merged.fetch.credentials.size(), 1u) << "the configured entry wins";
    EXPECT_EQ(merged.fetch.credentials.at("https://example.com"), "carol:configured");
}

TEST(Proxy, ParsesProxyUrls) {
    auto proxy = parse_proxy("http://user:p%40ss@proxy.example:3128/");
    ASSERT_TRUE(proxy);
    EXPECT_EQ(proxy->host, "proxy.example");
    EXPECT_EQ(proxy->port, "3128");
    EXPECT_EQ(proxy->authorization, basic_authorization("user:p@ss"));
    EXPECT_EQ(proxy->display, "http://proxy.example:3128") << "no credentials in what may be logged";
    proxy = parse_proxy("10.0.0.1:8080");
    ASSERT_TRUE(proxy);
    EXPECT_EQ(proxy->host, "10.0.0.1");
    EXPECT_TRUE(proxy->authorization.empty());
    proxy = parse_proxy("http://[::1]");
    ASSERT_TRUE(proxy);
    EXPECT_EQ(proxy->host, "::1");
    EXPECT_EQ(proxy->port, "80");
    std::string why;
    EXPECT_FALSE(parse_proxy("https://proxy.example:443", &why));
    EXPECT_NE(why.find("http://"), std::string::npos);
    EXPECT_FALSE(parse_proxy("http://proxy.example:99999"));
    EXPECT_FALSE(parse_proxy("http://proxy.example/path"));
    EXPECT_FALSE(parse_proxy(""));
}

TEST(Proxy, NoProxyMatching) {
    const std::vector<std::string> list{"example.com", ".internal",      "*.corp.example",
                                        "10.0.0.0/8",  "localhost:8080", "::1"};
    EXPECT_TRUE(bypasses_proxy(list, "example.com", "80"));
    EXPECT_TRUE(bypasses_proxy(list, "www.example.com", "443"));
    EXPECT_FALSE(bypasses_proxy(list, "badexample.com", "80"));
    EXPECT_TRUE(bypasses_proxy(list, "a.internal", "80"));
    EXPECT_TRUE(bypasses_proxy(list, "x.corp.example", "80"));
    EXPECT_TRUE(bypasses_proxy(list, "10.1.2.3", "80"));
    EXPECT_FALSE(bypasses_proxy(list, "11.1.2.3", "80"));
    EXPECT_TRUE(bypasses_proxy(list, "localhost", "8080"));
    EXPECT_FALSE(bypasses_proxy(list, "localhost", "80"));
    EXPECT_TRUE(bypasses_proxy(list, "::1", "80"));
    EXPECT_TRUE(bypasses_proxy({"*"}, "anything.example", "80"));
    EXPECT_FALSE(bypasses_proxy({}, "anything.example", "80"));
}

TEST(Proxy, EnvironmentVariablesAsCurlReadsThem) {
    const std::vector<std::string> env{"http_proxy=http://p1:3128", "HTTP_PROXY=http://ignored:1",
                                       "HTTPS_PROXY=http://p2:3128", "no_proxy=localhost, .internal ,",
                                       "PATH=/usr/bin"};
    fetch_config fetch;
    const auto used = apply_proxy_environment(fetch, env, false, false);
    EXPECT_EQ(fetch.http_proxy, "http://p1:3128");
    EXPECT_EQ(fetch.https_proxy, "http://p2:3128");
    EXPECT_EQ(fetch.proxy, "");
    EXPECT_EQ(fetch.no_proxy, (std::vector<std::string>{"localhost", ".internal"}));
    EXPECT_EQ(used, (std::vector<std::string>{"http_proxy", "HTTPS_PROXY", "no_proxy"}));

    fetch_config configured;
    configured.proxy = "http://mine:1";
    apply_proxy_environment(configured, env, true, true);
    EXPECT_EQ(configured.http_proxy, "") << "a configured proxy leaves the environment alone";
    EXPECT_TRUE(configured.no_proxy.empty());
}

TEST(FetchSettings, ProblemsNameTheirKeys) {
    fetch_config fetch;
    EXPECT_TRUE(fetch_settings_problems(fetch).empty());
    fetch.headers = {"Host: x", "X-Ok: 1"};
    fetch.credentials["ftp://x"] = "a:b";
    fetch.credentials["https://ok.example"] = "nocolon";
    fetch.proxy = "https://user:secret@p:1";
    fetch.dns.servers = {"127.0.0.1:53", "resolver.example"};
    fetch.dns.min_ttl = std::chrono::hours(2);
    const auto problems = fetch_settings_problems(fetch);
    std::string all;
    for (const auto& p : problems)
        all += p + "\n";
    EXPECT_NE(all.find("fetch.headers: Host"), std::string::npos) << all;
    EXPECT_NE(all.find("fetch.credentials: \"ftp://x\""), std::string::npos) << all;
    EXPECT_NE(all.find("fetch.credentials[\"https://ok.example\"] must be"), std::string::npos) << all;
    EXPECT_NE(all.find("fetch.proxy: only http://"), std::string::npos) << all;
    EXPECT_EQ(all.find("secret"), std::string::npos) << "a proxy password is never repeated";
    EXPECT_NE(all.find("fetch.dns.servers: \"resolver.example\""), std::string::npos) << all;
    EXPECT_NE(all.find("fetch.dns.min_ttl"), std::string::npos) << all;
    EXPECT_EQ(problems.size(), 6u) << all;
    crawler_config config;
    config.roots = {"http://x/"};
    config.fetch.headers = {"Connection: close"};
    EXPECT_EQ(validate(config).size(), 1u) << "validate() includes these checks";
}

TEST(Descriptors, ShortfallOnlyWhenWorkersAndOwnExceedTheLimit) {
    struct row {
        std::size_t max_tasks, own;
        std::uint64_t soft, hard;
        bool warns;
    };
    const row rows[] = {
        {100, 32, 1024, 1024, false}, {992, 32, 1024, 1024, false},  {993, 32, 1024, 1024, true},
        {500, 32, 64, 64, true},      {500, 112, 1024, 4096, false}, {5000, 32, 1024, 524288, true},
    };
    for (const auto& r : rows) {
        const auto warning = descriptor_shortfall(r.max_tasks, r.own, r.soft, r.hard);
        EXPECT_EQ(warning.has_value(), r.warns) << r.max_tasks << " " << r.soft;
    }
    const auto low = descriptor_shortfall(500, 32, 64, 64).value();
    EXPECT_NE(low.find("max_tasks 500"), std::string::npos) << low;
    EXPECT_NE(low.find("limit of 64 open files"), std::string::npos) << low;
    EXPECT_NE(low.find("at most about 32 fetches"), std::string::npos) << low;
    const auto raisable = descriptor_shortfall(5000, 32, 1024, 524288).value();
    EXPECT_NE(raisable.find("ulimit -n 524288"), std::string::npos) << raisable;
}

} // namespace
