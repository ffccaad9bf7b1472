#include "policy/robots.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

using asiocrawl::robots_fetch_verdict;
using asiocrawl::robots_rules;
using asiocrawl::robots_verdict_for_status;
using namespace std::chrono_literals;

namespace {

struct expectation {
    std::string path;
    bool allowed;
};

struct robots_case {
    std::string name;
    std::string body;
    std::string agent;
    std::vector<expectation> expected;
};

void check(const robots_case& c) {
    SCOPED_TRACE(c.name);
    const auto rules = robots_rules::parse(c.body, c.agent);
    for (const auto& e : c.expected) {
        EXPECT_EQ(rules.allowed(e.path), e.allowed) << "agent " << c.agent << ", path " << e.path;
    }
}

// RFC 9309 §5.1.
const std::string rfc_simple_example = "User-Agent: *\n"
                                       "Disallow: *.gif$\n"
                                       "Disallow: /example/\n"
                                       "Allow: /publications/\n"
                                       "\n"
                                       "User-Agent: foobot\n"
                                       "Disallow:/\n"
                                       "Allow:/example/page.html\n"
                                       "Allow:/example/allowed.gif\n"
                                       "\n"
                                       "User-Agent: barbot\n"
                                       "User-Agent: bazbot\n"
                                       "Disallow: /example/page.html\n"
                                       "\n"
                                       "User-Agent: quxbot\n"
                                       "\n";

const robots_case rfc_cases[] = {
    {"5.1 foobot",
     rfc_simple_example,
     "foobot",
     {{"/example/page.html", true},
      {"/example/allowed.gif", true},
      {"/example/disallowed.gif", false},
      {"/", false},
      {"/publications/", false}}},
    {"5.1 barbot",
     rfc_simple_example,
     "barbot",
     {{"/example/page.html", false}, {"/example/other.html", true}, {"/picture.gif", true}}},
    {"5.1 bazbot shares barbot's group",
     rfc_simple_example,
     "BazBot",
     {{"/example/page.html", false}, {"/example/page.htm", true}}},
    {"5.1 quxbot's empty group allows everything",
     rfc_simple_example,
     "quxbot",
     {{"/example/page.html", true}, {"/x.gif", true}, {"/", true}}},
    {"5.1 any other crawler gets the * group",
     rfc_simple_example,
     "otherbot",
     {{"/x.gif", false},
      {"/deep/dir/x.gif", false},
      {"/x.gif?size=1", true},
      {"/x.gift", true},
      {"/example/", false},
      {"/example/page.html", false},
      {"/example", true},
      {"/publications/", true},
      {"/publications/cover.gif", true},
      {"/index.html", true}}},
    {"5.2 longest match",
     "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
     "foobot",
     {{"/example/page/", true},
      {"/example/page/disallowed.gif", false},
      {"/example/page/allowed.gif", true},
      {"/example/pag", true}}},
    // §2.2.2: both sides are compared percent-encoded, unreserved characters decoded.
    {"2.2.2 query",
     "User-agent: *\nDisallow: /foo/bar?baz=quz\n",
     "a",
     {{"/foo/bar?baz=quz", false}, {"/foo/bar", true}}},
    {"2.2.2 raw UTF-8 in the rule",
     "User-agent: *\nDisallow: /foo/bar/\xE3\x83\x84\n",
     "a",
     {{"/foo/bar/%E3%83%84", false}, {"/foo/bar/%e3%83%84", false}, {"/foo/bar/", true}}},
    {"2.2.2 encoded UTF-8 in the rule",
     "User-agent: *\nDisallow: /foo/bar/%E3%83%84\n",
     "a",
     {{"/foo/bar/%E3%83%84", false}, {"/foo/bar/%e3%83%84", false}, {"/foo/bar/%E3%83%85", true}}},
    {"2.2.2 encoded unreserved characters in the rule",
     "User-agent: *\nDisallow: /foo/bar/%62%61%7A\n",
     "a",
     {{"/foo/bar/baz", false}, {"/foo/bar/%62%61%7a", false}, {"/foo/bar/ba", true}}},
    {"2.2.2 encoded unreserved characters in the URL",
     "User-agent: *\nDisallow: /foo/bar/baz\n",
     "a",
     {{"/foo/bar/%62%61%7A", false}, {"/foo/bar/%62%61%7Ax", false}}},
    {"2.2.2 reserved characters stay encoded",
     "User-agent: *\nDisallow: /a%2Fb\n",
     "a",
     {{"/a%2fb", false}, {"/a/b", true}}},
    {"2.2.3 literal * and $ are spelled encoded",
     "User-agent: *\nDisallow: /path/file-with-a-%2A.html\nDisallow: /path/foo-%24\n",
     "a",
     {{"/path/file-with-a-*.html", false},
      {"/path/file-with-a-%2a.html", false},
      {"/path/file-with-a-x.html", true},
      {"/path/foo-$", false},
      {"/path/foo-", true}}},
    {"2.2.3 comments",
     "User-agent: * # everyone\n# a comment line\nAllow: /a # comment in line\nDisallow: /\n",
     "a",
     {{"/a", true}, {"/b", false}}},
};

// Google's robots.txt documentation: path matching and order-of-precedence examples.
const robots_case google_cases[] = {
    {"/ matches everything", "User-agent: *\nDisallow: /\n", "a", {{"/", false}, {"/any/thing?q", false}}},
    {"/* is equivalent to /", "User-agent: *\nDisallow: /*\n", "a", {{"/", false}, {"/any/thing", false}}},
    {"/$ matches only the root",
     "User-agent: *\nDisallow: /$\n",
     "a",
     {{"/", false}, {"/page.htm", true}, {"/?a", true}}},
    {"/fish",
     "User-agent: *\nDisallow: /fish\n",
     "a",
     {{"/fish", false},
      {"/fish.html", false},
      {"/fish/salmon.html", false},
      {"/fishheads", false},
      {"/fishheads/yummy.html", false},
      {"/fish.php?id=anything", false},
      {"/Fish.asp", true},
      {"/catfish", true},
      {"/?id=fish", true},
      {"/desert/fish", true}}},
    {"/fish* is /fish",
     "User-agent: *\nDisallow: /fish*\n",
     "a",
     {{"/fish", false}, {"/fishheads/yummy.html", false}, {"/Fish.asp", true}, {"/catfish", true}}},
    {"/fish/",
     "User-agent: *\nDisallow: /fish/\n",
     "a",
     {{"/fish/", false},
      {"/fish/?id=anything", false},
      {"/fish/salmon.htm", false},
      {"/fish", true},
      {"/fish.html", true},
      {"/animals/fish/", true},
      {"/Fish/Salmon.asp", true}}},
    {"/*.php",
     "User-agent: *\nDisallow: /*.php\n",
     "a",
     {{"/index.php", false},
      {"/filename.php", false},
      {"/folder/filename.php", false},
      {"/folder/filename.php?parameters", false},
      {"/folder/any.php.file.html", false},
      {"/filename.php/", false},
      {"/", true},
      {"/windows.PHP", true}}},
    {"/*.php$",
     "User-agent: *\nDisallow: /*.php$\n",
     "a",
     {{"/filename.php", false},
      {"/folder/filename.php", false},
      {"/filename.php?parameters", true},
      {"/filename.php/", true},
      {"/filename.php5", true},
      {"/windows.PHP", true}}},
    {"/fish*.php",
     "User-agent: *\nDisallow: /fish*.php\n",
     "a",
     {{"/fish.php", false}, {"/fishheads/catfish.php?parameters", false}, {"/Fish.PHP", true}}},
    {"longer allow wins",
     "User-agent: *\nAllow: /p\nDisallow: /\n",
     "a",
     {{"/page", true}, {"/other", false}}},
    {"equal length: allow wins",
     "User-agent: *\nAllow: /folder\nDisallow: /folder\n",
     "a",
     {{"/folder/page", true}}},
    {"longer wildcard disallow wins",
     "User-agent: *\nAllow: /page\nDisallow: /*.htm\n",
     "a",
     {{"/page.htm", false}, {"/page", true}}},
    {"equal-length wildcard: allow wins",
     "User-agent: *\nAllow: /page\nDisallow: /*.ph\n",
     "a",
     {{"/page.php5", true}}},
    {"anchored root allow",
     "User-agent: *\nAllow: /$\nDisallow: /\n",
     "a",
     {{"/", true}, {"/page.htm", false}}},
};

// Group selection, parsing robustness and hostile input.
const robots_case parsing_cases[] = {
    {"user-agent value with version and comment",
     "User-agent: FooBot/1.2 (+http://foo.example)\nDisallow: /\n",
     "foobot",
     {{"/x", false}}},
    {"a token with a version is no product token: only * applies",
     "User-agent: foobot\nDisallow: /\nUser-agent: *\nDisallow: /star\n",
     "FooBot/3.0",
     {{"/x", true}, {"/star", false}}},
    {"a longer agent name is another crawler",
     "User-agent: foobot-news\nDisallow: /\nUser-agent: *\nDisallow: /star\n",
     "foobot",
     {{"/x", true}, {"/star", false}}},
    {"specific group replaces *, it does not add to it",
     "User-agent: *\nDisallow: /a\nUser-agent: foobot\nDisallow: /b\n",
     "foobot",
     {{"/a", true}, {"/b", false}}},
    {"groups for the same agent merge",
     "User-agent: foobot\nDisallow: /a\nUser-agent: other\nDisallow: /c\nUser-agent: FOOBOT\nDisallow: /b\n",
     "foobot",
     {{"/a", false}, {"/b", false}, {"/c", true}}},
    {"* groups merge",
     "User-agent: *\nDisallow: /a\nUser-agent: x\nDisallow: /c\nUser-agent: *\nDisallow: /b\n",
     "foobot",
     {{"/a", false}, {"/b", false}, {"/c", true}}},
    {"a group naming us and * applies to both",
     "User-agent: foobot\nUser-agent: *\nDisallow: /a\n",
     "barbot",
     {{"/a", false}}},
    {"blank lines do not end a group",
     "User-agent: foobot\n\n\nDisallow: /a\n\nDisallow: /b\n",
     "foobot",
     {{"/a", false}, {"/b", false}}},
    {"rules before any user-agent are ignored",
     "Disallow: /\nUser-agent: x\nDisallow: /x\n",
     "foobot",
     {{"/", true}}},
    {"no group for us and no * group", "User-agent: x\nDisallow: /\n", "foobot", {{"/", true}}},
    {"sitemap inside a group does not end it",
     "User-agent: *\nDisallow: /a\nSitemap: http://h/s.xml\nDisallow: /b\n",
     "a",
     {{"/a", false}, {"/b", false}}},
    {"crawl-delay is a group member",
     "User-agent: x\nCrawl-delay: 1\nUser-agent: *\nDisallow: /a\n",
     "x",
     {{"/a", true}}},
    {"empty disallow allows", "User-agent: *\nDisallow:\n", "a", {{"/", true}, {"/x", true}}},
    {"empty allow is no rule", "User-agent: *\nAllow:\nDisallow: /\n", "a", {{"/x", false}}},
    {"case-insensitive keys and odd whitespace",
     "USER-AGENT:*\n\tdIsAlLoW \t:   /a  \nALLOW:/a/b\n",
     "a",
     {{"/a", false}, {"/a/b", true}}},
    {"misspelled keys", "useragent: *\ndissallow: /a\n", "a", {{"/a", false}}},
    {"a two-word line without colon counts, longer ones and unknown keys are ignored",
     "User-agent: *\nDisallow /a\nDisallow /b /c\nNoindex: /d\nfoo\nDisallow: /e\n",
     "a",
     {{"/a", false}, {"/b", true}, {"/c", true}, {"/d", true}, {"/e", false}}},
    {"* followed by a blank is the global agent", "User-agent: * bot\nDisallow: /a\n", "x", {{"/a", false}}},
    {"*bot is no global agent", "User-agent: *bot\nDisallow: /a\n", "x", {{"/a", true}}},
    {"UTF-8 BOM", "\xEF\xBB\xBFUser-agent: *\nDisallow: /a\n", "a", {{"/a", false}}},
    {"CR line ends", "User-agent: *\rDisallow: /a\rAllow: /a/b\r", "a", {{"/a", false}, {"/a/b", true}}},
    {"CRLF line ends", "User-agent: *\r\nDisallow: /a\r\n", "a", {{"/a", false}, {"/b", true}}},
    {"no final newline", "User-agent: *\nDisallow: /a", "a", {{"/a", false}}},
    {"pattern without leading slash",
     "User-agent: *\nDisallow: fish\n",
     "a",
     {{"/fish", false}, {"/catfish", true}}},
    {"$ inside a pattern is literal",
     "User-agent: *\nDisallow: /a$b\n",
     "a",
     {{"/a$b", false}, {"/a", true}}},
    {"/robots.txt is always allowed",
     "User-agent: *\nDisallow: /\n",
     "a",
     {{"/robots.txt", true}, {"/robots.txt?x", true}, {"/robots.txt.bak", false}}},
    {"empty path is the root", "User-agent: *\nDisallow: /$\n", "a", {{"", false}}},
    {"raw space in the URL", "User-agent: *\nDisallow: /a%20b\n", "a", {{"/a b", false}}},
    {"a lone percent sign", "User-agent: *\nDisallow: /100%\n", "a", {{"/100%25", false}, {"/100%", false}}},
};

// google/robotstxt's robots_test.cc (github.com/google/robotstxt, commit 22b355f, Apache-2.0), every case
// as data: the robots.txt, the user agent, the URL and whether it may be fetched. "ID_" tests are RFC 9309
// behaviour, "GoogleOnly_" tests are Google's own choices; we follow both, except the rows of
// google_differences below. Two tests count parse events, which robots_rules does not expose: their files
// are kept and the rows check what the lines mean instead (the Allow of the BOM files became a Disallow so
// that skipping or not skipping a line shows).
struct google_case {
    std::string_view test;
    std::string body;
    std::string agent;
    std::string url;
    bool allowed;
};

std::string long_line_robots(std::string_view key, std::string& pattern, char filler) {
    // The test's arithmetic: the pattern fills Google's 16,664-byte line buffer up to where "/qux" is cut.
    constexpr std::size_t max_line = 2083 * 8;
    pattern = "/x/";
    const std::size_t length = max_line - pattern.size() - key.size() + 1;
    pattern.resize(length, filler);
    return std::string(key) + pattern + "/qux\n";
}

std::vector<google_case> google_suite() {
    const std::string foobot_disallow_all = "user-agent: FooBot\ndisallow: /\n";
    const std::string groups = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\n"
                               "user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\n"
                               "user-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n";
    const std::string sitemap_joins = "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\n"
                                      "User-agent: *\nDisallow: /\n";
    const std::string unknown_joins = "User-agent: FooBot\nInvalid-Unknown-Line: unknown\n"
                                      "User-agent: *\nDisallow: /\n";
    const std::string upper = "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n";
    const std::string lower = "user-agent: FooBot\nallow: /x/\ndisallow: /\n";
    const std::string camel = "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n";
    const std::string agent_upper = "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n";
    const std::string agent_lower = "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n";
    const std::string agent_camel = "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n";
    const std::string up_to_space =
        "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n";
    const std::string global = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n";
    const std::string only_specific = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\n"
                                      "user-agent: BazBot\ndisallow: /\n";
    const std::string fish = "user-agent: FooBot\ndisallow: /\nallow: /fish\n";
    const std::string fish_star = "user-agent: FooBot\ndisallow: /\nallow: /fish*\n";
    const std::string fish_slash = "user-agent: FooBot\ndisallow: /\nallow: /fish/\n";
    const std::string php = "user-agent: FooBot\ndisallow: /\nallow: /*.php\n";
    const std::string php_end = "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n";
    const std::string fish_php = "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n";
    const std::string index_html = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n";

    std::vector<google_case> rows{
        {"GoogleOnly_SystemTest", "", "FooBot", "", true},
        {"GoogleOnly_SystemTest", foobot_disallow_all, "", "", true},
        {"GoogleOnly_SystemTest", foobot_disallow_all, "FooBot", "", false},
        {"GoogleOnly_SystemTest", "", "", "", true},

        {"ID_LineSyntax_Line", "user-agent: FooBot\ndisallow: /\n", "FooBot", "http://foo.bar/x/y", false},
        {"ID_LineSyntax_Line", "foo: FooBot\nbar: /\n", "FooBot", "http://foo.bar/x/y", true},
        {"ID_LineSyntax_Line", "user-agent FooBot\ndisallow /\n", "FooBot", "http://foo.bar/x/y", false},

        {"ID_LineSyntax_Groups", groups, "FooBot", "http://foo.bar/x/b", true},
        {"ID_LineSyntax_Groups", groups, "FooBot", "http://foo.bar/z/d", true},
        {"ID_LineSyntax_Groups", groups, "FooBot", "http://foo.bar/y/c", false},
        {"ID_LineSyntax_Groups", groups, "BarBot", "http://foo.bar/y/c", true},
        {"ID_LineSyntax_Groups", groups, "BarBot", "http://foo.bar/w/a", true},
        {"ID_LineSyntax_Groups", groups, "BarBot", "http://foo.bar/z/d", false},
        {"ID_LineSyntax_Groups", groups, "BazBot", "http://foo.bar/z/d", true},
        {"ID_LineSyntax_Groups", groups, "FooBot", "http://foo.bar/foo/bar/", false},
        {"ID_LineSyntax_Groups", groups, "BarBot", "http://foo.bar/foo/bar/", false},
        {"ID_LineSyntax_Groups", groups, "BazBot", "http://foo.bar/foo/bar/", false},

        {"ID_LineSyntax_Groups_OtherRules", sitemap_joins, "FooBot", "http://foo.bar/", false},
        {"ID_LineSyntax_Groups_OtherRules", sitemap_joins, "BarBot", "http://foo.bar/", false},
        {"ID_LineSyntax_Groups_OtherRules", unknown_joins, "FooBot", "http://foo.bar/", false},
        {"ID_LineSyntax_Groups_OtherRules", unknown_joins, "BarBot", "http://foo.bar/", false},

        {"ID_REPLineNamesCaseInsensitive", upper, "FooBot", "http://foo.bar/x/y", true},
        {"ID_REPLineNamesCaseInsensitive", lower, "FooBot", "http://foo.bar/x/y", true},
        {"ID_REPLineNamesCaseInsensitive", camel, "FooBot", "http://foo.bar/x/y", true},
        {"ID_REPLineNamesCaseInsensitive", upper, "FooBot", "http://foo.bar/a/b", false},
        {"ID_REPLineNamesCaseInsensitive", lower, "FooBot", "http://foo.bar/a/b", false},
        {"ID_REPLineNamesCaseInsensitive", camel, "FooBot", "http://foo.bar/a/b", false},

        {"ID_UserAgentValueCaseInsensitive", agent_upper, "Foo", "http://foo.bar/x/y", true},
        {"ID_UserAgentValueCaseInsensitive", agent_lower, "Foo", "http://foo.bar/x/y", true},
        {"ID_UserAgentValueCaseInsensitive", agent_camel, "Foo", "http://foo.bar/x/y", true},
        {"ID_UserAgentValueCaseInsensitive", agent_upper, "Foo", "http://foo.bar/a/b", false},
        {"ID_UserAgentValueCaseInsensitive", agent_lower, "Foo", "http://foo.bar/a/b", false},
        {"ID_UserAgentValueCaseInsensitive", agent_camel, "Foo", "http://foo.bar/a/b", false},
        {"ID_UserAgentValueCaseInsensitive", agent_upper, "foo", "http://foo.bar/x/y", true},
        {"ID_UserAgentValueCaseInsensitive", agent_lower, "foo", "http://foo.bar/x/y", true},
        {"ID_UserAgentValueCaseInsensitive", agent_camel, "foo", "http://foo.bar/x/y", true},
        {"ID_UserAgentValueCaseInsensitive", agent_upper, "foo", "http://foo.bar/a/b", false},
        {"ID_UserAgentValueCaseInsensitive", agent_lower, "foo", "http://foo.bar/a/b", false},
        {"ID_UserAgentValueCaseInsensitive", agent_camel, "foo", "http://foo.bar/a/b", false},

        {"GoogleOnly_AcceptUserAgentUpToFirstSpace", up_to_space, "Foo", "http://foo.bar/x/y", true},
        {"GoogleOnly_AcceptUserAgentUpToFirstSpace", up_to_space, "Foo Bar", "http://foo.bar/x/y", false},

        {"ID_GlobalGroups_Secondary", "", "FooBot", "http://foo.bar/x/y", true},
        {"ID_GlobalGroups_Secondary", global, "FooBot", "http://foo.bar/x/y", false},
        {"ID_GlobalGroups_Secondary", global, "BarBot", "http://foo.bar/x/y", true},
        {"ID_GlobalGroups_Secondary", only_specific, "QuxBot", "http://foo.bar/x/y", true},

        {"ID_AllowDisallow_Value_CaseSensitive", "user-agent: FooBot\ndisallow: /x/\n", "FooBot",
         "http://foo.bar/x/y", false},
        {"ID_AllowDisallow_Value_CaseSensitive", "user-agent: FooBot\ndisallow: /X/\n", "FooBot",
         "http://foo.bar/x/y", true},

        {"ID_LongestMatch", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot",
         "http://foo.bar/x/page.html", false},
        {"ID_LongestMatch", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot",
         "http://foo.bar/x/page.html", true},
        {"ID_LongestMatch", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot",
         "http://foo.bar/x/", false},
        {"ID_LongestMatch", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot",
         "http://foo.bar/x/page.html", true},
        {"ID_LongestMatch", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot",
         "http://foo.bar/x/page.html", true},
        {"ID_LongestMatch", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x",
         false},
        {"ID_LongestMatch", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://foo.bar/x/",
         true},
        {"ID_LongestMatch", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot",
         "http://foo.bar/x/page.html", true},
        {"ID_LongestMatch", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot",
         "http://foo.bar/page.html", false},
        {"ID_LongestMatch", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot",
         "http://foo.bar/page", true},
        {"ID_LongestMatch", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot",
         "http://foo.bar/x/page.html", true},
        {"ID_LongestMatch", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot",
         "http://foo.bar/x/y.html", false},
        {"ID_LongestMatch", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot",
         "http://foo.bar/x/page", true},
        {"ID_LongestMatch", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot",
         "http://foo.bar/y/page", false},

        {"ID_Encoding",
         "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot",
         "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true},
        {"ID_Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/\xE3\x83\x84\n", "FooBot",
         "http://foo.bar/foo/bar/%E3%83%84", true},
        {"ID_Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot",
         "http://foo.bar/foo/bar/%E3%83%84", true},
        {"ID_Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot",
         "http://foo.bar/foo/bar/%62%61%7A", true},

        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot",
         "http://foo.bar/foo/bar/quz", false},
        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot",
         "http://foo.bar/foo/quz", true},
        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot",
         "http://foo.bar/foo//quz", true},
        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot",
         "http://foo.bar/foo/bax/quz", true},
        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
         "http://foo.bar/foo/bar", false},
        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
         "http://foo.bar/foo/bar/qux", true},
        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
         "http://foo.bar/foo/bar/", true},
        {"ID_SpecialCharacters", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot",
         "http://foo.bar/foo/bar/baz", true},
        {"ID_SpecialCharacters", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n",
         "FooBot", "http://foo.bar/foo/bar", true},
        {"ID_SpecialCharacters", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n",
         "FooBot", "http://foo.bar/foo/quz", false},

        {"GoogleOnly_IndexHTMLisDirectory", index_html, "foobot", "http://foo.com/allowed-slash/", true},
        {"GoogleOnly_IndexHTMLisDirectory", index_html, "foobot", "http://foo.com/allowed-slash/index.htm",
         false},
        {"GoogleOnly_IndexHTMLisDirectory", index_html, "foobot", "http://foo.com/allowed-slash/index.html",
         true},
        {"GoogleOnly_IndexHTMLisDirectory", index_html, "foobot", "http://foo.com/anyother-url", false},

        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/bar", false},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/fish", true},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/fish.html", true},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/fish/salmon.html", true},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/fishheads", true},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/fishheads/yummy.html", true},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/fish.html?id=anything", true},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/Fish.asp", false},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/catfish", false},
        {"GoogleOnly_DocumentationChecks", fish, "FooBot", "http://foo.bar/?id=fish", false},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/bar", false},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/fish", true},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/fish.html", true},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/fish/salmon.html", true},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/fishheads", true},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/fishheads/yummy.html", true},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/fish.html?id=anything", true},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/Fish.bar", false},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/catfish", false},
        {"GoogleOnly_DocumentationChecks", fish_star, "FooBot", "http://foo.bar/?id=fish", false},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/bar", false},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/fish/", true},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/fish/salmon", true},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/fish/?salmon", true},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/fish/salmon.html", true},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/fish/?id=anything", true},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/fish", false},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/fish.html", false},
        {"GoogleOnly_DocumentationChecks", fish_slash, "FooBot", "http://foo.bar/Fish/Salmon.html", false},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/bar", false},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/filename.php", true},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/folder/filename.php", true},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/folder/filename.php?parameters",
         true},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar//folder/any.php.file.html", true},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/filename.php/", true},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/index?f=filename.php/", true},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/php/", false},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/index?php", false},
        {"GoogleOnly_DocumentationChecks", php, "FooBot", "http://foo.bar/windows.PHP", false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/bar", false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/filename.php", true},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/folder/filename.php", true},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/filename.php?parameters",
         false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/filename.php/", false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/filename.php5", false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/php/", false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/filename?php", false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar/aaaphpaaa", false},
        {"GoogleOnly_DocumentationChecks", php_end, "FooBot", "http://foo.bar//windows.PHP", false},
        {"GoogleOnly_DocumentationChecks", fish_php, "FooBot", "http://foo.bar/bar", false},
        {"GoogleOnly_DocumentationChecks", fish_php, "FooBot", "http://foo.bar/fish.php", true},
        {"GoogleOnly_DocumentationChecks", fish_php, "FooBot",
         "http://foo.bar/fishheads/catfish.php?parameters", true},
        {"GoogleOnly_DocumentationChecks", fish_php, "FooBot", "http://foo.bar/Fish.PHP", false},
        {"GoogleOnly_DocumentationChecks", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot",
         "http://example.com/page", true},
        {"GoogleOnly_DocumentationChecks", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n",
         "FooBot", "http://example.com/folder/page", true},
        {"GoogleOnly_DocumentationChecks", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot",
         "http://example.com/page.htm", false},
        {"GoogleOnly_DocumentationChecks", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot",
         "http://example.com/", true},
        {"GoogleOnly_DocumentationChecks", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot",
         "http://example.com/page.html", false},

        // TestMaybeEscapePattern: a rule is compared in the escaped form of its pattern.
        {"TestMaybeEscapePattern", "User-agent: *\nDisallow: /http://www.example.com\n", "FooBot",
         "http://foo.bar/http://www.example.com", false},
        {"TestMaybeEscapePattern", "User-agent: *\nDisallow: /a/b/c\n", "FooBot", "http://foo.bar/a/b/c",
         false},
        {"TestMaybeEscapePattern", "User-agent: *\nDisallow: /\xC3\xA1\n", "FooBot", "http://foo.bar/%C3%A1",
         false},
        {"TestMaybeEscapePattern", "User-agent: *\nDisallow: /%aa\n", "FooBot", "http://foo.bar/%AA", false},
    };

    // ID_LinesNumbersAreCountedCorrectly: every kind of line end, mixed, and no final one.
    for (const std::string eol : {"\n", "\r\n", "\r"}) {
        const std::string file = "User-Agent: foo" + eol + "Allow: /some/path" + eol + "User-Agent: bar" +
                                 eol + eol + eol + "Disallow: /" + eol;
        rows.push_back(
            {"ID_LinesNumbersAreCountedCorrectly", file, "bar", "http://foo.bar/some/path", false});
        rows.push_back({"ID_LinesNumbersAreCountedCorrectly", file, "foo", "http://foo.bar/other", true});
    }
    for (const std::string file :
         {"User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
          "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /"}) {
        rows.push_back(
            {"ID_LinesNumbersAreCountedCorrectly", file, "bar", "http://foo.bar/some/path", false});
        rows.push_back({"ID_LinesNumbersAreCountedCorrectly", file, "foo", "http://foo.bar/other", true});
    }

    // ID_UTF8ByteOrderMarkIsSkipped: a whole or partial BOM is skipped; a broken one, or one in the middle,
    // spoils its line.
    const std::string bom_rules = "User-Agent: foo\nDisallow: /AnyValue\n";
    rows.push_back(
        {"ID_UTF8ByteOrderMarkIsSkipped", "\xEF\xBB\xBF" + bom_rules, "foo", "http://a/AnyValue", false});
    rows.push_back(
        {"ID_UTF8ByteOrderMarkIsSkipped", "\xEF\xBB" + bom_rules, "foo", "http://a/AnyValue", false});
    rows.push_back({"ID_UTF8ByteOrderMarkIsSkipped", "\xEF" + bom_rules, "foo", "http://a/AnyValue", false});
    rows.push_back(
        {"ID_UTF8ByteOrderMarkIsSkipped", "\xEF\x11\xBF" + bom_rules, "foo", "http://a/AnyValue", true});
    rows.push_back({"ID_UTF8ByteOrderMarkIsSkipped",
                    "User-Agent: foo\n\xEF\xBB\xBF"
                    "Disallow: /AnyValue\n",
                    "foo", "http://a/AnyValue", true});

    // GoogleOnly_LineTooLong: bytes past the line cap are dropped, the rule keeps what came before.
    {
        std::string pattern;
        const std::string body = "user-agent: FooBot\n" + long_line_robots("disallow: ", pattern, 'a');
        rows.push_back({"GoogleOnly_LineTooLong", body, "FooBot", "http://foo.bar/fux", true});
        rows.push_back(
            {"GoogleOnly_LineTooLong", body, "FooBot", "http://foo.bar" + pattern + "/fux", false});
    }
    {
        std::string pattern_a;
        std::string pattern_b;
        std::string body = "user-agent: FooBot\ndisallow: /\n";
        body += long_line_robots("allow: ", pattern_a, 'a');
        body += long_line_robots("allow: ", pattern_b, 'b');
        rows.push_back({"GoogleOnly_LineTooLong", body, "FooBot", "http://foo.bar/", false});
        rows.push_back(
            {"GoogleOnly_LineTooLong", body, "FooBot", "http://foo.bar" + pattern_a + "/qux", true});
        rows.push_back(
            {"GoogleOnly_LineTooLong", body, "FooBot", "http://foo.bar" + pattern_b + "/fux", true});
    }
    return rows;
}

// Where we keep RFC 9309's reading and Google's test says otherwise, with the answer Google expects.
struct google_difference {
    google_case ours;
    bool google_expects;
    std::string_view why;
};

const google_difference google_differences[] = {
    {{"ID_Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/\xE3\x83\x84\n", "FooBot",
      "http://foo.bar/foo/bar/\xE3\x83\x84", true},
     false,
     "RFC 9309 2.2.2: octets outside US-ASCII are percent-encoded on both sides before comparing; Google "
     "leaves "
     "the URL to its caller. The crawler only ever hands in encoded URLs, so this never differs in a crawl"},
    {{"ID_Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot",
      "http://foo.bar/foo/bar/\xE3\x83\x84", true},
     false,
     "the same: the raw URL is encoded before comparison (RFC 9309 2.2.2)"},
    {{"ID_Encoding", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot",
      "http://foo.bar/foo/bar/baz", true},
     false,
     "RFC 9309 2.2.2's table: /foo/bar/%62%61%7A matches /foo/bar/baz (percent-encoded unreserved characters "
     "are "
     "the characters); Google's test notes the pattern is illegal and keeps a plain string comparison"},
};

// ID_VerifyValidUserAgentsToObey.
const std::pair<std::string_view, bool> google_product_tokens[] = {
    {"Foobot", true},    {"Foobot-Bar", true},    {"Foo_Bar", true},
    {"", false},         {"\xE3\x83\x84", false}, {"Foobot*", false},
    {" Foobot ", false}, {"Foobot/2.1", false},   {"Foobot Bar", false},
};

// TestGetPathParamsQuery: the part of a URL the rules see.
const std::pair<std::string_view, std::string_view> google_paths[] = {
    {"", "/"},
    {"http://www.example.com", "/"},
    {"http://www.example.com/", "/"},
    {"http://www.example.com/a", "/a"},
    {"http://www.example.com/a/", "/a/"},
    {"http://www.example.com/a/b?c=http://d.e/", "/a/b?c=http://d.e/"},
    {"http://www.example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
    {"example.com", "/"},
    {"example.com/", "/"},
    {"example.com/a", "/a"},
    {"example.com/a/", "/a/"},
    {"example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
    {"a", "/"},
    {"a/", "/"},
    {"/a", "/a"},
    {"a/b", "/b"},
    {"example.com?a", "/?a"},
    {"example.com/a;b#c", "/a;b"},
    {"//a/b/c", "/b/c"},
};

} // namespace

TEST(robots, rfc9309_examples) {
    for (const auto& c : rfc_cases)
        check(c);
}

TEST(robots, google_examples) {
    for (const auto& c : google_cases)
        check(c);
}

TEST(robots, parsing) {
    for (const auto& c : parsing_cases)
        check(c);
}

TEST(robots, google_robotstxt_suite) {
    const auto rows = google_suite();
    for (const auto& row : rows) {
        const auto rules = robots_rules::parse(row.body, row.agent);
        EXPECT_EQ(rules.allowed(asiocrawl::robots_path_of(row.url)), row.allowed)
            << row.test << ": agent '" << row.agent << "', URL " << row.url.substr(0, 80) << ", robots.txt\n"
            << row.body.substr(0, 300);
    }
    EXPECT_EQ(rows.size(), 161u) << "every case of robots_test.cc is a row";
}

TEST(robots, google_robotstxt_deliberate_differences) {
    for (const auto& d : google_differences) {
        const auto& row = d.ours;
        ASSERT_NE(row.allowed, d.google_expects);
        EXPECT_EQ(robots_rules::parse(row.body, row.agent).allowed(asiocrawl::robots_path_of(row.url)),
                  row.allowed)
            << row.test << ": " << row.url << " (" << d.why << ")";
    }
}

TEST(robots, google_valid_product_tokens) {
    for (const auto& [token, valid] : google_product_tokens)
        EXPECT_EQ(robots_rules::valid_product_token(token), valid) << "'" << token << "'";
}

TEST(robots, google_path_of_url) {
    for (const auto& [url, path] : google_paths)
        EXPECT_EQ(asiocrawl::robots_path_of(url), path) << "'" << url << "'";
}

TEST(robots, google_sitemap_anywhere) {
    const std::string groups = "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n";
    const std::vector<std::string> expected{"http://foo.bar/sitemap.xml"};
    EXPECT_EQ(robots_rules::parse(groups + "Sitemap: http://foo.bar/sitemap.xml\n", "foo").sitemaps(),
              expected);
    EXPECT_EQ(robots_rules::parse("Sitemap: http://foo.bar/sitemap.xml\n" + groups, "foo").sitemaps(),
              expected);
}

TEST(robots, verdict_for_status) {
    const std::pair<int, robots_fetch_verdict> cases[] = {
        {200, robots_fetch_verdict::parse},        {204, robots_fetch_verdict::parse},
        {299, robots_fetch_verdict::parse},        {301, robots_fetch_verdict::allow_all},
        {308, robots_fetch_verdict::allow_all},    {400, robots_fetch_verdict::allow_all},
        {401, robots_fetch_verdict::allow_all},    {403, robots_fetch_verdict::allow_all},
        {404, robots_fetch_verdict::allow_all},    {410, robots_fetch_verdict::allow_all},
        {451, robots_fetch_verdict::allow_all},    {429, robots_fetch_verdict::disallow_all},
        {500, robots_fetch_verdict::disallow_all}, {503, robots_fetch_verdict::disallow_all},
        {599, robots_fetch_verdict::disallow_all}, {100, robots_fetch_verdict::disallow_all},
        {0, robots_fetch_verdict::disallow_all},   {-1, robots_fetch_verdict::disallow_all},
        {600, robots_fetch_verdict::disallow_all},
    };
    for (const auto& [status, verdict] : cases)
        EXPECT_EQ(robots_verdict_for_status(status), verdict) << status;
}

TEST(robots, allow_all_and_disallow_all) {
    EXPECT_TRUE(robots_rules::allow_all().allowed("/anything"));
    EXPECT_TRUE(robots_rules{}.allowed("/anything"));
    EXPECT_FALSE(robots_rules::disallow_all().allowed("/anything"));
    EXPECT_FALSE(robots_rules::disallow_all().allowed("/"));
    EXPECT_TRUE(robots_rules::disallow_all().allowed("/robots.txt"));
    EXPECT_TRUE(robots_rules::disallow_all().sitemaps().empty());
    EXPECT_FALSE(robots_rules::disallow_all().crawl_delay());
}

TEST(robots, crawl_delay) {
    const std::pair<std::string, std::optional<std::chrono::milliseconds>> cases[] = {
        {"10", 10s},
        {"0.5", 500ms},
        {".25", 250ms},
        {"2.", 2s},
        {"1.0005", 1001ms},
        {"0", 0ms},
        {"99999999999999999999999", 24h},
        {"", std::nullopt},
        {".", std::nullopt},
        {"-1", std::nullopt},
        {"1e3", std::nullopt},
        {"ten", std::nullopt},
        {"1.5s", std::nullopt},
    };
    for (const auto& [value, expected] : cases) {
        const auto rules = robots_rules::parse("User-agent: *\nCrawl-delay: " + value + "\n", "a");
        EXPECT_EQ(rules.crawl_delay(), expected) << "'" << value << "'";
    }
}

TEST(robots, crawl_delay_of_the_selected_group) {
    const std::string body = "User-agent: *\nCrawl-delay: 5\n"
                             "User-agent: foobot\nCrawl-delay: 2\nCrawl-delay: 3\nDisallow: /x\n";
    EXPECT_EQ(robots_rules::parse(body, "foobot").crawl_delay(), std::chrono::milliseconds(2s));
    EXPECT_EQ(robots_rules::parse(body, "other").crawl_delay(), std::chrono::milliseconds(5s));
    EXPECT_FALSE(robots_rules::parse("User-agent: x\nCrawl-delay: 5\n", "other").crawl_delay());
}

TEST(robots, sitemaps_anywhere_as_written) {
    const std::string body = "Sitemap: http://h/a.xml\n"
                             "User-agent: x\nDisallow: /\n"
                             "SITEMAP:   https://other.example/b.xml.gz   # comment\n"
                             "Sitemap:\n"
                             "User-agent: *\nsitemap: /relative.xml\n";
    const auto rules = robots_rules::parse(body, "foobot");
    const std::vector<std::string> expected{"http://h/a.xml", "https://other.example/b.xml.gz",
                                            "/relative.xml"};
    EXPECT_EQ(rules.sitemaps(), expected);
}

TEST(robots, many_rules) {
    std::string body = "User-agent: *\n";
    for (int i = 0; i < 50'000; ++i)
        body += "Disallow: /dir" + std::to_string(i) + "/\n";
    body += "Allow: /dir777/open/\n";
    const auto rules = robots_rules::parse(body, "a");
    EXPECT_FALSE(rules.allowed("/dir0/x"));
    EXPECT_FALSE(rules.allowed("/dir49999/x"));
    EXPECT_FALSE(rules.allowed("/dir777/x"));
    EXPECT_TRUE(rules.allowed("/dir777/open/x"));
    EXPECT_TRUE(rules.allowed("/dir50000/x"));
}

TEST(robots, a_megabyte_of_stars) {
    // A line is cut at Google's cap: what is left of this one is "/*", which disallows everything.
    const auto cut =
        robots_rules::parse("User-agent: *\nDisallow: /" + std::string(1 << 20, '*') + "x$\n", "a");
    EXPECT_FALSE(cut.allowed("/" + std::string(4096, 'a') + "x"));
    EXPECT_FALSE(cut.allowed("/" + std::string(4096, 'x') + "y"));
    const auto rules =
        robots_rules::parse("User-agent: *\nDisallow: /" + std::string(16'000, '*') + "x$\n", "a");
    EXPECT_FALSE(rules.allowed("/" + std::string(4096, 'a') + "x"));
    EXPECT_TRUE(rules.allowed("/" + std::string(4096, 'x') + "y"));
    EXPECT_FALSE(
        robots_rules::parse("User-agent: *\nDisallow: " + std::string(1 << 20, '*'), "a").allowed("/a"));
}

TEST(robots, many_wildcards_against_a_long_path) {
    // As many wildcards as one line holds (Google's cap of 16,663 bytes).
    std::string pattern = "/";
    for (int i = 0; i < 8'000; ++i)
        pattern += "a*";
    const auto rules = robots_rules::parse("User-agent: *\nDisallow: " + pattern + "b\n", "a");
    // Not enough a's: each literal piece is found once, left to right, then the search gives up.
    EXPECT_TRUE(rules.allowed("/" + std::string(7'999, 'a') + "b"));
    EXPECT_FALSE(rules.allowed("/" + std::string(8'000, 'a') + "b"));
    EXPECT_TRUE(rules.allowed("/" + std::string(250'000, 'a')));
    // A pattern that would make a backtracking matcher explode.
    const auto nested = robots_rules::parse("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*b$\n", "a");
    EXPECT_TRUE(nested.allowed("/" + std::string(100'000, 'a')));
    EXPECT_FALSE(nested.allowed("/" + std::string(100'000, 'a') + "b"));
}

TEST(robots, binary_garbage) {
    std::mt19937 random(12345);
    std::string garbage(1 << 20, '\0');
    for (auto& c : garbage)
        c = static_cast<char>(random() & 0xFF);
    const auto noise = robots_rules::parse(garbage, "a");
    EXPECT_TRUE(noise.allowed("/robots.txt"));
    static_cast<void>(noise.allowed("/some/path"));

    const std::string embedded = std::string("\x00\xFF\xFE\x89PNG:\x01\x02\n", 11) + "User-agent: *\n" +
                                 std::string("Disallow: /private\x00\xFF\n", 21) + "Disallow: /admin\n" +
                                 std::string("\x7F\x80:\x81\n", 5);
    const auto rules = robots_rules::parse(embedded, "a");
    EXPECT_FALSE(rules.allowed("/admin"));
    EXPECT_FALSE(rules.allowed("/private%00%FF"));
    EXPECT_TRUE(rules.allowed("/private"));
    EXPECT_TRUE(rules.allowed("/public"));
}
