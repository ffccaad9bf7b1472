// The http and https cases of the web-platform-tests URL data (test/data/urltestdata.json, see
// test/data/README.md) against normalize_reference(): for every case a browser resolves to an http(s) URL,
// the crawl's canonical form must be the browser's href put through the crawl's normalization policy (no
// userinfo or fragment, one trailing host dot dropped, RFC 3986 percent-encoding with unreserved characters
// decoded); for every case a browser rejects, ours must fail too. The differences that remain are listed
// below with their reasons (and in docs/FETCHING.md); the test fails when one disappears or a new one shows.
#include "support/files.hpp"
#include "url/url.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>
#include <boost/url/parse.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using asiocrawl::test::read_file;

namespace {

namespace json = boost::json;

struct wpt_case {
    std::string input;
    std::string base; // "" for none
    bool failure = false;
    std::string href;
};

std::vector<wpt_case> load_cases() {
    const json::value data =
        json::parse(read_file(std::string(ASIOCRAWL_SOURCE_DIR) + "/test/data/urltestdata.json"));
    std::vector<wpt_case> cases;
    for (const auto& entry : data.as_array()) {
        if (!entry.is_object())
            continue; // comments
        const auto& object = entry.as_object();
        wpt_case c;
        c.input = json::value_to<std::string>(object.at("input"));
        if (const auto* base = object.if_contains("base"); base && base->is_string())
            c.base = json::value_to<std::string>(*base);
        if (const auto* failure = object.if_contains("failure"))
            c.failure = failure->as_bool();
        if (const auto* href = object.if_contains("href"))
            c.href = json::value_to<std::string>(*href);
        cases.push_back(std::move(c));
    }
    return cases;
}

std::string lowercase(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

bool is_http_scheme(std::string_view url) {
    const auto colon = url.find(':');
    if (colon == std::string_view::npos)
        return false;
    const auto scheme = lowercase(url.substr(0, colon));
    return scheme == "http" || scheme == "https";
}

/// The cases this table covers: a browser's answer is an http(s) URL, or a browser rejects an input that
/// is (or is resolved against) an http(s) URL.
bool is_http_case(const wpt_case& c) {
    if (!c.failure)
        return is_http_scheme(c.href);
    std::string_view input = c.input;
    while (!input.empty() && static_cast<unsigned char>(input.front()) <= 0x20)
        input.remove_prefix(1);
    return is_http_scheme(c.base) || is_http_scheme(input);
}

// ---- The crawl's normalization policy, applied to a browser's href (written apart from src/url/url.cpp)
// ----

bool is_unreserved(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

bool is_sub_delim(char c) {
    return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos;
}

int hex(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/// RFC 3986 encoding: `allowed` characters stay raw, others are percent-encoded; existing triplets get
/// uppercase hex digits, or are decoded when they stand for an unreserved character.
template <class Allowed>
std::string rfc3986(std::string_view s, Allowed allowed) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            const char decoded = static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            if (is_unreserved(decoded)) {
                out += decoded;
            } else {
                out += '%';
                out += digits[hex(s[i + 1])];
                out += digits[hex(s[i + 2])];
            }
            i += 2;
        } else if (is_unreserved(c) || allowed(c)) {
            out += c;
        } else {
            const auto byte = static_cast<unsigned char>(c);
            out += '%';
            out += digits[byte >> 4];
            out += digits[byte & 15];
        }
    }
    return out;
}

/// The browser's href as the crawl's canonical form.
std::string canonical_from_href(std::string_view href) {
    const auto colon = href.find(':');
    const std::string scheme = lowercase(href.substr(0, colon));
    std::string_view rest = href.substr(colon + 3); // "://"
    rest = rest.substr(0, rest.find('#'));
    const auto authority_end = std::min(rest.find_first_of("/?"), rest.size());
    std::string_view authority = rest.substr(0, authority_end);
    rest.remove_prefix(authority_end);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    std::string_view host = authority;
    std::string_view port;
    if (!host.starts_with('[')) {
        if (const auto port_colon = host.rfind(':'); port_colon != std::string_view::npos) {
            port = host.substr(port_colon + 1);
            host = host.substr(0, port_colon);
        }
    } else if (const auto close = host.find(']'); close + 1 < host.size()) {
        port = host.substr(close + 2);
        host = host.substr(0, close + 1);
    }
    std::string canonical_host(host);
    if (canonical_host.size() > 1 && canonical_host.back() == '.')
        canonical_host.pop_back();
    if (!host.starts_with('['))
        canonical_host = rfc3986(canonical_host, is_sub_delim);
    const auto question = rest.find('?');
    const std::string_view path = rest.substr(0, question);
    std::string out = scheme + "://" + canonical_host;
    if (!port.empty())
        out += ":" + std::string(port);
    const auto pchar = [](char c) { return is_sub_delim(c) || c == ':' || c == '@' || c == '/'; };
    out += path.empty() ? "/" : rfc3986(path, pchar);
    if (question != std::string_view::npos)
        out += "?" + rfc3986(rest.substr(question + 1), [&](char c) { return pchar(c) || c == '?'; });
    return out;
}

// ---- Known differences ----

/// One case where the crawl deliberately or knowingly differs from browsers, and why.
struct known_difference {
    std::string_view input;
    std::string_view base;
    std::string_view reason;
};

const std::vector<known_difference>& known_differences() {
    static const std::vector<known_difference> list{
#include "data/urltestdata_differences.inc"
    };
    return list;
}

struct wpt_outcome {
    bool ok = false;
    std::string text; // the canonical URL, or the failure's message
};

wpt_outcome ours(const wpt_case& c) {
    // A crawl's bases are canonical URLs; a few of the data's bases need the cleaning links get.
    const std::string base = c.base.empty() ? "about:blank" : asiocrawl::clean_reference(c.base);
    const auto parsed_base = boost::urls::parse_uri(base);
    if (!parsed_base)
        return {false, "base does not parse"};
    auto result = asiocrawl::normalize_reference(*parsed_base, c.input);
    if (!result)
        return {false, result.error().message()};
    return {true, std::string(result->buffer())};
}

std::string printable(std::string_view s) {
    std::string out;
    for (char c : s) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            static constexpr char digits[] = "0123456789abcdef";
            out += "\\x";
            out += digits[byte >> 4];
            out += digits[byte & 15];
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace

TEST(WptUrlData, HttpCasesMatchBrowsersOrAreListedDifferences) {
    const auto cases = load_cases();
    ASSERT_GT(cases.size(), 500u) << "test/data/urltestdata.json missing or cut";
    std::set<std::pair<std::string, std::string>> listed;
    for (const auto& d : known_differences())
        listed.emplace(d.input, d.base);

    std::size_t covered = 0, agreed = 0;
    std::set<std::pair<std::string, std::string>> differing;
    std::ostringstream unexpected;
    for (const auto& c : cases) {
        if (!is_http_case(c))
            continue;
        ++covered;
        const wpt_outcome actual = ours(c);
        const bool same = c.failure ? !actual.ok : actual.ok && actual.text == canonical_from_href(c.href);
        if (same) {
            ++agreed;
            continue;
        }
        differing.emplace(c.input, c.base);
        if (!listed.contains({c.input, c.base}))
            unexpected << "\n  input \"" << printable(c.input) << "\" base \"" << printable(c.base)
                       << "\": browsers " << (c.failure ? "fail" : "\"" + canonical_from_href(c.href) + "\"")
                       << ", we " << (actual.ok ? "\"" + actual.text + "\"" : "fail (" + actual.text + ")");
    }
    std::ostringstream fixed;
    for (const auto& d : known_differences())
        if (!differing.contains({std::string(d.input), std::string(d.base)}))
            fixed << "\n  input \"" << printable(d.input) << "\" base \"" << d.base << "\"";
    std::cout << "[ wpt      ] " << covered << " http(s) cases, " << agreed << " as browsers, "
              << differing.size() << " listed differences\n";
    EXPECT_TRUE(unexpected.str().empty())
        << "differences not listed in urltestdata_differences.inc:" << unexpected.str();
    EXPECT_TRUE(fixed.str().empty()) << "listed differences that no longer differ (remove them):"
                                     << fixed.str();
}

TEST(WptUrlData, PolicyOfTheTableItself) {
    EXPECT_EQ(canonical_from_href("http://user:pw@example.org.:8080/a/%7e?b#c"),
              "http://example.org:8080/a/~?b");
    EXPECT_EQ(canonical_from_href("https://x/"), "https://x/");
    EXPECT_EQ(canonical_from_href("http://x/a|b?c|d"), "http://x/a%7Cb?c%7Cd");
    EXPECT_EQ(canonical_from_href("http://[::1]:8080/"), "http://[::1]:8080/");
}

// reference_resolver (a page's links in one pass) gives what normalize_reference gives, for every input of
// the data against its base and against that base made canonical (where the one pass applies), and for
// references chosen to sit at the edges of what the one pass takes.
TEST(WptUrlData, ReferenceResolverGivesWhatNormalizeReferenceGives) {
    const auto cases = load_cases();
    ASSERT_GT(cases.size(), 500u) << "test/data/urltestdata.json missing or cut";
    std::vector<std::string> references;
    for (const auto& c : cases)
        references.push_back(c.input);
    for (const char* edge : {"",
                             "#f",
                             "?",
                             "?q='x'#f",
                             "a?b=%7e%2F%41'",
                             "./",
                             "..",
                             "../../../x",
                             "/./a/../b/.",
                             "%2e%2e/x",
                             "a/%2E%2e/../b",
                             "x%2Fy",
                             "%zz",
                             "a b",
                             "a\tb",
                             "  /x  ",
                             "a:b",
                             "./a:b",
                             "http:x",
                             "https:x",
                             "//h/x",
                             "///x",
                             "HTTP://Example.COM:80/a/./b?c#d",
                             "https://h:443/",
                             "http://h:/x",
                             "http://h:0080/",
                             "http://h:65535/",
                             "http://h:65536/",
                             "http://h:99999999/",
                             "http://h./x",
                             "http://h../x",
                             "http://.h/",
                             "http://127.0.0.1/",
                             "http://127.1/",
                             "http://0x7f.0.0.1/",
                             "http://1.2.3.4.nip.io/",
                             "http://256.0.0.1/",
                             "http://01.2.3.4/",
                             "http://xn--fa-hia.example/",
                             "http://a_b.example/",
                             "http://u@h/",
                             "http://[::1]/",
                             "http://h?x",
                             "http://h#x",
                             "mailto:a@b.c",
                             "javascript:x",
                             "http://h/%7e/%7E?%7e",
                             "/a?b#c?d",
                             "?a#b#c"})
        references.emplace_back(edge);
    const std::vector<std::string> bases{"http://example.org/foo/bar", "https://h:8443/a/b/c?q=1",
                                         "http://127.0.0.1:8080/", "HTTP://Example.ORG/./x/../y"};
    std::size_t compared = 0;
    std::ostringstream differences;
    const auto compare = [&](boost::urls::url_view base, const std::string& reference) {
        const asiocrawl::reference_resolver resolver(base);
        const auto plain = asiocrawl::normalize_reference(base, reference);
        const auto text = resolver.resolve_text(reference);
        const auto url = resolver.resolve(reference);
        ++compared;
        const bool same =
            plain ? text && *text == plain->buffer() && url && url->buffer() == plain->buffer()
                  : !text && !url && text.error() == plain.error() && url.error() == plain.error();
        if (!same)
            differences << "\n  \"" << printable(reference) << "\" against " << base.buffer() << ": "
                        << (text ? *text : text.error().message()) << " instead of "
                        << (plain ? std::string(plain->buffer()) : plain.error().message());
    };
    for (const auto& c : cases) {
        // A named string: parse_uri's view must not outlive what it points into.
        const std::string base_text = c.base.empty() ? "about:blank" : c.base;
        const auto parsed = boost::urls::parse_uri(base_text);
        if (!parsed)
            continue;
        compare(*parsed, c.input);
        if (const auto canonical = asiocrawl::normalize(*parsed))
            compare(*canonical, c.input);
    }
    for (const auto& base : bases)
        for (const auto& reference : references)
            compare(boost::urls::parse_uri(base).value(), reference);
    EXPECT_GT(compared, 3000u);
    EXPECT_TRUE(differences.str().empty()) << differences.str();
}
