#include "policy/sitemap.hpp"

#include <asiocrawl/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

using asiocrawl::looks_gzipped;
using asiocrawl::parse_changefreq;
using asiocrawl::parse_w3c_datetime;
using asiocrawl::sitemap_changefreq;
using asiocrawl::sitemap_hints;
using namespace std::chrono;
using namespace std::chrono_literals;
using asiocrawl::parse_sitemap;
using asiocrawl::parse_sitemap_text;

namespace {

using strings = std::vector<std::string>;

struct sitemap_case {
    std::string name;
    std::string xml;
    bool is_index;
    strings locations;
};

const sitemap_case valid_cases[] = {
    {"urlset",
     R"(<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url>
    <loc>http://www.example.com/</loc>
    <lastmod>2005-01-01</lastmod>
    <changefreq>monthly</changefreq>
    <priority>0.8</priority>
  </url>
  <url><loc>http://www.example.com/catalog?item=12&amp;desc=vacation_hawaii</loc></url>
</urlset>)",
     false,
     {"http://www.example.com/", "http://www.example.com/catalog?item=12&desc=vacation_hawaii"}},
    {"sitemap index",
     R"(<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>http://www.example.com/sitemap1.xml.gz</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>
  <sitemap><loc>http://www.example.com/sitemap2.xml.gz</loc></sitemap>
</sitemapindex>)",
     true,
     {"http://www.example.com/sitemap1.xml.gz", "http://www.example.com/sitemap2.xml.gz"}},
    {"no namespace", "<urlset><url><loc>http://h/a</loc></url></urlset>", false, {"http://h/a"}},
    {"prefixed namespace",
     R"(<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>http://h/a</sm:loc></sm:url></sm:urlset>)",
     false,
     {"http://h/a"}},
    {"extension elements are not pages",
     R"(<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>http://h/page</loc>
    <image:image><image:loc>http://h/picture.jpg</image:loc></image:image>
    <xhtml:link rel="alternate" hreflang="de" href="http://h/de/page"/>
  </url>
</urlset>)",
     false,
     {"http://h/page"}},
    {"CDATA",
     "<urlset><url><loc><![CDATA[http://h/a?x=1&y=2]]></loc></url></urlset>",
     false,
     {"http://h/a?x=1&y=2"}},
    {"entities and character references",
     "<urlset><url><loc>http://h/a?b=&lt;&amp;&gt;&quot;&apos;&#x41;&#66;</loc></url></urlset>",
     false,
     {"http://h/a?b=<&>\"'AB"}},
    {"whitespace around and inside",
     "<urlset>\n <url>\n  <loc>\n\t http://h/a \r\n </loc>\n </url>\n</urlset>\n",
     false,
     {"http://h/a"}},
    {"text split by a comment is joined",
     "<urlset><url><loc>http://h/<!-- x -->a</loc></url></urlset>",
     false,
     {"http://h/a"}},
    {"empty loc skipped",
     "<urlset><url><loc>  </loc></url><url><loc>http://h/b</loc></url></urlset>",
     false,
     {"http://h/b"}},
    {"loc outside url ignored",
     "<urlset><loc>http://h/stray</loc><url><loc>http://h/a</loc></url></urlset>",
     false,
     {"http://h/a"}},
    {"wrong entry element ignored",
     "<sitemapindex><url><loc>http://h/page</loc></url><sitemap><loc>http://h/s.xml</loc></sitemap></"
     "sitemapindex>",
     true,
     {"http://h/s.xml"}},
    {"UTF-8 BOM and non-ASCII",
     "\xEF\xBB\xBF<urlset><url><loc>http://h/\xC3\xA9t\xC3\xA9</loc></url></urlset>",
     false,
     {"http://h/\xC3\xA9t\xC3\xA9"}},
    {"declared Latin-1 becomes UTF-8",
     "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>http://h/\xE9</loc></url></urlset>",
     false,
     {"http://h/\xC3\xA9"}},
    {"UTF-16LE with BOM", std::string("\xFF\xFE<\0u\0r\0l\0s\0e\0t\0/\0>\0", 20), false, {}},
    {"a harmless doctype without entities",
     "<!DOCTYPE urlset><urlset><url><loc>http://h/a</loc></url></urlset>",
     false,
     {"http://h/a"}},
    {"empty urlset", "<urlset/>", false, {}},
};

const std::pair<std::string, std::string> invalid_cases[] = {
    {"empty", ""},
    {"plain text", "http://h/a\nhttp://h/b\n"},
    {"HTML", "<html><body><a href=\"/x\">x</a></body></html>"},
    {"RSS", "<rss version=\"2.0\"><channel><item><link>http://h/a</link></item></channel></rss>"},
    {"unclosed", "<urlset><url><loc>http://h/a</loc></url>"},
    {"mismatched tags", "<urlset><url><loc>http://h/a</url></loc></urlset>"},
    {"unescaped ampersand", "<urlset><url><loc>http://h/a?x=1&y=2</loc></url></urlset>"},
    {"undefined entity", "<urlset><url><loc>http://h/&nbsp;</loc></url></urlset>"},
    {"junk after the root", "<urlset></urlset><urlset></urlset>"},
    {"binary", std::string("\x1F\x8B\x08\x00\x00\x00\x00\x00\x00\x03\xFF\x00", 12)},
    {"billion laughs", R"(<?xml version="1.0"?>
<!DOCTYPE urlset [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset><url><loc>http://h/&lol9;</loc></url></urlset>)"},
    {"external entity", R"(<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<urlset><url><loc>http://h/&xxe;</loc></url></urlset>)"},
    {"parameter entity", R"(<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY % p SYSTEM "http://127.0.0.1:1/evil.dtd"> %p;]>
<urlset><url><loc>http://h/a</loc></url></urlset>)"},
    {"single internal entity",
     R"(<!DOCTYPE urlset [<!ENTITY h "http://h">]><urlset><url><loc>&h;/a</loc></url></urlset>)"},
};

std::string urlset_of(int count) {
    std::string xml = "<urlset>";
    for (int i = 0; i < count; ++i)
        xml += "<url><loc>http://h/" + std::to_string(i) + "</loc></url>";
    return xml + "</urlset>";
}

} // namespace

TEST(sitemap, valid_documents) {
    for (const auto& c : valid_cases) {
        SCOPED_TRACE(c.name);
        const auto parsed = parse_sitemap(c.xml);
        ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
        EXPECT_EQ(parsed->is_index, c.is_index);
        EXPECT_EQ(parsed->locations, c.locations);
        EXPECT_EQ(parsed->hints.size(), parsed->locations.size());
        EXPECT_FALSE(parsed->truncated);
    }
}

TEST(sitemap, invalid_documents_are_bad_responses) {
    for (const auto& [name, xml] : invalid_cases) {
        SCOPED_TRACE(name);
        const auto parsed = parse_sitemap(xml);
        ASSERT_FALSE(parsed.has_value()) << parsed->locations.size();
        EXPECT_EQ(parsed.error(), asiocrawl::make_error_code(asiocrawl::error::bad_response));
    }
}

TEST(sitemap, truncates_at_max_entries) {
    const auto exact = parse_sitemap(urlset_of(3), 3);
    ASSERT_TRUE(exact.has_value());
    EXPECT_EQ(exact->locations, (strings{"http://h/0", "http://h/1", "http://h/2"}));
    EXPECT_FALSE(exact->truncated);

    const auto over = parse_sitemap(urlset_of(5), 3);
    ASSERT_TRUE(over.has_value());
    EXPECT_EQ(over->locations, (strings{"http://h/0", "http://h/1", "http://h/2"}));
    EXPECT_EQ(over->hints.size(), 3u);
    EXPECT_TRUE(over->truncated);

    // Stopping early means what follows the cap is never read, malformed or not.
    const auto cut = parse_sitemap(urlset_of(5) + "<garbage", 4);
    ASSERT_TRUE(cut.has_value());
    EXPECT_TRUE(cut->truncated);
    EXPECT_EQ(cut->locations.size(), 4u);
}

TEST(sitemap, default_cap_is_the_protocol_limit) {
    const auto parsed = parse_sitemap(urlset_of(50'001));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->locations.size(), 50'000u);
    EXPECT_EQ(parsed->locations.back(), "http://h/49999");
    EXPECT_TRUE(parsed->truncated);
}

TEST(sitemap, document_larger_than_one_parser_chunk) {
    const std::string padding(3 << 20, ' ');
    const auto parsed =
        parse_sitemap("<urlset>" + padding + "<url><loc>http://h/" + std::string(1 << 20, 'a') +
                      "</loc></url>" + padding + "<url><loc>http://h/b</loc></url></urlset>");
    ASSERT_TRUE(parsed.has_value());
    ASSERT_EQ(parsed->locations.size(), 2u);
    EXPECT_EQ(parsed->locations[0].size(), std::string("http://h/").size() + (1 << 20));
    EXPECT_EQ(parsed->locations[1], "http://h/b");
}

TEST(sitemap, text_sitemaps) {
    const std::pair<std::string, strings> cases[] = {
        {"http://h/a\nhttp://h/b\n", {"http://h/a", "http://h/b"}},
        {"\xEF\xBB\xBFhttps://h/a\r\nHTTPS://h/b\r\n\r\n  http://h/c  \n",
         {"https://h/a", "HTTPS://h/b", "http://h/c"}},
        {"http://h/no-final-newline", {"http://h/no-final-newline"}},
        {"<html><body>Not found</body></html>", {}},
        {"ftp://h/a\n/relative\nhttp:/h\nmailto:x@h\n", {}},
        {"", {}},
        {std::string("\x00\xFF\nhttp://h/a\n", 14), {"http://h/a"}},
    };
    for (const auto& [text, expected] : cases) {
        SCOPED_TRACE(text);
        const auto parsed = parse_sitemap_text(text);
        EXPECT_EQ(parsed.locations, expected);
        EXPECT_EQ(parsed.hints, std::vector<asiocrawl::sitemap_hints>(expected.size()));
        EXPECT_FALSE(parsed.is_index);
        EXPECT_FALSE(parsed.truncated);
    }
    const auto capped = parse_sitemap_text("http://h/a\nhttp://h/b\nhttp://h/c\n", 2);
    EXPECT_EQ(capped.locations, (strings{"http://h/a", "http://h/b"}));
    EXPECT_TRUE(capped.truncated);
    EXPECT_FALSE(parse_sitemap_text("http://h/a\nhttp://h/b\n\n", 2).truncated);
}

TEST(sitemap, gzip_magic) {
    EXPECT_TRUE(looks_gzipped(std::string("\x1F\x8B\x08\x00", 4)));
    EXPECT_TRUE(looks_gzipped("\x1F\x8B"));
    EXPECT_FALSE(looks_gzipped("\x1F"));
    EXPECT_FALSE(looks_gzipped(""));
    EXPECT_FALSE(looks_gzipped("<?xml"));
    EXPECT_FALSE(looks_gzipped("\x8B\x1F"));
}

TEST(sitemap, w3c_datetimes) {
    const sys_seconds day{sys_days{2005y / January / 2}};
    const std::pair<std::string, std::optional<sys_seconds>> cases[] = {
        // The six forms of the W3C note.
        {"2005", sys_days{2005y / January / 1}},
        {"2005-07", sys_days{2005y / July / 1}},
        {"2005-01-02", day},
        {"2005-01-02T03:04Z", day + 3h + 4min},
        {"2005-01-02T03:04:05Z", day + 3h + 4min + 5s},
        {"2005-01-02T03:04:05.9Z", day + 3h + 4min + 5s},
        {"2005-01-02T03:04:05.123456789Z", day + 3h + 4min + 5s},
        // Zones: local time minus the offset.
        {"2005-01-02T03:04:05+01:00", day + 2h + 4min + 5s},
        {"2005-01-02T03:04-05:30", day + 8h + 34min},
        {"2005-01-02T00:00:00+00:00", day},
        {"2005-01-02T23:30:00-23:59", day + 23h + 30min + 23h + 59min},
        {"2004-10-01T18:23:17+00:00", sys_days{2004y / October / 1} + 18h + 23min + 17s},
        // Calendar: leap years, a leap second read as the next minute's first.
        {"2024-02-29", sys_days{2024y / February / 29}},
        {"2000-02-29", sys_days{2000y / February / 29}},
        {"2016-12-31T23:59:60Z", sys_days{2017y / January / 1}},
        {"0000", sys_days{0y / January / 1}},
        {"9999-12-31T23:59:59Z", sys_days{9999y / December / 31} + 23h + 59min + 59s},
        // Not dates: impossible values.
        {"2023-02-29", std::nullopt},
        {"1900-02-29", std::nullopt},
        {"2005-13", std::nullopt},
        {"2005-00", std::nullopt},
        {"2005-01-00", std::nullopt},
        {"2005-04-31", std::nullopt},
        {"2005-01-02T24:00Z", std::nullopt},
        {"2005-01-02T03:60Z", std::nullopt},
        {"2005-01-02T03:04:61Z", std::nullopt},
        {"2005-01-02T03:04+24:00", std::nullopt},
        {"2005-01-02T03:04+01:60", std::nullopt},
        // Not the forms: no zone after a time, a time without a full date, other separators and widths.
        {"2005-01-02T03:04:05", std::nullopt},
        {"2005-01-02T03:04", std::nullopt},
        {"2005-01T03:04Z", std::nullopt},
        {"2005-01-02 03:04:05Z", std::nullopt},
        {"2005-01-02t03:04:05z", std::nullopt},
        {"2005-01-02T03:04:05+0100", std::nullopt},
        {"2005-01-02T03:04:05+01", std::nullopt},
        {"2005-01-02T03Z", std::nullopt},
        {"2005-01-02T3:04Z", std::nullopt},
        {"2005-01-02T03:04:05.Z", std::nullopt},
        {"2005-1-2", std::nullopt},
        {"05-01-02", std::nullopt},
        {"20050102", std::nullopt},
        {"12005", std::nullopt},
        {"2005-", std::nullopt},
        {"2005-01-", std::nullopt},
        {" 2005", std::nullopt},
        {"2005-01-02Z", std::nullopt},
        {"2005-01-02T03:04:05Z ", std::nullopt},
        {"-2005", std::nullopt},
        {"+2005", std::nullopt},
        {"", std::nullopt},
        {"yesterday", std::nullopt},
    };
    for (const auto& [text, expected] : cases)
        EXPECT_EQ(parse_w3c_datetime(text), expected) << text;
}

TEST(sitemap, w3c_datetimes_to_the_microsecond) {
    using namespace std::chrono;
    // 2026-09-01T10:00:00Z is 1,788,256,800 s after the epoch.
    const sys_time<microseconds> ten_o_clock{seconds(1'788'256'800)};
    const std::pair<std::string, std::optional<sys_time<microseconds>>> cases[] = {
        {"2026-09-01T10:00:00Z", ten_o_clock},
        {"2026-09-01T10:00:00.25Z", ten_o_clock + microseconds(250'000)},
        {"2026-09-01T10:00:00.811891Z", ten_o_clock + microseconds(811'891)},
        {"2026-09-01T10:00:00.8118919Z",
         ten_o_clock + microseconds(811'891)}, // past the microsecond: dropped
        {"2026-09-01T12:00:00.5+02:00", ten_o_clock + microseconds(500'000)},
        {"2026-09-01", ten_o_clock - hours(10)},
        {"2026-09-01T10:00:00.Z", std::nullopt},
    };
    for (const auto& [text, expected] : cases) {
        EXPECT_EQ(asiocrawl::parse_w3c_datetime_micros(text), expected) << text;
        // The whole-second form is the same time with its fraction dropped.
        if (expected) {
            EXPECT_EQ(parse_w3c_datetime(text), floor<seconds>(*expected)) << text;
        }
    }
}

TEST(sitemap, changefreq_values) {
    const std::pair<std::string, std::optional<sitemap_changefreq>> cases[] = {
        {"always", sitemap_changefreq::always},
        {"hourly", sitemap_changefreq::hourly},
        {"daily", sitemap_changefreq::daily},
        {"weekly", sitemap_changefreq::weekly},
        {"monthly", sitemap_changefreq::monthly},
        {"yearly", sitemap_changefreq::yearly},
        {"never", sitemap_changefreq::never},
        {"Daily", sitemap_changefreq::daily},
        {"WEEKLY", sitemap_changefreq::weekly},
        {"", std::nullopt},
        {"day", std::nullopt},
        {"dailyy", std::nullopt},
        {"1d", std::nullopt},
        {" daily", std::nullopt},
    };
    for (const auto& [text, expected] : cases)
        EXPECT_EQ(parse_changefreq(text), expected) << text;
}

TEST(sitemap, entries_carry_their_lastmod_and_changefreq) {
    const sys_seconds jan1{sys_days{2005y / January / 1}};
    const auto parsed = parse_sitemap(R"(<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>http://h/both</loc><lastmod>2005-01-01</lastmod><changefreq>monthly</changefreq></url>
  <url><changefreq> daily </changefreq><lastmod>
    2005-01-01T10:00:00+02:00 </lastmod><loc>http://h/loc-last</loc></url>
  <url><loc>http://h/none</loc></url>
  <url><loc>http://h/invalid</loc><lastmod>last tuesday</lastmod><changefreq>sometimes</changefreq></url>
  <url><loc>http://h/repeated</loc><lastmod>2005-01-01</lastmod><lastmod>2005-01-02</lastmod></url>
  <url><loc>http://h/nested</loc><news:news><lastmod>2005-01-01</lastmod></news:news></url>
  <url><loc>http://h/overlong</loc><lastmod>2005-01-01T00:00:00.)" +
                                      std::string(100, '0') + R"(Z</lastmod></url>
  <url><loc>http://h/two-a</loc><loc>http://h/two-b</loc><changefreq>never</changefreq></url>
  <url><lastmod>2005-01-01</lastmod></url>
  <url><loc>http://h/after-a-hintless-entry</loc></url>
</urlset>)");
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
    EXPECT_EQ(parsed->locations,
              (strings{"http://h/both", "http://h/loc-last", "http://h/none", "http://h/invalid",
                       "http://h/repeated", "http://h/nested", "http://h/overlong", "http://h/two-a",
                       "http://h/two-b", "http://h/after-a-hintless-entry"}));
    const std::vector<sitemap_hints> expected = {
        {jan1, sitemap_changefreq::monthly},
        {jan1 + 8h, sitemap_changefreq::daily},
        {},
        {},
        {jan1 + days(1), std::nullopt},
        {},
        {},
        {std::nullopt, sitemap_changefreq::never},
        {std::nullopt, sitemap_changefreq::never},
        {},
    };
    EXPECT_EQ(parsed->hints, expected);

    // An index's entries have a lastmod; a changefreq there is not part of the protocol.
    const auto index = parse_sitemap(R"(<sitemapindex>
  <sitemap><loc>http://h/s1.xml</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>
  <sitemap><loc>http://h/s2.xml</loc><changefreq>daily</changefreq></sitemap>
</sitemapindex>)");
    ASSERT_TRUE(index.has_value());
    EXPECT_EQ(index->hints, (std::vector<sitemap_hints>{
                                {sys_days{2004y / October / 1} + 18h + 23min + 17s, std::nullopt}, {}}));
}
