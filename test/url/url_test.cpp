#include "url/url.hpp"

#include <asiocrawl/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace std::string_view_literals;
using asiocrawl::error;

/// A table row's expected outcome: a URL string, or a failure (error{} means success).
struct outcome {
    std::string_view url;
    error failure{};
};

outcome fails_with(error e) {
    return {{}, e};
}

template <class Result>
void expect_outcome(const Result& actual, const outcome& expected) {
    if (expected.failure != error{}) {
        ASSERT_FALSE(actual.has_value()) << "got " << actual->buffer();
        EXPECT_EQ(actual.error(), make_error_code(expected.failure)) << actual.error().message();
    } else {
        ASSERT_TRUE(actual.has_value()) << actual.error().message();
        EXPECT_EQ(actual->buffer(), expected.url);
    }
}

struct text_case {
    std::string_view input;
    std::string_view expected;
};

TEST(CleanReference, MakesBrowserAcceptedReferencesParseable) {
    const std::vector<text_case> cases = {
        {"", ""},
        {"   ", ""},
        {"  http://x/ ", "http://x/"},
        {"\x01\x1f/a\x00"sv, "/a"},
        {"/a\tb\nc\rd", "/abcd"},
        {"\\a\\b?c\\d#e\\f", "/a/b?c%5Cd#e%5Cf"},
        {"http:\\\\host\\x", "http://host/x"},
        {"/a b", "/a%20b"},
        {"/caf\xc3\xa9", "/caf%C3%A9"},
        {"/\"<>^`{|}", "/%22%3C%3E%5E%60%7B%7C%7D"},
        {"/a\x7f\x01z"sv, "/a%7F%01z"},
        {"/%zz%4", "/%25zz%254"},
        {"/100%", "/100%25"},
        {"/%41%2f", "/%41%2f"},
        {"/a#b#c", "/a#b%23c"},
        {"/a?x[]=1", "/a?x%5B%5D=1"},
        {"http://[::1]:8080/[x]", "http://[::1]:8080/%5Bx%5D"},
        {"http://a@b@c/", "http://a%40b@c/"},
        {"1a:b", "./1a:b"},
        {":x", "./:x"},
        {"mailto:x", "mailto:x"},
        {"a/b:c", "a/b:c"},
        {"?q=a b", "?q=a%20b"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message() << "reference: \"" << c.input << "\"");
        EXPECT_EQ(asiocrawl::clean_reference(c.input), c.expected);
    }
}

TEST(RemoveDotSegments, FollowsRfc3986Section524) {
    const std::vector<text_case> cases = {
        {"", ""},
        {"/", "/"},
        {"/a/b/c/./../../g", "/a/g"},
        {"mid/content=5/../6", "mid/6"},
        {"/.", "/"},
        {"/..", "/"},
        {".", ""},
        {"..", ""},
        {"../a", "a"},
        {"./a", "a"},
        {"../../a/b", "a/b"},
        {"/a/..", "/"},
        {"/a/b/..", "/a/"},
        {"/a/b/.", "/a/b/"},
        {"/../../a", "/a"},
        {"/a/./b/./c", "/a/b/c"},
        {"/a//../b", "/a/b"},
        {"//a", "//a"},
        {"/a/..b/c", "/a/..b/c"},
        {"/a/b../c.", "/a/b../c."},
        {"/a/.../b", "/a/.../b"},
        {"/a/%2E%2E/b", "/a/%2E%2E/b"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message() << "path: \"" << c.input << "\"");
        EXPECT_EQ(asiocrawl::remove_dot_segments(c.input), c.expected);
    }
}

constexpr std::string_view rfc_base = "http://a/b/c/d;p?q";

void expect_rfc_resolution(const std::vector<text_case>& cases) {
    const boost::urls::url base(rfc_base);
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message() << "reference: \"" << c.input << "\"");
        expect_outcome(asiocrawl::resolve(base, c.input), {c.expected});
    }
}

TEST(Resolve, Rfc3986NormalExamples) { // §5.4.1
    expect_rfc_resolution({
        {"g:h", "g:h"},
        {"g", "http://a/b/c/g"},
        {"./g", "http://a/b/c/g"},
        {"g/", "http://a/b/c/g/"},
        {"/g", "http://a/g"},
        {"//g", "http://g"},
        {"?y", "http://a/b/c/d;p?y"},
        {"g?y", "http://a/b/c/g?y"},
        {"#s", "http://a/b/c/d;p?q#s"},
        {"g#s", "http://a/b/c/g#s"},
        {"g?y#s", "http://a/b/c/g?y#s"},
        {";x", "http://a/b/c/;x"},
        {"g;x", "http://a/b/c/g;x"},
        {"g;x?y#s", "http://a/b/c/g;x?y#s"},
        {"", "http://a/b/c/d;p?q"},
        {".", "http://a/b/c/"},
        {"./", "http://a/b/c/"},
        {"..", "http://a/b/"},
        {"../", "http://a/b/"},
        {"../g", "http://a/b/g"},
        {"../..", "http://a/"},
        {"../../", "http://a/"},
        {"../../g", "http://a/g"},
    });
}

TEST(Resolve, Rfc3986AbnormalExamples) { // §5.4.2
    expect_rfc_resolution({
        {"../../../g", "http://a/g"},
        {"../../../../g", "http://a/g"},
        {"/./g", "http://a/g"},
        {"/../g", "http://a/g"},
        {"g.", "http://a/b/c/g."},
        {".g", "http://a/b/c/.g"},
        {"g..", "http://a/b/c/g.."},
        {"..g", "http://a/b/c/..g"},
        {"./../g", "http://a/b/g"},
        {"./g/.", "http://a/b/c/g/"},
        {"g/./h", "http://a/b/c/g/h"},
        {"g/../h", "http://a/b/c/h"},
        {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
        {"g;x=1/../y", "http://a/b/c/y"},
        {"g?y/./x", "http://a/b/c/g?y/./x"},
        {"g?y/../x", "http://a/b/c/g?y/../x"},
        {"g#s/./x", "http://a/b/c/g#s/./x"},
        {"g#s/../x", "http://a/b/c/g#s/../x"},
        {"http:g", "http://a/b/c/g"}, // as browsers do (RFC 3986's "non-strict" reading for http)
    });
}

TEST(Resolve, KeepsEncodingAndFragmentsAsTheyAre) {
    expect_rfc_resolution({
        {"G%7e", "http://a/b/c/G%7e"},
        {"a%2Fb/../c", "http://a/b/c/c"},
        {"a%2fb", "http://a/b/c/a%2fb"},
        {"HTTP://A/%7e#Frag", "HTTP://A/%7e#Frag"},
        {" g b ", "http://a/b/c/g%20b"},
        {"g#", "http://a/b/c/g#"},
        {"?", "http://a/b/c/d;p?"},
    });
}

TEST(Resolve, FailsOnUnparseableReferenceOrRelativeBase) {
    const boost::urls::url base(rfc_base);
    expect_outcome(asiocrawl::resolve(base, "http://[bad"), fails_with(error::invalid_url));
    // Boost.URL 1.81 alone would read these as host "h" followed by a path that does not start with '/'.
    expect_outcome(asiocrawl::resolve(base, "http://h:port/"), fails_with(error::invalid_url));
    expect_outcome(asiocrawl::resolve(base, "//h:80:80/"), fails_with(error::invalid_url));
    expect_outcome(asiocrawl::resolve(boost::urls::url_view("/relative/base"), "g"),
                   fails_with(error::invalid_url));
}

TEST(Resolve, BaseWithoutAuthority) {
    const boost::urls::url base("x:a/b");
    expect_outcome(asiocrawl::resolve(base, "c"), {"x:a/c"});
    expect_outcome(asiocrawl::resolve(base, "..//c"), {"x:/.//c"});
}

struct reference_case {
    std::string_view base;
    std::string_view reference;
    outcome expected;
};

constexpr std::string_view page = "http://example.com/dir/page.html?x=1#top";

TEST(NormalizeReference, CanonicalForms) {
    const std::vector<reference_case> cases = {
        // scheme and host case
        {page, "HTTP://Example.COM/", {"http://example.com/"}},
        {page, "HTTPS://Example.com/A", {"https://example.com/A"}},
        {page, "http://EXAMPLE.com", {"http://example.com/"}},
        {page, "http://example.com./a", {"http://example.com/a"}},
        {page, "http://%41.example/", {"http://a.example/"}},
        {page, "http://caf\xc3\xa9.example/", {"http://xn--caf-dma.example/"}},
        {page, "http://fa\xc3\x9f.example/", {"http://xn--fa-hia.example/"}},
        {page, "http://\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xbd\xa0\xe5\xa5\xbd/", {"http://xn--6qqa088eba/"}},
        {page, "http://\xef\xbc\xa7\xef\xbd\x8f.com/", {"http://go.com/"}},
        {page, "http://XN--Fa-Hia.Example/", {"http://xn--fa-hia.example/"}},
        {page, "http://fa%C3%9F.example/", {"http://xn--fa-hia.example/"}},
        {page, "http://\xe2\x98\x83.net/", {"http://xn--n3h.net/"}},
        {page, "http://a\xe2\x80\x8d.example/", fails_with(error::invalid_url)}, // CheckJoiners
        {page, "http://ex%25ample.com/", fails_with(error::invalid_url)},        // % in a host
        {page, "http://a%20b/", fails_with(error::invalid_url)},
        {page, "http://a%3Cb/", fails_with(error::invalid_url)},
        // ports
        {page, "http://example.com:80/a", {"http://example.com/a"}},
        {page, "https://example.com:443/a", {"https://example.com/a"}},
        {page, "http://example.com:443/a", {"http://example.com:443/a"}},
        {page, "https://example.com:80/", {"https://example.com:80/"}},
        {page, "http://example.com:/a", {"http://example.com/a"}},
        {page, "http://example.com:8080", {"http://example.com:8080/"}},
        {page, "http://example.com:0080/", {"http://example.com/"}},
        {page, "http://example.com:99999/", fails_with(error::invalid_url)},
        // IP hosts
        {page, "http://[::1]:8080/x", {"http://[::1]:8080/x"}},
        {page, "http://[0:0::1]/", {"http://[::1]/"}},
        {page, "http://[2001:DB8::1]/", {"http://[2001:db8::1]/"}},
        {page, "http://127.0.0.1:80/", {"http://127.0.0.1/"}},
        {page, "http://192.168.0.1:8080", {"http://192.168.0.1:8080/"}},
        {page, "http://[0:1:0:1:0:1:0:1]/", {"http://[0:1:0:1:0:1:0:1]/"}}, // RFC 5952: no "::" for one zero
        {page, "http://[1:0:0:2:0:0:0:3]/", {"http://[1:0:0:2::3]/"}},
        // IPv4 addresses in the number forms browsers accept
        {page, "http://0x7f.1/", {"http://127.0.0.1/"}},
        {page, "http://2130706433/", {"http://127.0.0.1/"}},
        {page, "http://0177.0.0.1/", {"http://127.0.0.1/"}},
        {page, "http://127.1:8080/", {"http://127.0.0.1:8080/"}},
        {page, "http://192.168.257/", {"http://192.168.1.1/"}},
        {page, "http://1.2.3.4./", {"http://1.2.3.4/"}},
        {page, "http://0X7F.0x0.0.1/", {"http://127.0.0.1/"}},
        {page, "http://1.2.3.4.5/", fails_with(error::invalid_url)},
        {page, "http://256.0.0.1/", fails_with(error::invalid_url)},
        {page, "http://1.2.3.09/", fails_with(error::invalid_url)},
        {page, "http://4294967296/", fails_with(error::invalid_url)},
        {page, "http://foo.0x/", fails_with(error::invalid_url)},
        // names that begin like a dotted quad (the first character stays encoded: see url_host.hpp)
        {page, "http://1.2.3.4.nip.io/", {"http://%31.2.3.4.nip.io/"}},
        {page, "http://1.2.3.4.nip.io:8080/a", {"http://%31.2.3.4.nip.io:8080/a"}},
        {page, "http://user@1.2.3.4a/", {"http://%31.2.3.4a/"}},
        {page, "//10.0.0.1.example/x", {"http://%310.0.0.1.example/x"}},
        // dot segments
        {page, "http://example.com/a/./b/../c", {"http://example.com/a/c"}},
        {page, "http://example.com/../../x", {"http://example.com/x"}},
        {page, "../../../../up", {"http://example.com/up"}},
        {page, "./", {"http://example.com/dir/"}},
        {page, "page2.html", {"http://example.com/dir/page2.html"}},
        {page, "http://example.com/a/%2E%2E/b", {"http://example.com/b"}},
        {page, "http://example.com//double//slash", {"http://example.com//double//slash"}},
        // percent-encoding
        {page, "http://example.com/%7euser", {"http://example.com/~user"}},
        {page, "/%7Euser/%41%42%2d%2e%5f%30", {"http://example.com/~user/AB-._0"}},
        {page, "/a%2fb", {"http://example.com/a%2Fb"}},
        {page, "/a%2Fb%3a%40%20", {"http://example.com/a%2Fb%3A%40%20"}},
        {page, "/%e2%82%ac", {"http://example.com/%E2%82%AC"}},
        {page, "/?q=%7e%2f%3d%26", {"http://example.com/?q=~%2F%3D%26"}},
        {page, "/%zz", {"http://example.com/%25zz"}},
        {page, "/100%", {"http://example.com/100%25"}},
        {page, "http://user%7e:Pa%2fss@Example.com/", {"http://example.com/"}},
        // characters RFC 3986 does not allow raw
        {page, "/a b", {"http://example.com/a%20b"}},
        {page, "/caf\xc3\xa9", {"http://example.com/caf%C3%A9"}},
        {page, "/a|b", {"http://example.com/a%7Cb"}},
        {page, "/search?q=a b&x=\"y\"", {"http://example.com/search?q=a%20b&x=%22y%22"}},
        {page, "/list?filter[color]=red", {"http://example.com/list?filter%5Bcolor%5D=red"}},
        {page,
         "/a\x01"
         "b",
         {"http://example.com/a%01b"}},
        // query and fragment
        {page, "http://example.com/a?", {"http://example.com/a?"}},
        {page, "http://example.com/a?b=1&a=2", {"http://example.com/a?b=1&a=2"}},
        {page, "http://example.com/a#frag", {"http://example.com/a"}},
        {page, "/a#b#c", {"http://example.com/a"}},
        {page, "?q=1", {"http://example.com/dir/page.html?q=1"}},
        {page, "#frag", {"http://example.com/dir/page.html?x=1"}},
        {page, "", {"http://example.com/dir/page.html?x=1"}},
        // userinfo
        {page, "http://user:Pass@Example.com/", {"http://example.com/"}},
        {page, "http://@example.com/", {"http://example.com/"}},
        {page, "http://:@example.com/", {"http://example.com/"}},
        {page, "http://a@b@c.example/", {"http://c.example/"}},
        {page, "http://example.com../", fails_with(error::invalid_url)},
        {page, "http://../", fails_with(error::invalid_url)},
        // protocol-relative
        {page, "//other.host/x", {"http://other.host/x"}},
        {"https://example.com/", "//Other.Host/x", {"https://other.host/x"}},
        // whitespace and backslashes
        {page, "  /a  ", {"http://example.com/a"}},
        {page, "\t\n/a\nb\r", {"http://example.com/ab"}},
        {page, "\\a\\b?c\\d", {"http://example.com/a/b?c%5Cd"}},
        {page, "http:\\\\other.host\\x", {"http://other.host/x"}},
        {page, "1a:b", {"http://example.com/dir/1a:b"}},
        // schemes and hosts we cannot crawl
        {page, "mailto:someone@example.com", fails_with(error::unsupported_scheme)},
        {page, "javascript:void(0)", fails_with(error::unsupported_scheme)},
        {page, "ftp://example.com/file", fails_with(error::unsupported_scheme)},
        {page, "data:text/plain,hi", fails_with(error::unsupported_scheme)},
        {page, "tel:+1-555", fails_with(error::unsupported_scheme)},
        // slashes browsers repair after a special scheme
        {page, "http:///path", {"http://path/"}},
        {page, "http:/other.host/x", {"http://example.com/other.host/x"}}, // same scheme: relative
        {"https://example.com/", "http:/other.host/x", {"http://other.host/x"}},
        {page, "https:other.host/x", {"https://other.host/x"}},
        {page, "https:/\\other.host/x", {"https://other.host/x"}},
        {page, "///other.host/x", {"http://other.host/x"}},
        {page, "\\\\\\other.host\\x", {"http://other.host/x"}},
        {page, "http:/x", {"http://example.com/x"}},
        {page, "http:x?y", {"http://example.com/dir/x?y"}},
        {page, "http:", {"http://example.com/dir/page.html?x=1"}},
        {"https://example.com/", "http:/1.2.3.4.nip.io/", {"http://%31.2.3.4.nip.io/"}},
        {page, "ftp:/x", fails_with(error::unsupported_scheme)},
        {page, "http://[bad", fails_with(error::invalid_url)},
        {page, "http:g", {"http://example.com/dir/g"}},
        {"https://example.com/", "http:", fails_with(error::invalid_url)},
        // the query as browsers send it
        {page, "/?a='b'", {"http://example.com/?a=%27b%27"}},
        {page, "http://u[s]er:p[w]@example.com/", {"http://example.com/"}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message() << "base: " << c.base << " reference: \"" << c.reference << "\"");
        expect_outcome(asiocrawl::normalize_reference(boost::urls::url_view(c.base), c.reference),
                       c.expected);
    }
}

TEST(Normalize, AbsoluteUrls) {
    const std::vector<std::pair<std::string_view, outcome>> cases = {
        {"HTTP://User@EXAMPLE.com.:80/%7e%2f%41?%7e%2f#f", {"http://example.com/~%2FA?~%2F"}},
        {"http://h", {"http://h/"}},
        {"http://h?q", {"http://h/?q"}},
        {"https://h:443", {"https://h/"}},
        {"http://h/a/b/../../../c", {"http://h/c"}},
        {"ftp://h/", fails_with(error::unsupported_scheme)},
        {"mailto:a@b", fails_with(error::unsupported_scheme)},
        {"http:/path-only", fails_with(error::invalid_url)},
        {"http://./", fails_with(error::invalid_url)},
        {"http://h:port/", fails_with(error::invalid_url)},
        {"http://h:8x/", fails_with(error::invalid_url)},
    };
    for (const auto& [input, expected] : cases) {
        SCOPED_TRACE(::testing::Message() << "url: " << input);
        expect_outcome(asiocrawl::normalize(boost::urls::url_view(input)), expected);
    }
}

TEST(Normalize, IsIdempotent) {
    for (std::string_view input :
         {"HTTP://Example.COM:80/a/../b%7e?%7a#x", "http://[::1]:8080", "http://h/%2f/"}) {
        SCOPED_TRACE(input);
        const auto once = asiocrawl::normalize(boost::urls::url_view(input));
        ASSERT_TRUE(once.has_value());
        const auto twice = asiocrawl::normalize(*once);
        ASSERT_TRUE(twice.has_value());
        EXPECT_EQ(twice->buffer(), once->buffer());
    }
}

TEST(ParseRoot, AddsSchemeAndNormalizes) {
    const std::vector<std::pair<std::string_view, outcome>> cases = {
        {"example.com", {"http://example.com/"}},
        {"HTTP://Example.COM:80/a/../b#x", {"http://example.com/b"}},
        {"  example.com/a  ", {"http://example.com/a"}},
        {"https://example.com", {"https://example.com/"}},
        {"localhost:8080", {"http://localhost:8080/"}},
        {"localhost:8080/x", {"http://localhost:8080/x"}},
        {"127.0.0.1:8000", {"http://127.0.0.1:8000/"}},
        {"[::1]:8080", {"http://[::1]:8080/"}},
        {"//example.com/a", {"http://example.com/a"}},
        {"example.com/a b", {"http://example.com/a%20b"}},
        {"ftp://example.com/", fails_with(error::unsupported_scheme)},
        {"", fails_with(error::invalid_url)},
        {"   ", fails_with(error::invalid_url)},
        {"http://", fails_with(error::invalid_url)},
        {"http://[bad", fails_with(error::invalid_url)},
        // Not URLs at all: refused rather than turned into a host or a user name.
        {"not a url", fails_with(error::invalid_url)},
        {"http://not a url/", fails_with(error::invalid_url)},
        {"exa<mple>.com", fails_with(error::invalid_url)},
        {"mailto:a@b.c", fails_with(error::unsupported_scheme)},
        {"javascript:alert(1)", fails_with(error::unsupported_scheme)},
        {"data:text/html,hi", fails_with(error::unsupported_scheme)},
        {"http:example.com", fails_with(error::invalid_url)},
        {"example.com:8x", fails_with(error::invalid_url)},
        {"localhost:8080?q", {"http://localhost:8080/?q"}},
        {"user@example.com/a", {"http://example.com/a"}},
        {"http://example.com/a b", {"http://example.com/a%20b"}},
    };
    for (const auto& [input, expected] : cases) {
        SCOPED_TRACE(::testing::Message() << "root: \"" << input << "\"");
        expect_outcome(asiocrawl::parse_root(input), expected);
    }
}

} // namespace
