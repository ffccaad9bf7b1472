#include "tags.hpp"

#include <array>

namespace asiocrawl::detail::html {

namespace {

// In the order of the enumeration.
constexpr std::string_view names[] = {
    "",
    "html",
    "head",
    "title",
    "base",
    "link",
    "meta",
    "style",
    "script",
    "noscript",
    "template",
    "body",
    "article",
    "section",
    "nav",
    "aside",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hgroup",
    "header",
    "footer",
    "address",
    "p",
    "hr",
    "pre",
    "blockquote",
    "ol",
    "ul",
    "li",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "main",
    "div",
    "a",
    "em",
    "strong",
    "small",
    "s",
    "cite",
    "q",
    "dfn",
    "abbr",
    "data",
    "time",
    "code",
    "var",
    "samp",
    "kbd",
    "sub",
    "sup",
    "i",
    "b",
    "u",
    "mark",
    "ruby",
    "rt",
    "rp",
    "bdi",
    "bdo",
    "span",
    "br",
    "wbr",
    "ins",
    "del",
    "image",
    "img",
    "iframe",
    "embed",
    "object",
    "param",
    "video",
    "audio",
    "source",
    "track",
    "canvas",
    "map",
    "area",
    "math",
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext",
    "mglyph",
    "malignmark",
    "annotation-xml",
    "svg",
    "foreignobject",
    "desc",
    "table",
    "caption",
    "colgroup",
    "col",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "form",
    "fieldset",
    "legend",
    "label",
    "input",
    "button",
    "select",
    "datalist",
    "optgroup",
    "option",
    "textarea",
    "keygen",
    "output",
    "progress",
    "meter",
    "details",
    "summary",
    "menu",
    "menuitem",
    "applet",
    "acronym",
    "bgsound",
    "dir",
    "frame",
    "frameset",
    "noframes",
    "isindex",
    "listing",
    "xmp",
    "nextid",
    "noembed",
    "plaintext",
    "rb",
    "strike",
    "basefont",
    "big",
    "blink",
    "center",
    "font",
    "marquee",
    "multicol",
    "nobr",
    "spacer",
    "tt",
    "rtc",
    "dialog",
};
static_assert(std::size(names) == tag_count);

constexpr std::size_t slots = 512; // a power of two, more than twice the names

constexpr std::uint32_t hash(std::string_view name) noexcept {
    std::uint32_t h = 2166136261u;
    for (const char c : name)
        h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h;
}

struct lookup_table {
    std::array<std::uint8_t, slots> slot{}; // tag + 1, 0 for empty
    constexpr lookup_table() {
        for (std::size_t t = 1; t < gumbo_tag_count; ++t) {
            std::size_t i = hash(names[t]) & (slots - 1);
            while (slot[i] != 0)
                i = (i + 1) & (slots - 1);
            slot[i] = static_cast<std::uint8_t>(t + 1);
        }
    }
};

constexpr lookup_table tag_lookup{};

} // namespace

tag find_tag(std::string_view lowercase_name) noexcept {
    if (lowercase_name.empty() || lowercase_name.size() > 14)
        return tag::unknown;
    for (std::size_t i = hash(lowercase_name) & (slots - 1); tag_lookup.slot[i] != 0;
         i = (i + 1) & (slots - 1)) {
        const std::size_t t = tag_lookup.slot[i] - 1u;
        if (names[t] == lowercase_name)
            return static_cast<tag>(t);
    }
    return tag::unknown;
}

} // namespace asiocrawl::detail::html
