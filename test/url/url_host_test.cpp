#include "url/url_host.hpp"

#include <asiocrawl/error.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace asiocrawl::detail;

TEST(UrlHost, CanonicalHostNames) {
    struct row {
        std::string_view encoded;
        std::optional<std::string_view> canonical; // nullopt: invalid
    };
    const std::vector<row> rows{
        {"Example.COM", "example.com"},
        {"example.com.", "example.com."},
        {"fa%C3%9F.example", "xn--fa-hia.example"},
        {"%E2%98%83", "xn--n3h"},
        {"%EF%BC%A7%EF%BD%8F.com", "go.com"},
        {"xn--a", "xn--a"}, // ASCII labels are taken as written
        {"XN--ZCA", "xn--zca"},
        {"xn--a.%C3%9F", std::nullopt},
        {"a_b", "a_b"},
        {"0x7f.1", "127.0.0.1"},
        {"0x7F.0.0.0x1", "127.0.0.1"},
        {"2130706433", "127.0.0.1"},
        {"017700000001", "127.0.0.1"},
        {"1.2.3.4.nip.io", "1.2.3.4.nip.io"},
        {"1.2.3.4.5", std::nullopt},
        {"1.2.3.08", std::nullopt},
        {"%", std::nullopt},
        {"a%00b", std::nullopt},
        {"a%7Cb", std::nullopt},
        {"%FF", std::nullopt}, // not UTF-8
        {"", std::nullopt},
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.encoded);
        const auto result = canonical_host_name(r.encoded);
        if (!r.canonical) {
            EXPECT_FALSE(result.has_value()) << *result;
            continue;
        }
        ASSERT_TRUE(result.has_value()) << result.error().message();
        EXPECT_EQ(*result, *r.canonical);
    }
}

TEST(UrlHost, Ipv4NumberForms) {
    EXPECT_EQ(parse_ipv4_number_form("1"), 1u);
    EXPECT_EQ(parse_ipv4_number_form("1.2"), 0x01000002u);
    EXPECT_EQ(parse_ipv4_number_form("1.2.3"), 0x01020003u);
    EXPECT_EQ(parse_ipv4_number_form("255.255.255.255"), 0xffffffffu);
    EXPECT_EQ(parse_ipv4_number_form("0x"), 0u);
    EXPECT_EQ(parse_ipv4_number_form("1.2.3.4."), 0x01020304u);
    EXPECT_EQ(parse_ipv4_number_form("1.2.65536"), std::nullopt);
    EXPECT_EQ(parse_ipv4_number_form("256.1"), std::nullopt);
    EXPECT_EQ(parse_ipv4_number_form("1..2"), std::nullopt);
    EXPECT_EQ(parse_ipv4_number_form("99999999999999999999"), std::nullopt);
    EXPECT_TRUE(ends_in_a_number("a.1"));
    EXPECT_TRUE(ends_in_a_number("a.0x1f."));
    EXPECT_TRUE(ends_in_a_number("a.09"));
    EXPECT_FALSE(ends_in_a_number("1.a"));
    EXPECT_FALSE(ends_in_a_number("a.1x"));
    EXPECT_FALSE(ends_in_a_number("."));
}

TEST(UrlHost, FormsForTheUrlAndTheWire) {
    EXPECT_TRUE(starts_like_a_dotted_quad("1.2.3.4.nip.io"));
    EXPECT_TRUE(starts_like_a_dotted_quad("1.2.3.4a"));
    EXPECT_FALSE(starts_like_a_dotted_quad("1.2.3.4"));
    EXPECT_FALSE(starts_like_a_dotted_quad("01.2.3.4.x"));
    EXPECT_FALSE(starts_like_a_dotted_quad("a.1.2.3.4"));
    EXPECT_EQ(host_for_url("1.2.3.4.nip.io"), "%31.2.3.4.nip.io");
    EXPECT_EQ(host_for_url("a\"b"), "a%22b");
    EXPECT_EQ(host_for_url("a!b"), "a!b");
    EXPECT_EQ(host_for_wire("%31.2.3.4.nip.io"), "1.2.3.4.nip.io");
    EXPECT_EQ(host_for_wire("example.com"), "example.com");
    EXPECT_EQ(host_for_wire("a%zz%31"), "a%zz1"); // a stray '%' is sent as written
    EXPECT_EQ(host_for_wire("a%3"), "a%3");
    EXPECT_EQ(unicode_host("xn--fa-hia.example"), "fa\xc3\x9f.example");
    EXPECT_EQ(unicode_host("example.com"), "example.com");
    EXPECT_EQ(unicode_host("xn--a"), "xn--a");
    EXPECT_EQ(with_unicode_hosts("http://xn--fa-hia.example:8080/a: request_timeout (https://xn--n3h.net/)"),
              "http://fa\xc3\x9f.example:8080/a: request_timeout (https://\xe2\x98\x83.net/)");
    EXPECT_EQ(with_unicode_hosts("no url here"), "no url here");
}

TEST(UrlHost, Ipv6TextFollowsRfc5952) {
    auto bytes = [](std::vector<unsigned> pieces) {
        std::array<unsigned char, 16> b{};
        for (std::size_t i = 0; i < 8; ++i) {
            b[2 * i] = static_cast<unsigned char>(pieces[i] >> 8);
            b[2 * i + 1] = static_cast<unsigned char>(pieces[i] & 0xff);
        }
        return b;
    };
    EXPECT_EQ(ipv6_text(bytes({0, 0, 0, 0, 0, 0, 0, 1})), "::1");
    EXPECT_EQ(ipv6_text(bytes({0, 0, 0, 0, 0, 0, 0, 0})), "::");
    EXPECT_EQ(ipv6_text(bytes({1, 0, 0, 0, 0, 0, 0, 0})), "1::");
    EXPECT_EQ(ipv6_text(bytes({0, 1, 0, 1, 0, 1, 0, 1})), "0:1:0:1:0:1:0:1");
    EXPECT_EQ(ipv6_text(bytes({0x2001, 0xdb8, 0, 0, 1, 0, 0, 1})), "2001:db8::1:0:0:1");
    EXPECT_EQ(ipv6_text(bytes({0xabcd, 0, 0, 0xff, 0, 0, 0, 0})), "abcd:0:0:ff::");
}

} // namespace
