#include "gumbo/markup_guard.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using asiocrawl::detail::guard_markup;
using asiocrawl::detail::markup_guard_limits;
using asiocrawl::detail::markup_guard_result;

// The default limits but the element budget, for the tests of the other limits on big documents.
markup_guard_limits without_element_budget() {
    markup_guard_limits limits;
    limits.max_elements = static_cast<std::size_t>(-1);
    return limits;
}

std::string repeat(std::string_view piece, int times) {
    std::string out;
    out.reserve(piece.size() * static_cast<std::size_t>(times));
    for (int i = 0; i < times; ++i)
        out += piece;
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The tokenizer and the tree model: what the guard counts in each construct, with limits it never reaches.

struct scan_case {
    const char* name;
    std::string html;
    std::size_t start_tags;
    std::size_t end_tags;
    std::size_t max_depth;
    std::size_t reconstructed = 0;
};

std::ostream& operator<<(std::ostream& out, const scan_case& c) {
    return out << c.name;
}

class MarkupGuardScan : public testing::TestWithParam<scan_case> {};

TEST_P(MarkupGuardScan, CountsTagsAndDepthAndLeavesTheInputAlone) {
    const scan_case& c = GetParam();
    const markup_guard_result r = guard_markup(c.html);
    EXPECT_EQ(r.start_tags, c.start_tags) << c.html;
    EXPECT_EQ(r.end_tags, c.end_tags) << c.html;
    EXPECT_EQ(r.max_depth, c.max_depth) << c.html;
    EXPECT_EQ(r.reconstructed, c.reconstructed) << c.html;
    EXPECT_FALSE(r.rewritten.has_value()) << "within the limits, the input is parsed as it is";
    EXPECT_EQ(r.blanked_tags, 0u);
    EXPECT_EQ(r.blanked_attributes, 0u);
}

const scan_case scan_cases[] = {
    {"nested_elements", "<div><div><span>", 3, 0, 3},
    {"empty_input", "", 0, 0, 0},
    {"text_only", "just text", 0, 0, 0},
    // Comments
    {"comment_hides_markup", "<!-- <div> --><p>", 1, 0, 1},
    {"comment_abrupt", "<!--><div>", 1, 0, 1},
    {"comment_abrupt_dash", "<!---><div>", 1, 0, 1},
    {"comment_empty", "<!----><div>", 1, 0, 1},
    {"comment_bang_end", "<!-- <i> --!><div>", 1, 0, 1},
    {"comment_dashes_inside", "<!-- a -- b <i> --!x <i> --><div>", 1, 0, 1},
    {"comment_longer_end", "<!-- <i> ---><div>", 1, 0, 1},
    {"comment_unclosed", "<!-- <div>", 0, 0, 0},
    // Doctype, bogus comments and stray '<'
    {"doctype", "<!DOCTYPE html><div>", 1, 0, 1},
    {"doctype_ends_at_first_gt", "<!DOCTYPE x \"a><div>\">", 1, 0, 1},
    {"bogus_comment", "<!x <i>><div>", 1, 0, 1},
    {"processing_instruction", "<?xml <i>?><div>", 1, 0, 1},
    {"bogus_end_tag", "</ <i>><div>", 1, 0, 1},
    {"empty_end_tag", "</><div>", 1, 0, 1},
    {"less_than_as_text", "a < b <3 <= <div>", 1, 0, 1},
    {"less_than_at_end", "<div><", 1, 0, 1},
    {"end_tag_open_at_end", "<div></", 1, 0, 1},
    {"cdata_in_html_is_a_bogus_comment", "<![CDATA[<i>]]><div>", 1, 0, 1},
    // Raw text, RCDATA, script data, plaintext: markup inside is text up to the matching end tag
    {"script", "<script><div></script><p>", 2, 1, 1},
    {"style", "<style><div></style><p>", 2, 1, 1},
    {"xmp", "<xmp><div></xmp><p>", 2, 1, 1},
    {"iframe", "<iframe><div></iframe><p>", 2, 1, 1},
    {"noembed", "<noembed><div></noembed><p>", 2, 1, 1},
    {"noframes", "<noframes><div></noframes><p>", 2, 1, 1},
    {"textarea", "<textarea><div></textarea><p>", 2, 1, 1},
    {"title", "<title><div></title><p>", 2, 1, 1},
    {"raw_end_tag_any_case", "<style><i></STYLE><div>", 2, 1, 1},
    {"raw_end_tag_needs_a_delimiter", "<title></titlex><i></title><div>", 2, 1, 1},
    {"raw_end_tag_with_space", "<textarea></textarea ><div>", 2, 1, 1},
    {"raw_end_tag_with_slash", "<textarea></textarea/><div>", 2, 1, 1},
    {"raw_end_tag_with_attributes", "<style></style x=\"<i>\"><div>", 2, 1, 1},
    {"raw_text_unclosed", "<style><div>", 1, 0, 0},
    {"other_end_tag_in_raw_text", "<style></script><i></style><div>", 2, 1, 1},
    {"script_escaped_end", "<script><!--</script><div>", 2, 1, 1},
    {"script_double_escaped", "<script><!--<script></script><i></script><div>", 2, 1, 1},
    {"script_escape_closed", "<script><!--x--><script></script><div>", 2, 1, 1},
    {"script_abrupt_escape", "<script><!--><script></script><div>", 2, 1, 1},
    {"script_double_escape_needs_delimiter", "<script><!--<scripts></script><div>", 2, 1, 1},
    {"script_unclosed", "<script><div>", 1, 0, 0},
    {"noscript_is_markup", "<noscript><div></noscript>", 2, 1, 2},
    {"plaintext", "<plaintext><div></plaintext><p>", 1, 0, 0},
    // Attributes
    {"double_quoted_value", "<div title=\"a>b<i>\"><span>", 2, 0, 2},
    {"single_quoted_value", "<div title='a>b\"<i>'><span>", 2, 0, 2},
    {"unquoted_value_with_quote", "<div title=a\"b><span>", 2, 0, 2},
    {"attribute_name_starting_with_equals", "<div =\">\"><span>", 2, 0, 2},
    {"quote_in_attribute_name", "<div a\"b='>'><span>", 2, 0, 2},
    {"spaces_around_equals", "<div title = \">\" ><span>", 2, 0, 2},
    {"value_glued_to_next_name", "<div a=\">\"b='>'><span>", 2, 0, 2},
    {"missing_value", "<div a=><span>", 2, 0, 2},
    {"end_tag_with_attributes", "<div></div title=\"</div>\"><span>", 2, 1, 1},
    {"eof_in_quoted_value", "<div title=\"x", 0, 0, 0},
    {"eof_in_unquoted_value", "<div a=b", 0, 0, 0},
    // Tag names
    {"name_ends_at_slash", "<div/><span>", 2, 0, 2},
    {"name_ends_at_whitespace", "<div\nclass=x><span\t>", 2, 0, 2},
    {"uppercase_names", "<DIV><Div></dIv>", 2, 1, 2},
    {"void_elements", "<br><img><input><hr><wbr><meta><link><span>", 8, 0, 1},
    // Foreign content
    {"cdata_in_svg", "<svg><![CDATA[<g>]]><g>", 2, 0, 2},
    {"svg_self_closing", "<svg><path/><path/><g/></svg>", 4, 1, 1},
    {"svg_style_is_markup", "<svg><style><g></style></svg>", 3, 2, 3},
    {"svg_title_is_markup", "<svg><title><g></title></svg>", 3, 2, 3},
    {"integration_point_style_is_raw", "<svg><foreignObject><style><g></style>", 3, 1, 2},
    {"math_text_integration_point", "<math><mi><style><i></style>", 3, 1, 2},
    {"breakout_leaves_svg", "<svg><g><div>", 3, 0, 2},
    // Elements the parser closes on its own
    {"implied_li", "<li>a<li>b<li>c", 3, 0, 1},
    {"implied_p", "<p>a<p>b<div>", 3, 0, 1},
    {"implied_dd_dt", "<dd>a<dt>b<dd>c", 3, 0, 1},
    {"implied_option", "<option>a<option>b", 2, 0, 1},
    {"table_parts", "<table><tr><td>a<td>b<tr><td>c</table>", 6, 1, 4},
    {"table_in_table", "<table><table><table>", 3, 0, 1},
    {"cell_parts_outside_tables_ignored", "<td><tr><th><caption><div>", 5, 0, 1},
    {"headings", "<h1><h2><h3>", 3, 0, 1},
    {"button_in_button", "<button><button>", 2, 0, 1},
    {"a_in_a", "<a href=1><a href=2><a href=3>", 3, 0, 1},
    {"nobr_in_nobr", "<nobr><nobr><nobr>", 3, 0, 1},
    {"ruby_parts", "<ruby><rb>a<rb>b<rt>c", 4, 0, 2},
    {"ruby_parts_without_ruby_nest", "<rb><rb>", 2, 0, 2},
    {"nested_lists_nest", "<ul><li><ul><li>", 4, 0, 4},
    {"list_items_through_divs", "<li><div><li><div>", 4, 0, 2},
    {"list_items_through_dd_nest", "<li><dd><li><dd>", 4, 0, 4},
    // End tags
    {"unmatched_end_tag_ignored", "<div><div></span><div>", 3, 1, 3},
    {"end_tag_stops_at_special_element", "<span><div></span><div>", 3, 1, 3},
    {"end_tag_closes_through", "<div><span><i></div><div>", 4, 1, 3},
    {"form_end_tag_keeps_content_open", "<form><div></form><div><div>", 4, 1, 3},
    {"nested_form_ignored", "<form><form><form>", 3, 0, 1},
    {"select_ignores_markup", "<select><div><option>a<option>b</select>", 4, 1, 2},
    {"select_style_is_not_raw", "<select><style></select><div>", 3, 1, 1},
    {"template", "<template><div></template><div>", 3, 1, 2},
    // Formatting elements
    {"formatting_recreated", "<p><b>x</p><p>y<i>", 4, 1, 3, 1},
    {"adoption_agency_furthest_block", "<b><div></b><div>", 3, 1, 3},
    {"adoption_agency_closes", "<b><i>x</b><div>", 3, 1, 2},
};

INSTANTIATE_TEST_SUITE_P(Constructs, MarkupGuardScan, testing::ValuesIn(scan_cases),
                         [](const testing::TestParamInfo<scan_case>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Rewriting: the blanked spans, with small limits.

struct blank_case {
    const char* name;
    std::string html;
    markup_guard_limits limits;
    std::vector<std::string> blanked; // the exact byte spans blanked (end tags: neutralized), in order
};

std::ostream& operator<<(std::ostream& out, const blank_case& c) {
    return out << c.name;
}

markup_guard_limits limits(std::size_t depth, std::size_t attributes = 128,
                           std::size_t reconstructed = 4096) {
    markup_guard_limits l;
    l.max_depth = depth;
    l.max_attributes = attributes;
    l.max_reconstructed = reconstructed;
    return l;
}

class MarkupGuardBlank : public testing::TestWithParam<blank_case> {};

TEST_P(MarkupGuardBlank, BlanksExactlyTheOffendingSpansWithSpaces) {
    const blank_case& c = GetParam();
    const markup_guard_result r = guard_markup(c.html, c.limits);
    ASSERT_TRUE(r.rewritten.has_value());
    // The same length, so that offsets stay those of the original; each span overwritten with spaces, but an
    // end tag made a bogus comment ("</x>" into "<! >").
    std::string expected = c.html;
    std::size_t from = 0;
    for (const auto& span : c.blanked) {
        const auto at = c.html.find(span, from);
        ASSERT_NE(at, std::string::npos) << span;
        expected.replace(at, span.size(), span.size(), ' ');
        if (span.starts_with("</")) {
            expected[at] = '<';
            expected[at + 1] = '!';
            expected[at + span.size() - 1] = '>';
        }
        from = at + span.size();
    }
    EXPECT_EQ(*r.rewritten, expected);
    EXPECT_EQ(r.blanked_tags + r.blanked_attributes + r.blanked_cdata + r.neutralized_end_tags,
              c.blanked.size());
}

const blank_case blank_cases[] = {
    {"start_tag_beyond_depth",
     "<div><div><div title=\"<a href=/x>\">text</div>",
     limits(2),
     {"<div title=\"<a href=/x>\">"}},
    {"every_start_tag_beyond_depth",
     "<div><p><span class=a><i>x</i></span><div>",
     limits(1),
     {"<p>", "<span class=a>", "<i>", "</i>", "</span>", "<div>"}},
    {"link_tags_never_blanked",
     "<div><div id=2><a href=/a>a</a><area href=/b><iframe src=/c></iframe><meta http-equiv=refresh "
     "content=\"0;/d\">"
     "<base href=/e><frame src=/f><template></template><svg/><span>",
     limits(1),
     {"<div id=2>", "<span>"}},
    {"raw_text_elements_never_blanked",
     "<div><div id=2><script>x</script><style>y</style><textarea>z</textarea><title>t</title>",
     limits(1),
     {"<div id=2>"}},
    {"foreign_element_beyond_depth",
     "<svg><g id=1><g id=2><a href=/x>",
     limits(2),
     {"<g id=2>", "<a href=/x>"}},
    {"attributes_beyond_the_limit", "<div a b c d>", limits(512, 2), {"c", "d"}},
    {"attribute_values_blanked_with_them",
     "<p a=1 b=\"2>\" c='3' d=4 e>",
     limits(512, 1),
     {"b=\"2>\"", "c='3'", "d=4", "e"}},
    {"first_href_and_src_kept",
     "<a x y z href=/h q src=/s href=/2 HREF=/3 w>",
     limits(512, 2),
     {"z", "q", "href=/2", "HREF=/3", "w"}},
    {"kept_names_used_before_the_limit_are_not_kept_again",
     "<a href=/1 x href=/2>",
     limits(512, 2),
     {"href=/2"}},
    {"end_tag_attributes", "<div></div a b c>", limits(512, 1), {"b", "c"}},
    {"attributes_merged_into_html", "<html a><html b><body c><html d>", limits(512, 2), {"c", "d"}},
    {"recreated_formatting_elements",
     "<div><b id=1><i id=2></div><p>x</p><p>y</p><p>z</p><p>w</p>",
     limits(512, 128, 0), // plus 60 bytes / 8 = 7: x re-creates 2, y 2, z 2, then w would exceed 7
     {"<b id=1>", "<i id=2>"}},
    // Deep in the stack (beyond max_depth / 8), end tags that the parser ignores become bogus comments, but
    // not those that end raw text, nor </p> and </br>, which insert elements.
    {"ignored_end_tags_deep_in_the_stack",
     "<div><div><div></x a=\">\"><style></x></style></p></br></span></div></i>",
     limits(16),
     {"</x a=\">\">", "</span>"}},
    {"ignored_end_tags_near_the_root_untouched",
     "<div><div></x></p></div></div></div><i a b>",
     limits(16, 1),
     {"b"}},
    // Whatever the limits: gumbo 0.10.1 aborts on these (an assertion), and their content is text.
    {"cdata_at_mathml_text_integration_point", "<table><math><mi><![CDATA[x]]>y", {}, {"<![CDATA[x]]>"}},
    {"cdata_at_html_integration_point", "<svg><desc><![CDATA[<a>]]>", {}, {"<![CDATA[<a>]]>"}},
    {"unclosed_cdata_at_integration_point", "<svg><foreignObject><![CDATA[x", {}, {"<![CDATA[x"}},
    {"cdata_below_an_integration_point", "<math><mi><x><![CDATA[y>z]]>", {}, {"<![CDATA[y>"}},
    {"cdata_after_math_in_a_table",
     "<table><math><g><mi></g/></math><svg><![CDATA[b]]></svg></table><p><![CDATA[c>d]]>",
     {},
     {"<![CDATA[b]]>", "<![CDATA[c>"}},
};

INSTANTIATE_TEST_SUITE_P(Limits, MarkupGuardBlank, testing::ValuesIn(blank_cases),
                         [](const testing::TestParamInfo<blank_case>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Hostile documents: the limits hold whatever the input (no time is measured: the tests run on shared
// machines).

TEST(MarkupGuardHostile, DeepNestingStopsAtTheDepthLimit) {
    const std::string html = repeat("<div><b>", 100'000) + "<a href=/deep>d</a>";
    const markup_guard_result r = guard_markup(html, without_element_budget());
    ASSERT_TRUE(r.rewritten.has_value());
    EXPECT_EQ(r.rewritten->size(), html.size());
    EXPECT_LE(r.max_depth, 513u); // the limit, and the <a> that is never blanked
    EXPECT_GE(r.blanked_tags, 199'000u);
    EXPECT_NE(r.rewritten->find("<a href=/deep>d</a>"), std::string::npos);
}

TEST(MarkupGuardHostile, OneTagWithManyAttributesKeepsItsHref) {
    std::string html = "<a";
    for (int i = 0; i < 100'000; ++i)
        html += " a" + std::to_string(i) + "=x";
    html += " href=/far>x</a>";
    const markup_guard_result r = guard_markup(html);
    ASSERT_TRUE(r.rewritten.has_value());
    EXPECT_EQ(r.blanked_attributes, 100'000u - 128u);
    EXPECT_NE(r.rewritten->find(" href=/far>x</a>"), std::string::npos);
}

TEST(MarkupGuardHostile, RecreatedFormattingElementsStayWithinTheBudget) {
    // Each <b id=N> is re-created inside every later <div>: quadratic in elements, cubic in time for gumbo.
    std::string html;
    for (int i = 0; i < 10'000; ++i)
        html += "<div><b id=" + std::to_string(i) + "></div>";
    const markup_guard_limits defaults;
    const markup_guard_result r = guard_markup(html);
    ASSERT_TRUE(r.rewritten.has_value());
    EXPECT_LE(r.reconstructed, defaults.max_reconstructed + html.size() / 8);
    EXPECT_LE(r.max_depth, defaults.max_depth + 1);
}

TEST(MarkupGuardHostile, UnmatchedEndTagsDoNotHideDepth) {
    // A counter of start minus end tags would see depth 0 here; the parser sees 200,000 open elements.
    const std::string html = repeat("<span><div></span>", 100'000);
    const markup_guard_result r = guard_markup(html);
    ASSERT_TRUE(r.rewritten.has_value());
    EXPECT_EQ(r.max_depth, 512u);
}

TEST(MarkupGuardHostile, ImplicitlyClosedElementsThatNestAreCounted) {
    for (const char* piece : {"<li><dd>", "<optgroup>", "<rb>", "<option><rb>"}) {
        const markup_guard_result r = guard_markup(repeat(piece, 50'000));
        EXPECT_TRUE(r.rewritten.has_value()) << piece;
        EXPECT_EQ(r.max_depth, 512u) << piece;
    }
}

TEST(MarkupGuardHostile, SiblingsThatTheParserClosesAreNotCounted) {
    for (const char* piece :
         {"<p>x", "<li>x", "<option>x", "<tr><td>x", "<table>", "<a href=/x>x", "<dd>x<dt>y"}) {
        const markup_guard_result r =
            guard_markup("<table>" + repeat(piece, 50'000), without_element_budget());
        EXPECT_FALSE(r.rewritten.has_value()) << piece;
        EXPECT_LT(r.max_depth, 8u) << piece;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The element budget: past max_elements start tags, the others are removed except the never-blanked ones, and
// end tags that would close nothing or create an element go too; each run of them is left as one space.

struct element_budget_case {
    const char* name;
    std::size_t max_elements;
    std::string html;
    std::string expected; // equal to html when nothing is rewritten
    std::size_t over_budget_tags;
};

std::ostream& operator<<(std::ostream& out, const element_budget_case& c) {
    return out << c.name;
}

class MarkupGuardElementBudget : public testing::TestWithParam<element_budget_case> {};

TEST_P(MarkupGuardElementBudget, BlanksTheTagsPastTheBudget) {
    const element_budget_case& c = GetParam();
    markup_guard_limits limits;
    limits.max_elements = c.max_elements;
    const markup_guard_result r = guard_markup(c.html, limits);
    EXPECT_EQ(r.over_budget_tags, c.over_budget_tags) << c.html;
    if (c.expected == c.html) {
        EXPECT_FALSE(r.rewritten.has_value()) << c.html;
        return;
    }
    ASSERT_TRUE(r.rewritten.has_value()) << c.html;
    EXPECT_EQ(*r.rewritten, c.expected) << c.html;
}

const element_budget_case element_budget_cases[] = {
    {"within_the_budget", 3, "<p>x</p><p>y</p><b>z</b>", "<p>x</p><p>y</p><b>z</b>", 0},
    {"paragraphs_past_it", 2, "<p>x</p><p>y</p><p>z</p>", "<p>x</p><p>y</p> z ", 2},
    {"divs_close_nothing", 1, "<div><div>x</div></div>", "<div> x</div> ", 2},
    {"end_tag_of_a_real_ancestor_stays", 1, "<div><span>x</span></div>", "<div> x </div>", 2},
    {"stray_br_end_tag", 1, "<p><b></br>", "<p> ", 2},
    {"links_and_link_tags_stay", 1,
     "<div><a href=/a>x</a><area href=/b><iframe src=/c></iframe><frame src=/d><meta http-equiv=refresh "
     "content=\"0;url=/e\"><base href=/f>",
     "<div><a href=/a>x</a><area href=/b><iframe src=/c></iframe><frame src=/d><meta http-equiv=refresh "
     "content=\"0;url=/e\"><base href=/f>",
     0},
    {"raw_text_stays_raw", 1, "<div><script><a href=/x></script><style>p{}</style><textarea><p></textarea>",
     "<div><script><a href=/x></script><style>p{}</style><textarea><p></textarea>", 0},
    {"template_and_svg_stay", 1, "<div><template><svg><g></g></svg></template>",
     "<div><template><svg> </svg></template>", 2},
    {"frameset_stays", 0, "<frameset><frame src=/a></frameset>", "<frameset><frame src=/a></frameset>", 0},
    {"void_elements_go", 1, "<div><img src=x><br><input>", "<div> ", 3},
};

INSTANTIATE_TEST_SUITE_P(Budget, MarkupGuardElementBudget, testing::ValuesIn(element_budget_cases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------------------------
// The link budget: the document is cut before the first link-bearing tag past max_links, and those of the
// rest are counted.

struct link_budget_case {
    const char* name;
    std::size_t max_links;
    std::string html;
    std::optional<std::string> rewritten;
    std::size_t link_tags;
    std::size_t dropped_links;
};

std::ostream& operator<<(std::ostream& out, const link_budget_case& c) {
    return out << c.name;
}

class MarkupGuardLinkBudget : public testing::TestWithParam<link_budget_case> {};

TEST_P(MarkupGuardLinkBudget, CutsAndCounts) {
    const link_budget_case& c = GetParam();
    markup_guard_limits limits;
    limits.max_links = c.max_links;
    const markup_guard_result r = guard_markup(c.html, limits);
    EXPECT_EQ(r.rewritten, c.rewritten) << c.html;
    EXPECT_EQ(r.link_tags, c.link_tags) << c.html;
    EXPECT_EQ(r.dropped_links, c.dropped_links) << c.html;
    EXPECT_EQ(r.cut, c.rewritten ? c.rewritten->size() : 0u) << c.html;
}

const link_budget_case link_budget_cases[] = {
    {"no_budget", 0, "<a href=1></a><a href=2></a>", std::nullopt, 2, 0},
    {"within_it", 2, "<a href=1></a><a href=2></a>", std::nullopt, 2, 0},
    {"cut_before_the_third", 2, "<a href=1></a><a href=2></a><p>x<a href=3></a><a href=4>",
     "<a href=1></a><a href=2></a><p>x", 2, 2},
    {"anchors_without_href_do_not_count", 1, "<a name=x></a><a href=1><a>y<a href=2>z",
     "<a name=x></a><a href=1><a>y", 1, 1},
    {"every_kind_counts", 4,
     "<a href=1><area href=2><iframe src=3></iframe><frame src=4><meta http-equiv=Refresh content=0><svg><a "
     "xlink:href=6>",
     "<a href=1><area href=2><iframe src=3></iframe><frame src=4>", 4, 2},
    {"other_meta_and_frames_without_src_do_not", 1,
     "<meta charset=utf-8><meta http-equiv=content-type><iframe></iframe><a href=1><a href=2>",
     "<meta charset=utf-8><meta http-equiv=content-type><iframe></iframe><a href=1>", 1, 1},
    {"raw_text_past_the_cut_is_not_counted", 1,
     "<a href=1><a href=2><script><a href=3></script><!--<a href=4>--><textarea><a href=5></textarea><a "
     "href=6>",
     "<a href=1>", 1, 2},
    {"blanked_attributes_before_the_cut", 1, "<p " + repeat("x ", 200) + "><a href=1><a href=2>",
     "<p " + repeat("x ", 128) + std::string(144, ' ') + "><a href=1>", 1, 1},
};

INSTANTIATE_TEST_SUITE_P(Budget, MarkupGuardLinkBudget, testing::ValuesIn(link_budget_cases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MarkupGuardHostile, AMillionParagraphsBecomeText) {
    const std::string html = "<body>" + repeat("<p>x</p>", 1'000'000);
    const markup_guard_result r = guard_markup(html);
    ASSERT_TRUE(r.rewritten.has_value());
    EXPECT_LT(r.rewritten->size(), html.size() / 2); // each "<p>x</p>" past the budget is " x"
    EXPECT_EQ(r.over_budget_tags, 2 * (1'000'001 - markup_guard_limits{}.max_elements));
    EXPECT_EQ(r.rewritten->find("<p>", 6 + 8 * (markup_guard_limits{}.max_elements - 1)), std::string::npos);
}

} // namespace
