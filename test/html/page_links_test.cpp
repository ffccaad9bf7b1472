// From a fetched page to the URLs it links to: the page's character encoding (decoded first, queries encoded
// in it as the WHATWG URL parser does), the link cap, the parser choice and page requisites.
#include "html/page_links.hpp"

#include "url/url.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using asiocrawl::html_parser;
using asiocrawl::requisite_kind;
using asiocrawl::detail::link_options;
using asiocrawl::detail::resolve_links;
using testing::ElementsAre;

const auto page = *asiocrawl::parse_root("http://example.com/dir/page.html");

std::vector<std::string> urls_of(const asiocrawl::detail::resolved_links& links) {
    std::vector<std::string> out;
    for (const auto& u : links.urls)
        out.push_back(u);
    return out;
}

link_options with_charset(std::string charset) {
    link_options options;
    options.charset = std::move(charset);
    return options;
}

// ---- normalize_reference with the document's encoding ----

struct encoded_case {
    const char* name;
    std::string reference; // UTF-8, as the decoded document has it
    std::string encoding;
    std::string url;
};

std::ostream& operator<<(std::ostream& out, const encoded_case& c) {
    return out << c.name;
}

class NormalizeReferenceWithEncoding : public testing::TestWithParam<encoded_case> {};

TEST_P(NormalizeReferenceWithEncoding, EncodesTheQueryInTheDocumentsEncoding) {
    const encoded_case& c = GetParam();
    const auto url = asiocrawl::normalize_reference(page, c.reference, c.encoding);
    ASSERT_TRUE(url) << url.error().message();
    EXPECT_EQ(url->buffer(), c.url);
}

const encoded_case encoded_cases[] = {
    {"path_utf8_query_windows_1252", "t\xC3\xA9?q=\xC3\xA9", "windows-1252",
     "http://example.com/dir/t%C3%A9?q=%E9"},
    {"utf8_page", "t\xC3\xA9?q=\xC3\xA9", "utf-8", "http://example.com/dir/t%C3%A9?q=%C3%A9"},
    {"undeclared_page_is_utf8", "t\xC3\xA9?q=\xC3\xA9", "", "http://example.com/dir/t%C3%A9?q=%C3%A9"},
    {"utf16_page_uses_utf8", "?q=\xC3\xA9", "utf-16le", "http://example.com/dir/page.html?q=%C3%A9"},
    {"fragment_stays_utf8", "x?q=\xC3\xA9#\xC3\xA9", "windows-1252", "http://example.com/dir/x?q=%E9"},
    {"hash_before_question_mark_is_no_query", "x#a?\xC3\xA9", "windows-1252", "http://example.com/dir/x"},
    {"character_the_encoding_lacks", "?q=\xE2\x98\x83", "windows-1252",
     "http://example.com/dir/page.html?q=%26%239731%3B"},
    {"shift_jis", "/s?q=\xE6\x97\xA5\xE6\x9C\xAC", "shift_jis", "http://example.com/s?q=%93%FA%96%7B"},
    {"absolute_reference", "http://other.example/?q=\xC3\xA9\xC3\xB1", "iso-8859-2",
     "http://other.example/?q=%E9%26%23241%3B"},
    {"ascii_query_unchanged", "x?a=1&b=2", "windows-1252", "http://example.com/dir/x?a=1&b=2"},
};

INSTANTIATE_TEST_SUITE_P(Cases, NormalizeReferenceWithEncoding, testing::ValuesIn(encoded_cases),
                         [](const testing::TestParamInfo<encoded_case>& info) { return info.param.name; });

// ---- resolve_links ----

TEST(ResolveLinks, AWindows1252PageRequestsWhatABrowserRequests) {
    // Each non-ASCII byte used to become U+FFFD, and distinct links collapsed into one wrong URL.
    const std::string body = "<a href=\"t\xE9?q=\xE9\">1</a><a href=\"t\xE8?q=\xE8\">2</a>";
    const auto links = resolve_links(page, body, with_charset("windows-1252"));
    EXPECT_THAT(urls_of(links),
                ElementsAre("http://example.com/dir/t%C3%A9?q=%E9", "http://example.com/dir/t%C3%A8?q=%E8"));
    EXPECT_EQ(links.body, body); // the page is handed back as it came
}

TEST(ResolveLinks, TheBaseIsResolvedWithTheEncodingToo) {
    const std::string body = "<base href=\"/b\xE9/\"><a href=\"x?q=\xE9\">";
    EXPECT_THAT(urls_of(resolve_links(page, body, with_charset("windows-1252"))),
                ElementsAre("http://example.com/b%C3%A9/x?q=%E9"));
}

TEST(ResolveLinks, AShiftJisPageIsDecodedBeforeItIsTokenized) {
    // 0x95 0x5C is one character whose second byte is '\\' in ASCII: read as bytes, it would become a '/'.
    const std::string body = "<a href=\"/\x95\x5C?q=\x95\x5C\">";
    EXPECT_THAT(urls_of(resolve_links(page, body, with_charset("shift_jis"))),
                ElementsAre("http://example.com/%E8%A1%A8?q=%95%5C"));
}

TEST(ResolveLinks, AUtf16PageIsReadAsItsCharacters) {
    const std::u16string text = u"\xFEFF<a href=\"/\x00E9?q=\x00E9\">";
    std::string body;
    for (const char16_t c : text) {
        body.push_back(static_cast<char>(c & 0xFF));
        body.push_back(static_cast<char>(c >> 8));
    }
    EXPECT_THAT(urls_of(resolve_links(page, body, with_charset("utf-16le"))),
                ElementsAre("http://example.com/%C3%A9?q=%C3%A9"));
}

TEST(ResolveLinks, AUtf8ByteOrderMarkIsNotText) {
    // As text before <!DOCTYPE>, the mark would put the page in quirks mode, where a table stays in a <p>.
    const std::string body = "\xEF\xBB\xBF<!DOCTYPE html><a href=/x>";
    EXPECT_THAT(urls_of(resolve_links(page, body, with_charset("utf-8"))),
                ElementsAre("http://example.com/x"));
}

TEST(ResolveLinks, LinksPastTheCapAreCounted) {
    link_options options;
    options.max_links = 2;
    for (const html_parser parser : {html_parser::fast, html_parser::gumbo}) {
        options.parser = parser;
        const auto links = resolve_links(page, "<a href=/1><a href=/2><a href=/3><a href=/4>", options);
        EXPECT_THAT(urls_of(links), ElementsAre("http://example.com/1", "http://example.com/2"));
        EXPECT_EQ(links.over_page_cap, 2u);
    }
}

TEST(ResolveLinks, TheCapCountsDistinctLinksNotTheirRepeats) {
    // Issue 26 item 8: a table of contents links to each page many times, with fragments. The cap keeps
    // the first max_links distinct links and counts the links to the others, not the repeats.
    link_options options;
    options.max_links = 3;
    const auto links = resolve_links(
        page,
        "<a href=/l0><a href=/l0#a><a href=l0><a href=/l0#b><a href=/l1><a href=/l2><a href=/l3><a href=/l4>",
        options);
    EXPECT_THAT(urls_of(links),
                ElementsAre("http://example.com/l0", "http://example.com/dir/l0", "http://example.com/l1"));
    EXPECT_EQ(links.over_page_cap, 3u);
}

TEST(ResolveLinks, InvalidAndNonHttpLinksAreCounted) {
    const auto links =
        resolve_links(page, "<a href=mailto:x@example.com><a href='http://[oops/'><a href=/ok>", {});
    EXPECT_THAT(urls_of(links), ElementsAre("http://example.com/ok"));
    EXPECT_EQ(links.not_http, 1u);
    EXPECT_EQ(links.invalid, 1u);
}

TEST(ResolveLinks, RequisitesComeWithTheirKindWhenAskedFor) {
    const std::string body = "<link rel=stylesheet href=s.css><img src=i.png><a href=/l>"
                             "<script src=mailto:x></script><style>p{background:url(bg.png)}</style>";
    link_options options;
    EXPECT_TRUE(resolve_links(page, body, options).requisites.empty());
    options.requisites = true;
    const auto links = resolve_links(page, body, options);
    EXPECT_THAT(urls_of(links), ElementsAre("http://example.com/l"));
    std::vector<std::pair<std::string, requisite_kind>> found;
    for (const auto& r : links.requisites)
        found.emplace_back(r.url.buffer(), r.kind);
    EXPECT_THAT(
        found, ElementsAre(std::pair{std::string("http://example.com/dir/s.css"), requisite_kind::stylesheet},
                           std::pair{std::string("http://example.com/dir/i.png"), requisite_kind::image},
                           std::pair{std::string("http://example.com/dir/bg.png"), requisite_kind::style}));
}

TEST(ResolveCssReferences, AreResolvedAgainstTheStylesheet) {
    const auto sheet = *asiocrawl::parse_root("http://example.com/css/site.css");
    const auto found = asiocrawl::detail::resolve_css_references(
        sheet, "@import 'a.css'; p { background: url(../i/b.png) }", "");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].url.buffer(), "http://example.com/css/a.css");
    EXPECT_EQ(found[0].kind, requisite_kind::stylesheet);
    EXPECT_EQ(found[1].url.buffer(), "http://example.com/i/b.png");
    EXPECT_EQ(found[1].kind, requisite_kind::style);
}

TEST(LinkOptions, ComeFromTheCrawlConfig) {
    asiocrawl::crawler_config config;
    config.traps.max_links_per_page = 77;
    config.html.parser = html_parser::gumbo;
    const link_options options = asiocrawl::detail::link_options_for(config, "windows-1252");
    EXPECT_EQ(options.max_links, 77u);
    EXPECT_EQ(options.parser, html_parser::gumbo);
    EXPECT_EQ(options.charset, "windows-1252");
    EXPECT_FALSE(options.requisites);
}

} // namespace
