// HSTS (RFC 6797): the Strict-Transport-Security parser against section 6.1's rules, the known-hosts store
// (congruent and superdomain matches, expiry, max-age=0, IP literals), the http -> https upgrade, and the
// wget2 file format both ways.
#include "policy/hsts.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

using namespace asiocrawl::detail;
using namespace std::chrono_literals;

namespace {

const hsts_store::clock::time_point t0 = hsts_store::clock::time_point{} + 1'700'000'000s;

struct sts_case {
    const char* value;
    bool valid;
    std::uint64_t max_age = 0;
    bool include_subdomains = false;
};

} // namespace

TEST(StrictTransportSecurity, ParsesAsSection61Says) {
    const std::vector<sts_case> table{
        {"max-age=31536000", true, 31536000},
        {"max-age=31536000; includeSubDomains", true, 31536000, true},
        {"  MAX-AGE = 10 ;INCLUDESUBDOMAINS ", true, 10, true},
        {"max-age=\"15768000\" ; includeSubDomains", true, 15768000, true}, // a quoted value (6.1.1)
        {"includeSubDomains; max-age=5", true, 5, true},                    // any order
        {"max-age=0", true, 0},
        {"max-age=7;;; ;", true, 7},                                      // empty directives
        {"max-age=7; preload", true, 7},                                  // unknown: ignored
        {"max-age=7; foo=\"a;b \\\" c\"; bar=baz", true, 7},              // unknown with values
        {"max-age=99999999999999999999999", true, 18446744073709551615u}, // saturates
        {"", false},
        {"includeSubDomains", false}, // max-age is required
        {"max-age", false},           // without a value
        {"max-age=", false},
        {"max-age=-1", false},
        {"max-age=1.5", false},
        {"max-age=\"12a\"", false},
        {"max-age=1; max-age=2", false},                            // duplicate directives
        {"max-age=1; includeSubDomains; includesubdomains", false}, // case-insensitive duplicates
        {"max-age=1; foo; foo", false},                             // an unknown one twice too
        {"max-age=1; includeSubDomains=yes", false},                // valueless directive with a value
        {"max-age=1 includeSubDomains", false},                     // no separator
        {"max-age=\"1", false},                                     // unterminated quoted-string
        {"max-age=1; @bad", false},                                 // not a token
        {"max-age=1, max-age=2", false},                            // two fields joined by a list comma
    };
    for (const auto& c : table) {
        const auto parsed = parse_strict_transport_security(c.value);
        EXPECT_EQ(parsed.has_value(), c.valid) << c.value;
        if (parsed && c.valid) {
            EXPECT_EQ(parsed->max_age, c.max_age) << c.value;
            EXPECT_EQ(parsed->include_subdomains, c.include_subdomains) << c.value;
        }
    }
}

TEST(HstsStore, IpLiteralsAreNeverKnownHosts) {
    for (const char* host : {"127.0.0.1", "[::1]", "::1", "10.0.0.1."})
        EXPECT_TRUE(is_ip_literal_host(host)) << host;
    for (const char* host : {"example.com", "127.0.0.1.example", "localhost", "1.2.3"})
        EXPECT_FALSE(is_ip_literal_host(host)) << host;
    hsts_store store;
    EXPECT_FALSE(store.observe("127.0.0.1", 443, "max-age=100", t0));
    EXPECT_FALSE(store.observe("[::1]", 443, "max-age=100", t0));
    EXPECT_EQ(store.size(), 0u);
}

TEST(HstsStore, CongruentAndSuperdomainMatches) {
    hsts_store store;
    EXPECT_TRUE(store.observe("example.com", 443, "max-age=100", t0));
    EXPECT_TRUE(store.observe("sub.example.org", 443, "max-age=100; includeSubDomains", t0));
    EXPECT_FALSE(store.observe("bad.example", 443, "max-age=1; max-age=2", t0)) << "invalid: ignored";
    struct lookup {
        const char* host;
        bool known;
    };
    for (const auto& [host, known] : std::vector<lookup>{
             {"example.com", true},
             {"EXAMPLE.COM.", true},
             {"www.example.com", false}, // no includeSubDomains
             {"sub.example.org", true},
             {"a.b.sub.example.org", true},
             {"example.org", false}, // a superdomain's entry covers subdomains, never the other way
             {"xsub.example.org", false},
             {"bad.example", false},
         })
        EXPECT_EQ(store.known(host, t0), known) << host;
}

TEST(HstsStore, ExpiryAndMaxAgeZero) {
    hsts_store store;
    store.observe("example.com", 443, "max-age=100; includeSubDomains", t0);
    EXPECT_TRUE(store.known("a.example.com", t0 + 99s));
    EXPECT_FALSE(store.known("a.example.com", t0 + 100s)) << "expired";
    store.observe("example.com", 443, "max-age=100", t0 + 50s); // updated: no longer includeSubDomains
    EXPECT_TRUE(store.known("example.com", t0 + 120s));
    EXPECT_FALSE(store.known("a.example.com", t0 + 60s));
    store.observe("example.com", 443, "max-age=0", t0 + 60s); // forgets (6.1.1)
    EXPECT_FALSE(store.known("example.com", t0 + 60s));
    EXPECT_EQ(store.size(), 0u);
}

TEST(HstsStore, UpgradesHttpUrlsOfKnownHosts) {
    hsts_store store;
    store.observe("example.com", 443, "max-age=100; includeSubDomains", t0);
    struct upgrade_case {
        const char* url;
        const char* upgraded; // nullptr: unchanged
    };
    for (const auto& [url, upgraded] : std::vector<upgrade_case>{
             {"http://example.com/a?b#c", "https://example.com/a?b#c"},
             {"http://example.com:80/", "https://example.com/"},                  // 80 -> 443 (the default)
             {"http://www.example.com:8080/x", "https://www.example.com:8080/x"}, // other ports kept
             {"HTTP://example.com/", "https://example.com/"},
             {"https://example.com/", nullptr},
             {"http://example.org/", nullptr},
             {"http://127.0.0.1/", nullptr},
             {"ftp://example.com/", nullptr},
         }) {
        const auto got = store.upgrade(url, t0);
        if (upgraded) {
            ASSERT_TRUE(got.has_value()) << url;
            EXPECT_EQ(*got, upgraded) << url;
        } else {
            EXPECT_FALSE(got.has_value()) << url << " -> " << got.value_or("");
        }
    }
    EXPECT_FALSE(store.upgrade("http://example.com/", t0 + 100s).has_value()) << "expired";
}

TEST(HstsStore, FullStoreRefusesNewHostsButUpdatesKnownOnes) {
    static_assert(hsts_store::default_max_hosts == 100'000);
    hsts_store store{10};
    for (std::size_t i = 0; i < 10; ++i)
        store.observe("h" + std::to_string(i) + ".example", 443, "max-age=100", t0);
    EXPECT_EQ(store.size(), 10u);
    store.observe("one.more.example", 443, "max-age=100", t0);
    EXPECT_EQ(store.size(), 10u);
    EXPECT_EQ(store.refused(), 1u);
    EXPECT_FALSE(store.known("one.more.example", t0));
    store.observe("h0.example", 443, "max-age=100; includeSubDomains", t0);
    EXPECT_TRUE(store.known("x.h0.example", t0));
    store.observe("h1.example", 443, "max-age=0", t0); // room again
    store.observe("one.more.example", 443, "max-age=100", t0);
    EXPECT_TRUE(store.known("one.more.example", t0));
}

TEST(HstsStore, Wget2FileFormatBothWays) {
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(t0.time_since_epoch()).count();
    std::istringstream in("#HSTS 1.0 file\n"
                          "#Generated by Wget2 2.1.0. Edit at your own risk.\n"
                          "# <hostname> <port> <incl. subdomains> <created> <max-age>\n"
                          "\n"
                          "github.com 443 1 " +
                          std::to_string(now_s - 10) +
                          " 31536000\n"
                          "old.example\t0\t0\t" +
                          std::to_string(now_s - 1000) +
                          "\t2000\n" // GNU Wget: tabs, port 0
                          "gone.example 443 0 " +
                          std::to_string(now_s - 1000) +
                          " 10\n" // expired
                          "127.0.0.1 443 0 " +
                          std::to_string(now_s) +
                          " 100\n" // IP literal: skipped
                          "broken line\n"
                          "bad.example 443 2 1 1\n"
                          "neg.example 443 0 1 -5\r\n");
    hsts_store store;
    const auto problems = store.load(in, t0);
    EXPECT_EQ(problems, (std::vector<std::string>{"line 9 is not \"host port 0|1 created max-age\"",
                                                  "line 10 is not \"host port 0|1 created max-age\"",
                                                  "line 11 has no max-age"}));
    EXPECT_EQ(store.size(), 2u);
    EXPECT_TRUE(store.known("api.github.com", t0));
    EXPECT_TRUE(store.known("old.example", t0));
    EXPECT_FALSE(store.known("x.old.example", t0));
    EXPECT_FALSE(store.known("gone.example", t0));

    std::ostringstream out;
    store.save(out, t0);
    EXPECT_EQ(out.str(), "#HSTS 1.0 file\n#Generated by asiocrawl. Edit at your own risk.\n"
                         "# <hostname> <port> <incl. subdomains> <created> <max-age>\n"
                         "github.com 443 1 " +
                             std::to_string(now_s - 10) +
                             " 31536000\n"
                             "old.example 443 0 " +
                             std::to_string(now_s - 1000) + " 2000\n");
    hsts_store again;
    std::istringstream back(out.str());
    EXPECT_TRUE(again.load(back, t0).empty());
    EXPECT_EQ(again.size(), 2u);
    std::ostringstream later;
    again.save(later, t0 + 1000s);
    EXPECT_EQ(later.str().find("old.example"), std::string::npos) << "expired entries are not written";
}
