// A linear-time pre-pass over HTML that keeps gumbo 0.10.1 out of its quadratic (and worse) paths.
//
// gumbo walks the stack of open elements on nearly every tag ("has an element in scope"), the list of active
// formatting elements on every formatting tag (Noah's Ark) and the attributes of a tag on each of them
// (duplicate check), and it re-creates every unclosed formatting element after each block that closed it
// ("reconstruct the active formatting elements"): 100,000 nested <div><b> take 20 s or more, 10,000
// <div><b id=N></div> a minute, and 64 distinct <b id=N> then 800 KB of <p>x</p> take 2.4 GB.
//
// The guard scans the bytes once, following the HTML tokenizer (comments, bogus comments, raw text, RCDATA,
// script and plaintext content, quoted attribute values, foreign content and CDATA) and an approximate model
// of tree construction (implied end tags, scopes, the adoption agency, tables, select and foreign content).
// When the document stays within the limits, nothing is copied and gumbo parses the original bytes. Otherwise
// the guard returns a copy of the same length in which the offending markup is overwritten with spaces, from
// '<' to '>' for a tag and from the name to the end of the value for an attribute, so that no attribute text
// can become markup:
//   - a start tag that would open an element deeper than max_depth (Chromium's parser caps the DOM depth at
//     512, kMaximumHTMLParserDOMTreeDepth);
//   - the attributes of a tag beyond max_attributes, and beyond that many merged into <html> or <body>;
//   - the start tags of unclosed formatting elements that the parser would re-create beyond a budget, or
//     beyond the depth limit, so that it never has them.
// Tags that carry links in HTML (a, area, base, frame, iframe, meta), the first href, src, xlink:href,
// http-equiv and content attribute of a tag (what extract_links reads), template, and the raw-text and void
// elements (which never nest) are never blanked. Inside SVG and MathML every element can nest, <a> included,
// and any start tag past the depth limit is blanked.
// When more than max_depth / 8 elements are open, an end tag that the parser would ignore (after walking the
// stack for it) becomes a bogus comment of the same length: "</x>" becomes "<! >".
// Two budgets bound the size of gumbo's tree (about 450 bytes an element): past max_elements start tags, the
// others that may be blanked are, with the end tags that would then close nothing or create an element, and
// these are then removed from the copy (a run of them becomes one space), so that the text they merge into
// stays small; past max_links link-bearing tags, the document is cut (the crawler keeps that many links of a
// page anyway) and the guard only counts the link-bearing tags of the rest. Either makes the copy shorter.
// Whatever the limits, a CDATA section at an SVG or MathML integration point, or anywhere once SVG or MathML
// was opened directly in a table, is blanked too: gumbo 0.10.1 as Debian builds it (with assertions) fails an
// assertion on one at an integration point in a table, and its content is only text.
//
// Internal to asiocrawl (links.cpp); sans-io, no allocation beyond the copy and the model's two small stacks.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

struct markup_guard_limits {
    /// Open elements (in the guard's model) beyond which start tags are blanked.
    std::size_t max_depth = 512;
    /// Attributes per tag, and merged into <html> and <body> in all, beyond which they are blanked.
    std::size_t max_attributes = 128;
    /// Formatting elements the parser may re-create in all; the input size / 8 is added to it.
    std::size_t max_reconstructed = 4096;
    /// Start tags beyond which the others are blanked, except those that are never blanked (see above); past
    /// it, end tags that would close nothing or create an element ("</p>", "</br>") are blanked too.
    std::size_t max_elements = 100'000;
    /// Link-bearing start tags (see markup_guard_result::link_tags) kept; 0 keeps them all. The document is
    /// cut before the next one: `rewritten` is then a shorter copy, and the link-bearing tags in the rest are
    /// only counted, in `dropped_links`.
    std::size_t max_links = 0;
};

struct markup_guard_result {
    /// The rewritten document; nullopt when the input is within the limits. It has the input's length, except
    /// past a budget: the tags blanked past max_elements are removed (each run of them left as one space),
    /// and the document is cut short at max_links.
    std::optional<std::string> rewritten;
    std::size_t start_tags = 0;           ///< complete start tags seen (outside comments and raw text)
    std::size_t end_tags = 0;             ///< complete end tags seen
    std::size_t max_depth = 0;            ///< deepest stack of open elements in the model
    std::size_t reconstructed = 0;        ///< formatting elements the model re-created
    std::size_t blanked_tags = 0;         ///< start tags overwritten with spaces
    std::size_t blanked_attributes = 0;   ///< attributes overwritten with spaces
    std::size_t blanked_cdata = 0;        ///< CDATA sections at integration points overwritten with spaces
    std::size_t neutralized_end_tags = 0; ///< ignored end tags, deep in the stack, made bogus comments
    std::size_t over_budget_tags = 0;     ///< start and end tags blanked past max_elements
    /// Link-bearing start tags seen before the cut: a and area with href (or xlink:href), frame and iframe
    /// with src, meta with http-equiv=refresh. Counted from the tokens, not the tree: a link the parser would
    /// drop (an <a> in a <select>, an empty href) counts too.
    std::size_t link_tags = 0;
    /// Link-bearing start tags past max_links, in the part of the document that was cut (approximate: past
    /// the cut, only the tokenizer is followed).
    std::size_t dropped_links = 0;
    /// Where the document was cut (the '<' of the first link-bearing tag past max_links); 0 when it was not.
    std::size_t cut = 0;
};

/// Scans `html` once (time linear in its size) and rewrites it only when it exceeds a limit.
markup_guard_result guard_markup(std::string_view html, const markup_guard_limits& limits = {});

} // namespace asiocrawl::detail
