// The fast extractor's reading of HTML, case by case: the tokenizer states, the tree construction rules that
// decide where links are and in which order, and the places where gumbo (its oracle) departs from the HTML
// standard and the extractor follows gumbo. Every case is also run through gumbo, which must agree.
#include "html/extractor.hpp"

#include "html/links.hpp"
#include "html/tags.hpp"

#include "support/links_differential.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using asiocrawl::extract_links;
using asiocrawl::page_links;

struct reading_case {
    const char* name;
    std::string html;
    std::vector<std::string> references;
    std::optional<std::string> base_href = std::nullopt;
};

std::ostream& operator<<(std::ostream& out, const reading_case& c) {
    return out << c.name;
}

class FastExtractor : public testing::TestWithParam<reading_case> {};

TEST_P(FastExtractor, FindsTheLinksInDocumentOrder) {
    const reading_case& c = GetParam();
    const page_links links = extract_links(c.html);
    EXPECT_EQ(links.references, c.references);
    EXPECT_EQ(links.base_href, c.base_href);
}

TEST_P(FastExtractor, GumboAgrees) {
    const auto result = asiocrawl::detail::compare_extractors(GetParam().html);
    EXPECT_EQ(result.deviation, asiocrawl::detail::link_deviation::none);
    EXPECT_FALSE(result.differs()) << result.describe();
}

std::string with_nul(std::string_view before, std::string_view after) {
    std::string s(before);
    s.push_back('\0');
    s += after;
    return s;
}

const reading_case reading_cases[] = {
    // -- Character references in attribute values --
    {"named_with_semicolon", R"(<a href="/?a=1&amp;b=2">)", {"/?a=1&b=2"}},
    {"legacy_name_without_semicolon", R"(<a href="/&copy">)", {"/\xC2\xA9"}},
    {"no_semicolon_then_equals_is_text", R"(<a href="/?a=1&copy=2">)", {"/?a=1&copy=2"}},
    {"no_semicolon_then_letter_is_text", R"(<a href="/?x=&copyx">)", {"/?x=&copyx"}},
    {"longest_name_wins", R"(<a href="/&notin;&notit;">)", {"/\xE2\x88\x89&notit;"}},
    {"longest_name_wins_in_text", "<p>&notit;<a href=/1>", {"/1"}},
    {"name_that_needs_a_semicolon", R"(<a href="/&hellip">)", {"/&hellip"}},
    {"two_code_points", R"(<a href="/&NotEqualTilde;">)", {"/\xE2\x89\x82\xCC\xB8"}},
    {"uppercase_name", R"(<a href="/?a&AMP;b">)", {"/?a&b"}},
    {"decimal_without_semicolon", R"(<a href="/&#65x">)", {"/Ax"}},
    {"hex", R"(<a href="&#x2F;p&#X2f;q">)", {"/p/q"}},
    {"numeric_zero", R"(<a href="/&#0;">)", {"/\xEF\xBF\xBD"}},
    {"numeric_windows_1252_range", R"(<a href="/&#128;&#x9F;">)", {"/\xE2\x82\xAC\xC5\xB8"}},
    {"numeric_surrogate", R"(<a href="/&#xD800;">)", {"/\xEF\xBF\xBD"}},
    {"numeric_past_unicode", R"(<a href="/&#x110000;">)", {"/\xEF\xBF\xBD"}},
    {"hash_without_digits", R"(<a href="/&#;&#x;">)", {"/&#;&#x;"}},
    {"ampersand_before_quote", R"(<a href='/a&'>)", {"/a&"}},
    {"unquoted_value_with_reference", R"(<a href=/a&amp;b>)", {"/a&b"}},
    // gumbo keeps the digits in a 32-bit int: 2^32 + 0x41 wraps to 'A'.
    {"numeric_reference_wraps_like_gumbo", R"(<a href="/&#x100000041;">)", {"/A"}},
    // -- The input stream --
    {"crlf_in_a_value_is_one_line_feed", "<a href=\"/a\r\nb\rc\">", {"/a\nb\nc"}},
    {"control_characters_are_replaced", "<a href=\"/\x01\x7F\">", {"/\xEF\xBF\xBD\xEF\xBF\xBD"}},
    {"nul_in_a_value",
     with_nul("<a href=\"/a", "b\">"),
     {"/a\xEF\xBF\xBD"
      "b"}},
    {"overlong_utf8_is_replaced", "<a href=\"/\xC0\xAF\">", {"/\xEF\xBF\xBD\xEF\xBF\xBD"}},
    // -- Tags and attributes --
    {"self_closing_anchor_still_opens", "<a href=/x/>", {"/x/"}},
    {"attribute_name_with_equals", R"(<a =x href=/y>)", {"/y"}},
    {"unquoted_value_starting_with_equals", R"(<a href==/z>)", {"=/z"}},
    // gumbo drops a NUL that starts an attribute name.
    {"nul_before_an_attribute_name", with_nul("<a ", "href=/n>"), {"/n"}},
    // gumbo (with its error list off) keeps a valueless duplicate's name in its buffer: the next attribute is
    // "hrefhttp-equiv", not http-equiv.
    {"duplicate_without_value_joins_the_next_name",
     R"(<meta http-equiv=refresh href=/1 href http-equiv=x content="0;url=/m">)",
     {"/m"}},
    {"valueless_duplicate_swallows_http_equiv",
     R"(<meta href=1 href http-equiv=refresh content="0;url=/m">)",
     {}},
    {"tag_cut_by_the_end_is_dropped", R"(<a href=/a><a href="/b)", {"/a"}},
    // -- Markup that is not a tag --
    {"empty_comment", "<!--><a href=/1>", {"/1"}},
    {"dash_comment", "<!---><a href=/2>", {"/2"}},
    {"bang_close", "<!-- x --!><a href=/3>", {"/3"}},
    {"dashes_inside", "<!-- -- --><a href=/4>", {"/4"}},
    {"not_closed_by_dash_bang", "<!---!><a href=/no>--><a href=/5>", {"/5"}},
    {"bogus_comment", "<?php echo '<a href=/no>' ?><a href=/6>", {"/6"}},
    {"end_tag_with_space", "</ x><a href=/7>", {"/7"}},
    {"empty_end_tag_is_nothing", "</><a href=/8>", {"/8"}},
    {"less_than_then_digit_is_text", "<1<a href=/9>", {"/9"}},
    // A bogus comment, which ends at the first '>'.
    {"cdata_outside_foreign_content_is_a_comment", "<![CDATA[<a href=/no>]]><a href=/10>", {"/10"}},
    {"cdata_in_svg_is_text", "<svg><![CDATA[<a href=/no>]]></svg><a href=/11>", {"/11"}},
    // -- Raw text, RCDATA and script data --
    {"title", "<title><a href=/no></title ><a href=/1>", {"/1"}},
    {"title_end_tag_needs_its_name", "<title></titlex><a href=/no></title><a href=/2>", {"/2"}},
    {"textarea", "<textarea><a href=/no></textarea><a href=/3>", {"/3"}},
    {"style", "<style></p><a href=/no></style><a href=/4>", {"/4"}},
    {"xmp_noembed_noframes",
     "<xmp><a href=/no></xmp><noembed><a href=/no></noembed><noframes><a href=/no></noframes><a href=/5>",
     {"/5"}},
    {"iframe_content_is_text", "<iframe src=/f><a href=/no></iframe><a href=/6>", {"/f", "/6"}},
    {"script_escaped", "<script><!--</script><a href=/7>", {"/7"}},
    {"script_double_escaped",
     "<script><!--<script></script><a href=/no></script>--></script><a href=/8>",
     {"/8"}},
    {"script_end_tag_with_attributes", "<script></script foo=\"a>b\"><a href=/9>", {"/9"}},
    {"plaintext_is_the_rest", "<a href=/10><plaintext></plaintext><a href=/no>", {"/10"}},
    // A reference to 0xFFFFFFFF is -1 in gumbo's int: it reads as the end of the input.
    {"reference_that_ends_the_input", "<a href=/1>x&#xFFFFFFFF;<a href=/no>", {"/1"}},
    // -- Where the tree puts links: document order is the tree's --
    {"fostered_link_comes_before_the_table",
     "<table><tr><td><a href=/in></td></tr><a href=/out></table>",
     {"/out", "/in"}},
    {"fostered_element_keeps_its_content_before_the_table",
     "<table><tr><td><a href=/in></td></tr><div><area href=/a1><area href=/a2></div></table>",
     {"/a1", "/a2", "/in"}},
    {"anchor_reopened_after_a_paragraph", "<p><a href=/1>x</p>y", {"/1", "/1"}},
    {"anchor_cloned_by_the_adoption_agency", "<a href=/1><div>x</a>y", {"/1", "/1"}},
    {"nested_anchor_closes_the_first", "<a href=/1>x<div>y<a href=/2>z", {"/1", "/1", "/2"}},
    {"clone_fostered_out_of_a_table", "<p><a href=/1></p><table>x</table>", {"/1", "/1"}},
    {"pending_table_text_at_the_end", "<p><a href=/1></p><table>x", {"/1", "/1"}},
    {"whitespace_reopens_too", "<p><a href=/1></p> ", {"/1", "/1"}},
    {"linefeed_after_pre_is_dropped", "<p><a href=/1></p><pre>\n</pre>", {"/1"}},
    {"table_in_a_paragraph_in_quirks_mode",
     "<p><table><tr><td><a href=/1></td></tr></table></p><a href=/2>",
     {"/1", "/2"}},
    // gumbo's pending table text is its text buffer: a comment at a MathML text integration point (foreign
    // content) flushes it in place, and nothing is re-opened for it.
    {"table_text_flushed_by_a_foreign_comment", "<table><math><mi><div><a href=p></div>x<!---->", {"p"}},
    {"table_text_flushed_at_the_end", "<table><math><mi><div><a href=p></div>x", {"p", "p"}},
    // -- Elements that are not where they seem --
    {"frameset_drops_the_body", "<a href=/1><frameset><frame src=/2></frameset>", {"/2"}},
    {"frameset_too_late", "x<a href=/1><frameset><frame src=/2>", {"/1"}},
    {"frame_outside_a_frameset", "<frame src=/no><a href=/1>", {"/1"}},
    {"template_content_is_inert", "<template><a href=/no><base href=/no/></template><a href=/1>", {"/1"}},
    {"anchor_of_a_template_reopened_outside", "<nobr><template><a href=/t><object></template><svg>", {"/t"}},
    {"select_ignores_anchors", "<select><a href=/no><iframe src=/no></select><a href=/1>", {"/1"}},
    {"meta_refresh_in_select_ignored",
     R"(<select><meta http-equiv=refresh content="0;url=/no"></select><a href=/1>)",
     {"/1"}},
    {"noscript_is_read_without_scripting",
     "<head><noscript><a href=/1></noscript><body><noscript><a href=/2>",
     {"/1", "/1", "/2"}},
    {"first_base_in_tree_order",
     "<table><tr><td><base href=/1/></td></tr><base href=/2/></table>",
     {},
     "/2/"},
    {"image_is_img", "<image src=/i><a href=/1>", {"/1"}},
    // -- Foreign content --
    {"svg_anchor", "<svg><a href=/1><a xlink:href=/2>", {"/1", "/2"}},
    {"first_of_href_and_xlink_href",
     "<svg><a xlink:href=/x href=/h></a><a href=/h2 xlink:href=/x2>",
     {"/x", "/h2"}},
    {"mathml_anchor_is_not_a_link", "<math><a href=/no></math><a href=/1>", {"/1"}},
    {"mathml_text_integration_point", "<math><mi><a href=/1>", {"/1"}},
    {"html_integration_point",
     "<svg><foreignObject><a href=/1></foreignObject><desc><iframe src=/2>",
     {"/1", "/2"}},
    {"annotation_xml_with_html", R"(<math><annotation-xml encoding="Text/HTML"><a href=/1>)", {"/1"}},
    {"annotation_xml_without_html", "<math><annotation-xml><a href=/no>", {}},
    {"breakout_tag", "<math><p><a href=/1>", {"/1"}},
    {"font_breaks_out_only_with_attributes",
     "<math><font><a href=/no></font></math><math><font size=2><a href=/1>",
     {"/1"}},
    {"foreign_end_tag_names_are_compared_as_written", "<math></math><a href=/1>", {"/1"}},
    // gumbo takes a foreign end tag's name from its original text: "</math >" is "math ", not "math".
    {"foreign_end_tag_with_a_space_does_not_close", "<math></math ><a href=/no>", {}},
    // ... and "</>" before a tag is part of that tag's original text.
    {"empty_end_tag_before_a_foreign_tag", "</><math></math><a href=/no>", {}},
    {"self_closing_svg", "<svg/><a href=/1>", {"/1"}},
    // -- gumbo's tags: unknown names are all one name --
    {"unknown_end_tag_closes_any_unknown_element", "<foo><a href=/1></bar>x", {"/1", "/1"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, FastExtractor, testing::ValuesIn(reading_cases),
                         [](const testing::TestParamInfo<reading_case>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Page requisites: off by default, and never among the links.

TEST(FastExtractorRequisites, OffByDefault) {
    const page_links links = extract_links(R"(<img src=/i.png><a href=/1>)");
    EXPECT_TRUE(links.requisites.empty());
    EXPECT_EQ(links.references, std::vector<std::string>{"/1"});
}

struct requisite_case {
    const char* name;
    std::string html;
    std::vector<std::pair<std::string, asiocrawl::requisite_kind>> requisites;
};

std::ostream& operator<<(std::ostream& out, const requisite_case& c) {
    return out << c.name;
}

class FastExtractorRequisites : public testing::TestWithParam<requisite_case> {};

TEST_P(FastExtractorRequisites, AreFoundWithTheirKind) {
    asiocrawl::extract_options options;
    options.requisites = true;
    const page_links links = extract_links(GetParam().html, options);
    std::vector<std::pair<std::string, asiocrawl::requisite_kind>> found;
    for (const auto& r : links.requisites)
        found.emplace_back(r.url, r.kind);
    EXPECT_EQ(found, GetParam().requisites);
    // Requisites never change the links.
    EXPECT_EQ(links.references, extract_links(GetParam().html).references);
}

using asiocrawl::requisite_kind;

const requisite_case requisite_cases[] = {
    {"img",
     R"(<img src="/a.png" srcset="/b.png 2x, /c.png 3x">)",
     {{"/a.png", requisite_kind::image},
      {"/b.png", requisite_kind::image},
      {"/c.png", requisite_kind::image}}},
    {"srcset_with_commas_in_urls",
     R"(<img srcset="/x,1.png 1x,/y.png,/z.png 100w">)",
     {{"/x,1.png", requisite_kind::image}, {"/y.png,/z.png", requisite_kind::image}}},
    {"script",
     R"(<script src=/s.js></script><script>var x = "<img src=/no>";</script>)",
     {{"/s.js", requisite_kind::script}}},
    {"links_by_rel",
     R"(<link rel=stylesheet href=/s.css><link rel="shortcut icon" href=/f.ico><link rel=preload href=/p.woff>)"
     R"(<link rel=modulepreload href=/m.js><link rel=alternate href=/no.xml><link href=/none>)",
     {{"/s.css", requisite_kind::stylesheet},
      {"/f.ico", requisite_kind::icon},
      {"/p.woff", requisite_kind::preload},
      {"/m.js", requisite_kind::preload}}},
    {"media",
     R"(<video src=/v.mp4 poster=/p.jpg><source src=/v.webm></video><audio src=/a.ogg>)",
     {{"/p.jpg", requisite_kind::image},
      {"/v.mp4", requisite_kind::media},
      {"/v.webm", requisite_kind::media},
      {"/a.ogg", requisite_kind::media}}},
    {"object_and_embed",
     R"(<object data=/o.swf></object><embed src=/e.swf>)",
     {{"/o.swf", requisite_kind::object}, {"/e.swf", requisite_kind::embed}}},
    {"style_attribute",
     R"html(<div style="background: url('/bg.png')"></div>)html",
     {{"/bg.png", requisite_kind::style}}},
    {"style_element",
     "<style>@import '/i.css'; p { background: url(/p.png) } /* url(/no.png) */</style>",
     {{"/i.css", requisite_kind::stylesheet}, {"/p.png", requisite_kind::style}}},
    {"template_content_is_inert",
     R"(<template><img src=/no.png></template><img src=/yes.png>)",
     {{"/yes.png", requisite_kind::image}}},
    {"blank_values_dropped", R"(<img src=" "><script src=""></script>)", {}},
};

INSTANTIATE_TEST_SUITE_P(Cases, FastExtractorRequisites, testing::ValuesIn(requisite_cases),
                         [](const testing::TestParamInfo<requisite_case>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// CSS: url() and @import as the CSS tokenizer reads them.

struct css_case {
    const char* name;
    std::string css;
    std::vector<std::pair<std::string, bool>> references; // url, import
};

std::ostream& operator<<(std::ostream& out, const css_case& c) {
    return out << c.name;
}

class CssReferences : public testing::TestWithParam<css_case> {};

TEST_P(CssReferences, AreFound) {
    std::vector<std::pair<std::string, bool>> found;
    for (const auto& r : asiocrawl::extract_css_references(GetParam().css))
        found.emplace_back(r.url, r.import);
    EXPECT_EQ(found, GetParam().references);
}

const css_case css_cases[] = {
    {"unquoted", "a { background: url(/a.png) }", {{"/a.png", false}}},
    {"quoted",
     R"(a { background: url("/b.png") } b { background: url( '/c.png' ) })",
     {{"/b.png", false}, {"/c.png", false}}},
    {"whitespace_around", "a{background:url(  /d.png  )}", {{"/d.png", false}}},
    {"uppercase_function", "a{background:URL(/e.png)}", {{"/e.png", false}}},
    {"escaped_function_name", R"(a{background:\75rl(/f.png)})", {{"/f.png", false}}},
    {"escapes_in_url",
     R"(a{background:url(/g\(1\).png)} b{background:url(/h\20 i.png)})",
     {{"/g(1).png", false}, {"/h i.png", false}}},
    {"escapes_in_string", R"(a{background:url("/j\"k.png")})", {{"/j\"k.png", false}}},
    {"import_string", "@import \"/x.css\";", {{"/x.css", true}}},
    {"import_url", "@import url(/y.css) screen;", {{"/y.css", true}}},
    {"import_with_comment", "@import /* c */ '/z.css';", {{"/z.css", true}}},
    {"uppercase_import", "@IMPORT '/u.css';", {{"/u.css", true}}},
    {"string_after_another_at_rule_is_no_import", "@charset 'utf-8'; @media print { a { b: 'c' } }", {}},
    {"comment", "/* url(/no.png) */ a { }", {}},
    {"string", "a { content: 'url(/no.png)' }", {}},
    {"longer_identifier", "a { b: myurl(/no.png) -url(/no.png) }", {}},
    {"dimension", "a { b: 5url(/no.png) }", {}},
    {"hash", "a { b: #url(/no.png) }", {}},
    {"bad_url_with_quote_inside", "a { b: url(/x'y.png) } c { d: url(/ok.png) }", {{"/ok.png", false}}},
    {"bad_url_with_space_inside", "a { b: url(/x y.png) } c { d: url(/ok.png) }", {{"/ok.png", false}}},
    {"newline_ends_a_string", "a { content: 'x\n url(/after.png) }", {{"/after.png", false}}},
    {"line_continuation_in_string", "@import '/a\\\nb.css';", {{"/ab.css", true}}},
    {"cut_by_the_end", "a { b: url(/end.png", {{"/end.png", false}}},
    {"empty_url_dropped", "a { b: url() c: url('') }", {}},
};

INSTANTIATE_TEST_SUITE_P(Cases, CssReferences, testing::ValuesIn(css_cases),
                         [](const testing::TestParamInfo<css_case>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// The extractor's own bounds, for linear time on hostile nesting (docs/LINKS.md, deviations).

TEST(FastExtractorBounds, PastTheDepthLimitOrdinaryTagsOpenNoElement) {
    // 600 nested spans, then a paragraph whose anchor would be re-opened after it: past depth 512 the anchor
    // is no element, so nothing re-opens it. Its own link is still taken.
    std::string html;
    for (int i = 0; i < 600; ++i)
        html += "<span>";
    html += "<p><a href=/deep></p>x";
    EXPECT_EQ(extract_links(html).references, std::vector<std::string>{"/deep"});
    asiocrawl::detail::html::extractor_options options;
    options.max_depth = 10'000;
    asiocrawl::detail::html::extraction found;
    asiocrawl::detail::html::extract(html, options, found);
    EXPECT_EQ(found.entries.size(), 2u); // without the bound: the anchor and its clone, as gumbo has them
}

TEST(FastExtractorBounds, HostileNestingStaysLinear) {
    // Each of these would make a tree builder walk its whole stack on every tag; here the walks are bounded.
    std::string html = "<a href=/first>";
    for (int i = 0; i < 200'000; ++i)
        html += "<div><b id=" + std::to_string(i) + ">";
    for (int i = 0; i < 100'000; ++i)
        html += "</p>x";
    html += "<a href=/last>";
    const page_links links = extract_links(html);
    ASSERT_FALSE(links.references.empty());
    EXPECT_EQ(links.references.front(), "/first");
    EXPECT_EQ(links.references.back(), "/last");
}

TEST(FastExtractorBounds, TheLinkCapBoundsMemoryAndKeepsDocumentOrder) {
    // A hundred thousand links, cut at a thousand: the kept ones are the first in document order, even when a
    // later link is fostered before earlier ones.
    std::string html = "<table><tr><td>";
    for (int i = 0; i < 100'000; ++i)
        html += "<a href=/" + std::to_string(i) + ">";
    html += "</td></tr><a href=/fostered></table>";
    const page_links links = extract_links(html, 1'000);
    ASSERT_EQ(links.references.size(), 1'000u);
    EXPECT_EQ(links.references[0], "/fostered");
    EXPECT_EQ(links.references[1], "/0");
    EXPECT_EQ(links.references.back(), "/998");
    EXPECT_EQ(links.dropped_references, 100'001u - 1'000u);
}

TEST(HtmlTags, TheExtractorKnowsGumbosNamesOnly) {
    using asiocrawl::detail::html::find_tag;
    using asiocrawl::detail::html::tag;
    EXPECT_EQ(find_tag("a"), tag::a);
    EXPECT_EQ(find_tag("rtc"), tag::rtc);
    // The markup guard's name: gumbo 0.10.1 takes <dialog> for an unknown element, and so does the extractor.
    EXPECT_EQ(find_tag("dialog"), tag::unknown);
    EXPECT_EQ(find_tag("x-dialog"), tag::unknown);
}

} // namespace
