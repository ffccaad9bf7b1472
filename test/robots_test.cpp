#include <asiocrawl/robots.hpp>

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
    {"our token with a version", "User-agent: foobot\nDisallow: /\n", "FooBot/3.0", {{"/x", false}}},
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
    {"lines without colon and unknown keys are ignored",
     "User-agent: *\nDisallow /a\nNoindex: /b\nfoo\nDisallow: /c\n",
     "a",
     {{"/a", true}, {"/b", true}, {"/c", false}}},
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
    const auto rules =
        robots_rules::parse("User-agent: *\nDisallow: /" + std::string(1 << 20, '*') + "x$\n", "a");
    EXPECT_FALSE(rules.allowed("/" + std::string(4096, 'a') + "x"));
    EXPECT_TRUE(rules.allowed("/" + std::string(4096, 'x') + "y"));
    EXPECT_FALSE(
        robots_rules::parse("User-agent: *\nDisallow: " + std::string(1 << 20, '*'), "a").allowed("/a"));
}

TEST(robots, many_wildcards_against_a_long_path) {
    std::string pattern = "/";
    for (int i = 0; i < 250'000; ++i)
        pattern += "a*";
    const auto rules = robots_rules::parse("User-agent: *\nDisallow: " + pattern + "b\n", "a");
    // Not enough a's: each literal piece is found once, left to right, then the search gives up.
    EXPECT_TRUE(rules.allowed("/" + std::string(100'000, 'a') + "b"));
    EXPECT_FALSE(rules.allowed("/" + std::string(250'000, 'a') + "b"));
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
