// The differential of the two link extractors: the fast streaming extractor against gumbo, its oracle, on the
// test corpus, a generated demo site, seeded random tag soup, and the documented deviations (docs/LINKS.md),
// each shown on a page where it applies. The fuzz target fuzz_links_differential runs the same comparison on
// what libFuzzer makes; bench/links_diff.cpp on real documentation trees.
#include "support/links_differential.hpp"

#include "html/links.hpp"
#include <asiocrawl_demo/site.hpp>

#include "gumbo/links_gumbo.hpp"
#include "gumbo/markup_guard.hpp"
#include "support/files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using asiocrawl::test::read_file;

namespace {

using asiocrawl::detail::compare_extractors;
using asiocrawl::detail::differential_totals;
using asiocrawl::detail::link_deviation;

TEST(LinksDifferential, TheFuzzCorporaAgree) {
    differential_totals totals;
    const std::filesystem::path corpora = std::filesystem::path(ASIOCRAWL_SOURCE_DIR) / "test/fuzz/corpus";
    for (const char* corpus : {"links", "links_differential"})
        for (const auto& entry : std::filesystem::directory_iterator(corpora / corpus)) {
            const auto result = compare_extractors(read_file(entry.path()));
            totals.add(result);
            EXPECT_FALSE(result.differs()) << entry.path() << "\n" << result.describe();
        }
    EXPECT_GT(totals.pages, 20u) << totals.summary();
    EXPECT_EQ(totals.undocumented, 0u) << totals.summary();
}

TEST(LinksDifferential, TheDemoSiteAgrees) {
    // Every kind of link the generator makes, with <base> pages, entities, unquoted and uppercase attributes,
    // frames, areas, meta refresh, and links in comments and scripts that are no links.
    asiocrawl::demo::site_options options;
    options.pages = 300;
    options.min_page_bytes = 1'000;
    options.max_page_bytes = 6'000;
    options.links = asiocrawl::demo::parse_link_mix("broken=2,fragment=3,off_site=1,off_host=1,non_http=1,"
                                                    "redirect=2,query=2,relative=10,absolute=5,styled=73,"
                                                    "base_pages=5");
    const auto site = asiocrawl::demo::generate_site(options);
    differential_totals totals;
    for (const auto& [target, resource] : site.resources) {
        if (!asiocrawl::is_html_media_type(resource.content_type))
            continue;
        const auto result =
            compare_extractors(asiocrawl::demo::expand_placeholders(resource.body, "127.0.0.1:1"));
        totals.add(result);
        EXPECT_FALSE(result.differs()) << target << "\n" << result.describe();
    }
    EXPECT_GT(totals.links, 1'000u) << totals.summary();
    EXPECT_EQ(totals.undocumented, 0u) << totals.summary();
}

// Tag soup from a fixed seed: the markup that decides where links are (tables, formatting elements, foreign
// content, templates, selects, framesets, raw text), with link-bearing tags often enough to be checked.
std::string random_soup(std::mt19937& random) {
    static const std::vector<std::string> tags = {"a",        "b",
                                                  "i",        "p",
                                                  "div",      "table",
                                                  "tr",       "td",
                                                  "th",       "tbody",
                                                  "caption",  "colgroup",
                                                  "col",      "svg",
                                                  "math",     "mi",
                                                  "mtext",    "foreignObject",
                                                  "desc",     "title",
                                                  "template", "select",
                                                  "option",   "frameset",
                                                  "frame",    "iframe",
                                                  "base",     "meta",
                                                  "area",     "script",
                                                  "style",    "textarea",
                                                  "noscript", "head",
                                                  "body",     "html",
                                                  "nobr",     "font",
                                                  "span",     "li",
                                                  "ul",       "dd",
                                                  "h1",       "button",
                                                  "form",     "input",
                                                  "img",      "image",
                                                  "br",       "object",
                                                  "marquee",  "pre",
                                                  "listing",  "xmp",
                                                  "rb",       "rt",
                                                  "ruby",     "annotation-xml",
                                                  "foo",      "g",
                                                  "em",       "s",
                                                  "code",     "hr",
                                                  "isindex",  "noframes",
                                                  "noembed",  "tfoot",
                                                  "thead",    "optgroup",
                                                  "plaintext"};
    static const std::vector<std::string> link_tags = {"a",     "a",    "a",    "area", "iframe",
                                                       "frame", "base", "meta", "link", "meta"};
    static const std::vector<std::string> attributes = {"href=/1",
                                                        "href=/2",
                                                        "href='/3?a=1&amp;b=2'",
                                                        "src=/s",
                                                        "xlink:href=/x",
                                                        "http-equiv=refresh content='0;url=/m'",
                                                        "color=red",
                                                        "encoding=text/html",
                                                        "type=hidden",
                                                        "href",
                                                        "href=/d href=/e",
                                                        "HREF=/U",
                                                        "rel=canonical",
                                                        "name=robots content=nofollow",
                                                        "name=ROBOTS content='noindex'"};
    static const std::vector<std::string> texts = {
        "x", " ", "\n", "&amp;", "&#32;", "<!-- c -->", "<![CDATA[c]]>", "<!DOCTYPE html>", "</>", "<", "&"};
    std::string doc;
    const int pieces = 1 + static_cast<int>(random() % 40);
    for (int i = 0; i < pieces; ++i) {
        const unsigned kind = random() % 12;
        if (kind < 6) {
            const bool link = random() % 3 == 0;
            std::string name = link ? link_tags[random() % link_tags.size()] : tags[random() % tags.size()];
            if ((name == "script" || name == "style" || name == "textarea" || name == "title" ||
                 name == "plaintext" || name == "xmp" || name == "iframe" || name == "noembed" ||
                 name == "noframes") &&
                random() % 4 != 0)
                name = "span";
            doc += "<" + name;
            const unsigned count = random() % 3 + (link ? 1 : 0);
            for (unsigned k = 0; k < count; ++k)
                doc += " " + attributes[random() % attributes.size()];
            doc += random() % 10 == 0 ? "/>" : ">";
        } else if (kind < 10) {
            doc += "</" + tags[random() % tags.size()] + ">";
        } else {
            doc += texts[random() % texts.size()];
        }
    }
    return doc;
}

TEST(LinksDifferential, RandomTagSoupAgrees) {
    std::mt19937 random(20'261'124);
    differential_totals totals;
    for (int i = 0; i < 10'000; ++i) {
        const std::string html = random_soup(random);
        const auto result = compare_extractors(html);
        totals.add(result);
        EXPECT_FALSE(result.differs()) << html << "\n" << result.describe();
        if (result.differs())
            break;
    }
    EXPECT_GT(totals.links, 3'000u) << totals.summary();
    EXPECT_GT(totals.canonical, 50u) << "the soup has canonical links to compare";
    EXPECT_GT(totals.meta_robots, 300u) << "the soup has robots meta elements to compare";
}

TEST(LinksDifferential, CrawlerDirectivesAgreeWhereTheTreeMovesThem) {
    // A <link> fostered out of a table comes before the table's earlier cells in document order: the first
    // canonical is the fostered one for both.
    for (const char* html :
         {"<table><tr><td><link rel=canonical href=/inside></td></tr><link rel=canonical "
          "href=/fostered></table>",
          "<head><link rel=canonical href=/c><meta name=robots content=none></head>",
          "<template><meta name=robots content=none><link rel=canonical href=/t></template>"
          "<select><meta name=robots content=nofollow></select>",
          "<svg><link rel=canonical href=/s></svg><math><meta name=robots content=noindex>",
          // A frameset replaces the body, and what the body said goes with it.
          "<p><meta name=robots content=none><link rel=canonical href=/gone></p><frameset>"}) {
        const auto result = compare_extractors(html);
        EXPECT_FALSE(result.differs()) << html << "\n" << result.describe();
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The deviations, each on a page where it shows.

TEST(LinksDeviations, GumboGivesUpWhereTheFastExtractorReads) {
    // Text in a table after <math><mi> fails an assertion in gumbo 0.10.1: without the markup guard gumbo
    // gives up on the page; the fast extractor has no such assertion.
    const std::string html = read_file(std::filesystem::path(ASIOCRAWL_SOURCE_DIR) /
                                       "test/fuzz/corpus/links/gumbo_assert_text_in_table");
    EXPECT_TRUE(asiocrawl::detail::extract_links_unguarded(html).parser_gave_up);
    const auto links = asiocrawl::extract_links(html).references;
    EXPECT_NE(std::find(links.begin(), links.end(), "/x"), links.end());
}

TEST(LinksDeviations, TheGuardRewritesWhatGumboCannotBearAndTheFastExtractorReadsTheOriginal) {
    // 600 nested SVG groups: the guard blanks the start tags past depth 512 for gumbo, the <a> among them;
    // the fast extractor needs no guard and reads the link.
    std::string html = "<svg>";
    for (int i = 0; i < 600; ++i)
        html += "<g>";
    html += "<a href=/deep></a>";
    EXPECT_TRUE(asiocrawl::detail::guard_markup(html).rewritten.has_value());
    asiocrawl::extract_options gumbo;
    gumbo.parser = asiocrawl::html_parser::gumbo;
    EXPECT_TRUE(asiocrawl::extract_links(html, gumbo).references.empty());
    EXPECT_EQ(asiocrawl::extract_links(html).references, std::vector<std::string>{"/deep"});
    // The differential compares the two on the guard's copy.
    const auto result = compare_extractors(html);
    EXPECT_EQ(result.deviation, link_deviation::guard_rewrote);
    EXPECT_FALSE(result.differs()) << result.describe();
}

} // namespace
