#include "gumbo/markup_guard.hpp"

#include "html/tags.hpp"
#include "util/ascii.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace asiocrawl::detail {

namespace {

// ---- Tag names -------------------------------------------------------------------------------------------

// The extractor's tag names (src/html/tags.hpp), `unknown` for any other name.
using html::tag;
using html::tag_count;

// What a tag is to the tokenizer and to tree construction, for HTML elements.
enum : std::uint32_t {
    f_void = 1u << 0,         // never has content
    f_rawtext = 1u << 1,      // style, xmp, iframe, noembed, noframes
    f_rcdata = 1u << 2,       // title, textarea
    f_script = 1u << 3,       // script data, with its escape states
    f_plaintext = 1u << 4,    // the rest of the document is text
    f_special = 1u << 5,      // the "special" category
    f_scope = 1u << 6,        // ends a "has an element in scope" walk
    f_formatting = 1u << 7,   // goes on the list of active formatting elements
    f_marker = 1u << 8,       // puts a marker on that list
    f_closes_p = 1u << 9,     // its start tag closes a <p> in button scope
    f_implied_end = 1u << 10, // closed by "generate implied end tags"
    f_breakout = 1u << 11,    // its start tag leaves foreign content
    f_never_blank = 1u << 12, // carries links, or changes what is inert
    f_heading = 1u << 13,
    f_table_mode = 1u << 14,  // table, tbody, thead, tfoot, tr, colgroup: the "in table" insertion modes
    f_cell = 1u << 15,        // td, th, caption: "in cell"/"in caption", in-body rules
    f_table_scope = 1u << 16, // ends a "has an element in table scope" walk
    // Only on open elements:
    f_html_ip = 1u << 17,      // HTML integration point
    f_math_text_ip = 1u << 18, // MathML text integration point
};

constexpr std::uint32_t f_raw = f_rawtext | f_rcdata | f_script | f_plaintext;

struct tag_info {
    std::string_view name;
    tag id;
    std::uint32_t flags;
};

constexpr std::uint32_t sp = f_special;
constexpr std::uint32_t cp = f_special | f_closes_p;

constexpr tag_info tag_table[] = {
    {"a", tag::a, f_formatting | f_never_blank},
    {"address", tag::address, cp},
    {"annotation-xml", tag::annotation_xml, 0},
    {"applet", tag::applet, sp | f_scope | f_marker},
    {"area", tag::area, sp | f_void | f_never_blank},
    {"article", tag::article, cp},
    {"aside", tag::aside, cp},
    {"b", tag::b, f_formatting | f_breakout},
    {"base", tag::base, sp | f_void | f_never_blank},
    {"basefont", tag::basefont, sp | f_void},
    {"bgsound", tag::bgsound, sp | f_void},
    {"big", tag::big, f_formatting | f_breakout},
    {"blockquote", tag::blockquote, cp | f_breakout},
    {"body", tag::body, sp | f_never_blank | f_breakout},
    {"br", tag::br, sp | f_void | f_breakout},
    {"button", tag::button, sp},
    {"caption", tag::caption, sp | f_scope | f_marker | f_cell},
    {"center", tag::center, cp | f_breakout},
    {"code", tag::code, f_formatting | f_breakout},
    {"col", tag::col, sp | f_void},
    {"colgroup", tag::colgroup, sp | f_table_mode},
    {"dd", tag::dd, sp | f_implied_end | f_breakout},
    {"desc", tag::desc, 0},
    {"details", tag::details, cp},
    {"dialog", tag::dialog, cp},
    {"dir", tag::dir, cp},
    {"div", tag::div, cp | f_breakout},
    {"dl", tag::dl, cp | f_breakout},
    {"dt", tag::dt, sp | f_implied_end | f_breakout},
    {"em", tag::em, f_formatting | f_breakout},
    {"embed", tag::embed, sp | f_void | f_breakout},
    {"fieldset", tag::fieldset, cp},
    {"figcaption", tag::figcaption, cp},
    {"figure", tag::figure, cp},
    {"font", tag::font, f_formatting},
    {"footer", tag::footer, cp},
    {"foreignobject", tag::foreignobject, 0},
    {"form", tag::form, sp},
    {"frame", tag::frame, sp | f_void | f_never_blank},
    {"frameset", tag::frameset, sp},
    {"h1", tag::h1, cp | f_heading | f_breakout},
    {"h2", tag::h2, cp | f_heading | f_breakout},
    {"h3", tag::h3, cp | f_heading | f_breakout},
    {"h4", tag::h4, cp | f_heading | f_breakout},
    {"h5", tag::h5, cp | f_heading | f_breakout},
    {"h6", tag::h6, cp | f_heading | f_breakout},
    {"head", tag::head, sp | f_never_blank | f_breakout},
    {"header", tag::header, cp},
    {"hgroup", tag::hgroup, cp},
    {"hr", tag::hr, sp | f_void | f_breakout},
    {"html", tag::html, sp | f_scope | f_table_scope | f_never_blank},
    {"i", tag::i, f_formatting | f_breakout},
    {"iframe", tag::iframe, sp | f_rawtext | f_never_blank},
    {"image", tag::image, f_void},
    {"img", tag::img, sp | f_void | f_breakout},
    {"input", tag::input, sp | f_void},
    {"isindex", tag::isindex, sp | f_void},
    {"keygen", tag::keygen, f_void},
    {"li", tag::li, sp | f_implied_end | f_breakout},
    {"link", tag::link, sp | f_void},
    {"listing", tag::listing, cp | f_breakout},
    {"main", tag::main, cp},
    {"malignmark", tag::malignmark, 0},
    {"marquee", tag::marquee, sp | f_scope | f_marker},
    {"math", tag::math, 0},
    {"menu", tag::menu, cp | f_breakout},
    {"meta", tag::meta, sp | f_void | f_never_blank | f_breakout},
    {"mglyph", tag::mglyph, 0},
    {"mi", tag::mi, 0},
    {"mn", tag::mn, 0},
    {"mo", tag::mo, 0},
    {"ms", tag::ms, 0},
    {"mtext", tag::mtext, 0},
    {"nav", tag::nav, cp},
    {"nobr", tag::nobr, f_formatting | f_breakout},
    {"noembed", tag::noembed, sp | f_rawtext},
    {"noframes", tag::noframes, sp | f_rawtext},
    {"noscript", tag::noscript, sp}, // gumbo parses it with scripting off: ordinary markup inside
    {"object", tag::object, sp | f_scope | f_marker},
    {"ol", tag::ol, cp | f_breakout},
    {"optgroup", tag::optgroup, f_implied_end},
    {"option", tag::option, f_implied_end},
    {"p", tag::p, cp | f_implied_end | f_breakout},
    {"param", tag::param, sp | f_void},
    {"plaintext", tag::plaintext, cp | f_plaintext},
    {"pre", tag::pre, cp | f_breakout},
    {"rb", tag::rb, f_implied_end},
    {"rp", tag::rp, f_implied_end},
    {"rt", tag::rt, f_implied_end},
    {"rtc", tag::rtc, f_implied_end},
    {"ruby", tag::ruby, f_breakout},
    {"s", tag::s, f_formatting | f_breakout},
    {"script", tag::script, sp | f_script},
    {"section", tag::section, cp},
    {"select", tag::select, sp},
    {"small", tag::small, f_formatting | f_breakout},
    {"source", tag::source, sp | f_void},
    {"span", tag::span, f_breakout},
    {"strike", tag::strike, f_formatting | f_breakout},
    {"strong", tag::strong, f_formatting | f_breakout},
    {"style", tag::style, sp | f_rawtext},
    {"sub", tag::sub, f_breakout},
    {"summary", tag::summary, cp},
    {"sup", tag::sup, f_breakout},
    {"svg", tag::svg, 0},
    {"table", tag::table, sp | f_closes_p | f_scope | f_table_scope | f_table_mode | f_breakout},
    {"tbody", tag::tbody, sp | f_table_mode},
    {"td", tag::td, sp | f_scope | f_marker | f_cell},
    {"template", tag::template_, sp | f_scope | f_table_scope | f_marker | f_never_blank},
    {"textarea", tag::textarea, sp | f_rcdata},
    {"tfoot", tag::tfoot, sp | f_table_mode},
    {"th", tag::th, sp | f_scope | f_marker | f_cell},
    {"thead", tag::thead, sp | f_table_mode},
    {"title", tag::title, sp | f_rcdata},
    {"tr", tag::tr, sp | f_table_mode},
    {"track", tag::track, sp | f_void},
    {"tt", tag::tt, f_formatting | f_breakout},
    {"u", tag::u, f_formatting | f_breakout},
    {"ul", tag::ul, cp | f_breakout},
    {"var", tag::var, f_breakout},
    {"wbr", tag::wbr, sp | f_void},
    {"xmp", tag::xmp, sp | f_closes_p | f_rawtext},
};

using ascii::iequals;
using ascii::is_alpha;

// Character classes of the tag states, one table lookup a byte.
enum : std::uint8_t { c_space = 1, c_slash = 2, c_gt = 4, c_eq = 8 };

constexpr std::array<std::uint8_t, 256> make_classes() {
    std::array<std::uint8_t, 256> classes{};
    // The tokenizer's whitespace; CR counts because input preprocessing turns it into LF.
    for (const unsigned char c : {' ', '\n', '\t', '\f', '\r'})
        classes[c] = c_space;
    classes['/'] = c_slash;
    classes['>'] = c_gt;
    classes['='] = c_eq;
    return classes;
}

constexpr std::array<std::uint8_t, 256> classes = make_classes();

constexpr bool is(char c, std::uint8_t mask) noexcept {
    return (classes[static_cast<unsigned char>(c)] & mask) != 0;
}

constexpr bool is_space(char c) noexcept {
    return is(c, c_space);
}

// The table tags that close a select opened inside a table ("in select in table"), start or end tag alike.
constexpr bool ends_select_in_table(tag id) noexcept {
    switch (id) {
    case tag::caption:
    case tag::table:
    case tag::tbody:
    case tag::tfoot:
    case tag::thead:
    case tag::tr:
    case tag::td:
    case tag::th:
        return true;
    default:
        return false;
    }
}

// A tag name's identity: its lowercase bytes packed when it has at most 8, a hash with the top bit set
// otherwise.
constexpr std::uint64_t key_of(std::string_view name) noexcept {
    if (name.size() <= 8) {
        std::uint64_t packed = 0;
        for (std::size_t i = 0; i < name.size(); ++i)
            packed |= std::uint64_t{static_cast<std::uint8_t>(ascii::to_lower(name[i]))} << (8 * i);
        return packed;
    }
    std::uint64_t hash = 0xcbf29ce484222325ull;
    for (const char c : name)
        hash = (hash ^ static_cast<std::uint8_t>(ascii::to_lower(c))) * 0x100000001b3ull;
    return hash | (1ull << 63);
}

// Open addressing over the known names: a multiply and one or two compares per tag.
class tag_lookup {
public:
    constexpr tag_lookup() {
        for (const auto& info : tag_table) {
            const std::uint64_t key = key_of(info.name);
            std::size_t slot = index(key);
            while (slots_[slot].key != 0)
                slot = (slot + 1) % slot_count;
            slots_[slot] = {key, info.id};
            flags_[static_cast<std::size_t>(info.id)] = info.flags;
        }
    }

    tag find(std::uint64_t key) const noexcept {
        for (std::size_t slot = index(key);; slot = (slot + 1) % slot_count) {
            if (slots_[slot].key == key)
                return slots_[slot].id;
            if (slots_[slot].key == 0)
                return tag::unknown;
        }
    }

    std::uint32_t flags(tag id) const noexcept { return flags_[static_cast<std::size_t>(id)]; }

private:
    static constexpr std::size_t slot_count = 512;
    static constexpr std::size_t index(std::uint64_t key) noexcept {
        return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> 55);
    }
    struct slot {
        std::uint64_t key = 0;
        tag id = tag::unknown;
    };
    std::array<slot, slot_count> slots_{};
    std::array<std::uint32_t, tag_count> flags_{};
};

constexpr tag_lookup tags{};

// ---- The model -------------------------------------------------------------------------------------------

enum class space : std::uint8_t { html, svg, math };

struct open_element {
    std::uint64_t key;
    std::uint32_t flags;
    std::uint32_t serial;
    tag id;
    space ns;

    bool is(tag t) const noexcept { return id == t && ns == space::html; }
};

struct formatting_entry {
    std::uint64_t key = 0;
    std::size_t begin = 0;    // the original start tag, blanked if it must not be re-created
    std::size_t name_end = 0; // its raw attribute text, from here to end - 1, for Noah's Ark
    std::size_t end = 0;
    std::uint32_t serial = 0; // of the open element, while on_stack
    bool marker = false;
    bool on_stack = false;
    tag id = tag::unknown;
};

struct tag_token {
    std::size_t begin = 0; // '<'
    std::size_t end = 0;   // one past '>'
    std::size_t name_end = 0;
    std::uint64_t key = 0;
    tag id = tag::unknown;
    bool end_tag = false;
    bool self_closing = false;
};

struct attribute_span {
    std::size_t name_begin, name_end, value_begin, value_end;
};

constexpr std::size_t npos = static_cast<std::size_t>(-1);

enum class content { data, rawtext, script, plaintext };

class guard {
public:
    guard(std::string_view in, const markup_guard_limits& limits)
        : in_(in)
        , limits_(limits)
        , budget_(limits.max_reconstructed + in.size() / 8) {
        stack_.reserve(64);
        list_.reserve(16);
    }

    markup_guard_result run() {
        const std::size_t n = in_.size();
        std::size_t pos = 0;
        while (pos < n) {
            if (content_ != content::data) {
                pos = skip_content(pos);
                continue;
            }
            const void* found = std::memchr(in_.data() + pos, '<', n - pos);
            if (found == nullptr)
                break;
            const auto lt = static_cast<std::size_t>(static_cast<const char*>(found) - in_.data());
            if (lt > pos)
                text_ = true;
            pos = markup(lt);
        }
        if (cut_ != npos) {
            result_.cut = cut_;
            if (!copied_) {
                result_.rewritten = std::string(in_.substr(0, cut_));
                return std::move(result_);
            }
            out_.resize(cut_);
        }
        if (copied_) {
            if (!removed_.empty())
                compact();
            result_.rewritten = std::move(out_);
        }
        return std::move(result_);
    }

private:
    // ---- Tokenizer ----

    bool at(std::size_t i, char c) const noexcept { return i < in_.size() && in_[i] == c; }

    std::size_t skip_past(std::size_t i, char c) const noexcept {
        if (i >= in_.size())
            return in_.size();
        const void* found = std::memchr(in_.data() + i, c, in_.size() - i);
        return found == nullptr ? in_.size()
                                : static_cast<std::size_t>(static_cast<const char*>(found) - in_.data()) + 1;
    }

    std::size_t markup(std::size_t lt) {
        const std::size_t n = in_.size();
        if (lt + 1 >= n) {
            text_ = true;
            return n;
        }
        const char c = in_[lt + 1];
        if (is_alpha(c))
            return scan_tag(lt, lt + 1, false);
        if (c == '/') {
            if (lt + 2 >= n) {
                text_ = true;
                return n;
            }
            const char d = in_[lt + 2];
            if (is_alpha(d))
                return scan_tag(lt, lt + 2, true);
            if (d == '>')
                return lt + 3;             // "</>" is dropped
            return skip_past(lt + 2, '>'); // bogus comment
        }
        if (c == '!') {
            if (at(lt + 2, '-') && at(lt + 3, '-'))
                return skip_comment(lt + 4);
            const bool cdata = in_.compare(lt + 2, 7, "[CDATA[") == 0;
            std::size_t end = skip_past(lt + 2, '>'); // DOCTYPE and bogus comments both end at the first '>'
            if (cdata && foreign_current()) {
                const std::size_t close = in_.find("]]>", lt + 9);
                end = close == std::string_view::npos ? n : close + 3;
            }
            if (cdata && (integration_points_ != 0 || fostered_foreign_)) {
                // gumbo 0.10.1 fails an assertion, which aborts the process, on a CDATA section at an
                // integration point in table modes ("<table><math><mi><![CDATA[x]]>y"), and its idea of the
                // current node there differs from the model's (it lets any unknown end tag close any unknown
                // element, and handles end tags at integration points by HTML rules). So once SVG or MathML
                // has been opened directly in a table, every CDATA opener is blanked. The section, or bogus
                // comment, is text or nothing: spaces lose nothing.
                blank(lt, end);
                ++result_.blanked_cdata;
            }
            return end;
        }
        if (c == '?')
            return skip_past(lt + 2, '>');
        text_ = true; // a '<' that starts nothing is text
        return lt + 1;
    }

    std::size_t skip_comment(std::size_t i) const noexcept {
        const std::size_t n = in_.size();
        if (at(i, '>'))
            return i + 1; // <!-->
        if (at(i, '-') && at(i + 1, '>'))
            return i + 2; // <!--->
        while (true) {
            const std::size_t dashes = in_.find("--", i);
            if (dashes == std::string_view::npos)
                return n;
            std::size_t k = dashes + 2;
            while (k < n && in_[k] == '-')
                ++k;
            if (k >= n)
                return n;
            if (in_[k] == '>')
                return k + 1;
            if (in_[k] == '!' && at(k + 1, '>'))
                return k + 2;
            i = k;
        }
    }

    std::size_t scan_tag(std::size_t lt, std::size_t name_begin, bool end_tag) {
        const std::size_t n = in_.size();
        std::size_t i = name_begin;
        while (i < n && !is(in_[i], c_space | c_slash | c_gt))
            ++i;
        tag_token t;
        t.begin = lt;
        t.name_end = i;
        t.key = key_of(text(name_begin, i));
        t.id = tags.find(t.key);
        t.end_tag = end_tag;
        return scan_attributes(t, i);
    }

    // From the end of the tag name to the end of the tag: the attribute states of the tokenizer.
    std::size_t scan_attributes(tag_token& t, std::size_t i) {
        const std::size_t n = in_.size();
        attributes_.clear();
        keep_seen_ = -1;
        const bool merged = !t.end_tag && (t.id == tag::html || t.id == tag::body);
        while (true) {
            while (i < n && is_space(in_[i]))
                ++i;
            if (i >= n)
                return n; // EOF in a tag: the tag is dropped
            const char c = in_[i];
            if (c == '>')
                break;
            if (c == '/') {
                ++i;
                if (at(i, '>')) {
                    t.self_closing = true;
                    break;
                }
                continue;
            }
            // Attribute name: the first character is part of it whatever it is ('=', quotes, '<').
            attribute_span a{i, 0, 0, 0};
            ++i;
            while (i < n && !is(in_[i], c_space | c_slash | c_gt | c_eq))
                ++i;
            a.name_end = i;
            a.value_begin = a.value_end = i;
            std::size_t j = i;
            while (j < n && is_space(in_[j]))
                ++j;
            if (at(j, '=')) {
                i = j + 1;
                while (i < n && is_space(in_[i]))
                    ++i;
                if (i >= n)
                    return n;
                const char q = in_[i];
                if (q == '"' || q == '\'') {
                    const void* close = std::memchr(in_.data() + i + 1, q, n - i - 1);
                    if (close == nullptr)
                        return n;
                    a.value_begin = i + 1;
                    a.value_end = static_cast<std::size_t>(static_cast<const char*>(close) - in_.data());
                    i = a.value_end + 1;
                } else if (q != '>') {
                    a.value_begin = i;
                    while (i < n && !is(in_[i], c_space | c_gt))
                        ++i;
                    a.value_end = i;
                }
            }
            attribute(a, i, merged);
        }
        t.end = i + 1;
        dispatch(t);
        return t.end;
    }

    // The names extract_links reads: only their first occurrence in a tag counts, and it is never blanked.
    static int kept_name(std::string_view name) noexcept {
        static constexpr std::string_view kept[] = {"href", "src", "xlink:href", "http-equiv", "content"};
        for (int k = 0; k < 5; ++k)
            if (name.size() == kept[k].size() &&
                std::equal(name.begin(), name.end(), kept[k].begin(),
                           [](char x, char y) { return ascii::to_lower(x) == y; }))
                return k;
        return -1;
    }

    std::string_view text(std::size_t begin, std::size_t end) const noexcept {
        return in_.substr(begin, end - begin);
    }

    void attribute(const attribute_span& a, std::size_t end, bool merged) {
        attributes_.push_back(a);
        bool excess = attributes_.size() > limits_.max_attributes;
        if (merged && ++merged_attributes_ > limits_.max_attributes)
            excess = true;
        if (!excess)
            return;
        if (keep_seen_ < 0) {
            // First excess attribute of this tag: which kept names did the earlier ones use?
            keep_seen_ = 0;
            for (std::size_t k = 0; k + 1 < attributes_.size(); ++k)
                if (const int kept = kept_name(text(attributes_[k].name_begin, attributes_[k].name_end));
                    kept >= 0)
                    keep_seen_ |= 1 << kept;
        }
        if (const int kept = kept_name(text(a.name_begin, a.name_end));
            kept >= 0 && (keep_seen_ & (1 << kept)) == 0) {
            keep_seen_ |= 1 << kept;
            return;
        }
        blank(a.name_begin, end);
        ++result_.blanked_attributes;
    }

    bool has_attribute_value(std::string_view name, std::initializer_list<std::string_view> values) const {
        for (const auto& a : attributes_) {
            if (!iequals(text(a.name_begin, a.name_end), name))
                continue;
            const std::string_view value = text(a.value_begin, a.value_end);
            for (const auto v : values)
                if (iequals(value, v))
                    return true;
            return false; // the first occurrence wins
        }
        return false;
    }

    // Raw text, RCDATA, script data and plaintext: up to the appropriate end tag, which the caller then
    // scans.
    std::size_t skip_content(std::size_t pos) {
        const std::size_t n = in_.size();
        const content kind = content_;
        content_ = content::data;
        if (kind == content::plaintext)
            return n;
        if (kind == content::rawtext) {
            for (std::size_t i = pos; (i = in_.find("</", i)) != std::string_view::npos; i += 2)
                if (appropriate_end_tag(i))
                    return i;
            return n;
        }
        return skip_script(pos);
    }

    bool appropriate_end_tag(std::size_t i) const noexcept {
        // "</" + the element's name, any case, then whitespace, '/' or '>'.
        const std::size_t name = i + 2;
        if (name + raw_name_.size() >= in_.size())
            return false;
        for (std::size_t k = 0; k < raw_name_.size(); ++k)
            if (ascii::to_lower(in_[name + k]) != raw_name_[k])
                return false;
        const char after = in_[name + raw_name_.size()];
        return is_space(after) || after == '/' || after == '>';
    }

    bool script_word(std::size_t i) const noexcept {
        // "script" (any case) at i, followed by whitespace, '/' or '>'.
        constexpr std::string_view word = "script";
        if (i + word.size() >= in_.size())
            return false;
        for (std::size_t k = 0; k < word.size(); ++k)
            if (ascii::to_lower(in_[i + k]) != word[k])
                return false;
        const char after = in_[i + word.size()];
        return is_space(after) || after == '/' || after == '>';
    }

    // Script data with its escaped ("<!--") and double-escaped ("<!--<script>") states.
    std::size_t skip_script(std::size_t pos) {
        const std::size_t n = in_.size();
        enum { plain, escaped, double_escaped } state = plain;
        std::size_t i = pos;
        while (i < n) {
            const char c = in_[i];
            if (state == plain) {
                const void* found = std::memchr(in_.data() + i, '<', n - i);
                if (found == nullptr)
                    return n;
                i = static_cast<std::size_t>(static_cast<const char*>(found) - in_.data());
                if (at(i + 1, '/') && appropriate_end_tag(i))
                    return i;
                if (at(i + 1, '!') && at(i + 2, '-') && at(i + 3, '-')) {
                    state = escaped;
                    i += 4;
                    // "<!--" leaves the tokenizer in "escaped dash dash": a '>' right away ends the escape.
                    while (at(i, '-'))
                        ++i;
                    if (at(i, '>')) {
                        state = plain;
                        ++i;
                    }
                    continue;
                }
                ++i;
                continue;
            }
            if (c == '-' && at(i + 1, '-')) {
                // "--", then more dashes, then '>' goes back to plain script data (from either escape).
                std::size_t k = i + 2;
                while (at(k, '-'))
                    ++k;
                if (at(k, '>')) {
                    state = plain;
                    i = k + 1;
                } else {
                    i = k;
                }
                continue;
            }
            if (c == '<') {
                if (state == escaped) {
                    if (at(i + 1, '/') && appropriate_end_tag(i))
                        return i;
                    if (script_word(i + 1)) {
                        state = double_escaped;
                        i += 7;
                        continue;
                    }
                } else if (at(i + 1, '/') && script_word(i + 2)) {
                    state = escaped;
                    i += 8;
                    continue;
                }
            }
            ++i;
        }
        return n;
    }

    // ---- Output ----

    void blank(std::size_t begin, std::size_t end) {
        if (!copied_) {
            out_.assign(in_.data(), in_.size());
            copied_ = true;
        }
        std::fill(out_.begin() + static_cast<std::ptrdiff_t>(begin),
                  out_.begin() + static_cast<std::ptrdiff_t>(end), ' ');
    }

    void blank_tag(const tag_token& t) {
        blank(t.begin, t.end);
        ++result_.blanked_tags;
        text_ = true; // the parser now sees whitespace there
    }

    // ---- Tree construction, approximately ----

    void dispatch(const tag_token& t) {
        if (text_) {
            text_ = false;
            if (!list_.empty() && html_rules_for(tag::unknown) && !in_select())
                reconstruct();
        }
        if (t.end_tag) {
            ++result_.end_tags;
            if (cut_ != npos)
                return;
            ignored_ = false;
            // Past the element budget, "</p>" with no <p> in scope and "</br>" would create elements.
            const bool creates = over_element_budget() &&
                                 (t.id == tag::br || (t.id == tag::p && in_button_scope(tag::p) == npos));
            if (!stack_.empty() && stack_.back().ns != space::html)
                foreign_end(t);
            else
                html_end(t);
            if (over_element_budget() && (ignored_ || creates) && (tags.flags(t.id) & f_raw) == 0) {
                blank_over_budget(t);
                return;
            }
            neutralize_if_ignored(t);
            return;
        }
        ++result_.start_tags;
        if (budget_start(t))
            return;
        if (!html_rules_for(t.id)) {
            const bool breakout = (tags.flags(t.id) & f_breakout) != 0 ||
                                  (t.id == tag::font && (has_attribute("color") || has_attribute("face") ||
                                                         has_attribute("size")));
            if (!breakout) {
                foreign_start(t);
                return;
            }
            while (!stack_.empty() && stack_.back().ns != space::html &&
                   (stack_.back().flags & (f_html_ip | f_math_text_ip)) == 0)
                pop();
        }
        html_start(t);
    }

    // ---- Budgets ----

    bool over_element_budget() const noexcept { return result_.start_tags > limits_.max_elements; }

    // The tags blanked past the element budget are then removed from the copy, each run of them left as one
    // space (never nothing: "<" + "<b>" + "div>" must not become a tag), so that the text node they merge
    // into is no bigger than the page's text: gumbo grows it by doubling, and the arena keeps every copy.
    void blank_over_budget(const tag_token& t) {
        blank(t.begin, t.end);
        if (removed_.empty())
            removed_.resize(in_.size() / 64 + 1);
        for (std::size_t i = t.begin; i < t.end; ++i)
            removed_[i / 64] |= std::uint64_t{1} << (i % 64);
        ++result_.over_budget_tags;
        text_ = true;
    }

    void compact() {
        std::size_t kept = 0;
        bool in_run = false;
        for (std::size_t i = 0; i < out_.size(); ++i) {
            if ((removed_[i / 64] >> (i % 64) & 1) != 0) {
                if (!in_run)
                    out_[kept++] = ' ';
                in_run = true;
                continue;
            }
            in_run = false;
            out_[kept++] = out_[i];
        }
        out_.resize(kept);
        out_.shrink_to_fit();
        std::vector<std::uint64_t>{}.swap(removed_);
    }

    bool link_tag(const tag_token& t) const {
        switch (t.id) {
        case tag::a:
        case tag::area:
            return has_attribute("href") || has_attribute("xlink:href");
        case tag::frame:
        case tag::iframe:
            return has_attribute("src");
        case tag::meta:
            return has_attribute_value("http-equiv", {"refresh"});
        default:
            return false;
        }
    }

    // The link and element budgets for a start tag; true when the tag needs nothing more.
    bool budget_start(const tag_token& t) {
        const std::uint32_t flags = tags.flags(t.id);
        if (cut_ == npos && link_tag(t)) {
            if (limits_.max_links != 0 && result_.link_tags >= limits_.max_links)
                cut_ = t.begin;
            else
                ++result_.link_tags;
        }
        if (cut_ != npos) {
            // Past the cut only the tokenizer matters, to count the link-bearing tags outside raw text.
            if (link_tag(t))
                ++result_.dropped_links;
            if ((flags & f_raw) != 0 && html_rules_for(t.id))
                raw(t, (flags & f_script) != 0      ? content::script
                       : (flags & f_plaintext) != 0 ? content::plaintext
                                                    : content::rawtext);
            return true;
        }
        // <frameset> holds the frames (and, past "after frameset", the parser ignores start tags: only
        // nesting, which the depth limit bounds, makes more of them); <svg> and <math> change what their
        // content is.
        if (over_element_budget() && (flags & (f_never_blank | f_raw)) == 0 && t.id != tag::frameset &&
            t.id != tag::svg && t.id != tag::math) {
            blank_over_budget(t);
            return true;
        }
        return false;
    }

    bool has_attribute(std::string_view name) const {
        return std::any_of(attributes_.begin(), attributes_.end(), [&](const attribute_span& a) {
            return iequals(text(a.name_begin, a.name_end), name);
        });
    }

    // Whether a start tag (or text, with tag::unknown) at the current node follows the HTML rules.
    bool html_rules_for(tag id) const noexcept {
        if (stack_.empty())
            return true;
        const open_element& top = stack_.back();
        if (top.ns == space::html || (top.flags & f_html_ip) != 0)
            return true;
        if ((top.flags & f_math_text_ip) != 0 && id != tag::mglyph && id != tag::malignmark)
            return true;
        return top.ns == space::math && top.id == tag::annotation_xml && id == tag::svg;
    }

    bool foreign_current() const noexcept { return !stack_.empty() && stack_.back().ns != space::html; }

    std::uint32_t flags_for(tag id, space ns) const {
        if (ns == space::html)
            return tags.flags(id);
        if (ns == space::math) {
            if (id == tag::mi || id == tag::mo || id == tag::mn || id == tag::ms || id == tag::mtext)
                return f_special | f_scope | f_math_text_ip;
            if (id == tag::annotation_xml)
                return f_special | f_scope |
                       (has_attribute_value("encoding", {"text/html", "application/xhtml+xml"})
                            ? std::uint32_t{f_html_ip}
                            : 0u);
            return 0;
        }
        if (id == tag::foreignobject || id == tag::desc || id == tag::title)
            return f_special | f_scope | f_html_ip;
        return 0;
    }

    std::uint32_t push(tag id, std::uint64_t key, space ns) {
        stack_.push_back({key, flags_for(id, ns), ++serial_, id, ns});
        if (ns == space::html)
            ++open_[static_cast<std::size_t>(id)];
        else if ((stack_.back().flags & (f_html_ip | f_math_text_ip)) != 0)
            ++integration_points_;
        result_.max_depth = std::max(result_.max_depth, stack_.size());
        return serial_;
    }

    void forget(const open_element& e) {
        if (e.ns == space::html)
            --open_[static_cast<std::size_t>(e.id)];
        else if ((e.flags & (f_html_ip | f_math_text_ip)) != 0)
            --integration_points_;
        if ((e.flags & f_marker) != 0 && e.ns == space::html)
            clear_to_marker();
        if ((e.flags & f_formatting) != 0 && e.ns == space::html)
            for (std::size_t k = list_.size(); k-- > 0;)
                if (!list_[k].marker && list_[k].serial == e.serial) {
                    list_[k].on_stack = false;
                    break;
                }
    }

    void pop() {
        const open_element e = stack_.back();
        stack_.pop_back();
        forget(e);
    }

    void pop_through(std::size_t index) {
        while (stack_.size() > index)
            pop();
    }

    void erase_element(std::size_t index) {
        const open_element e = stack_[index];
        stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(index));
        forget(e);
    }

    bool is_open(tag id) const noexcept { return open_[static_cast<std::size_t>(id)] != 0; }

    // The topmost HTML `id` reachable before an element with one of `boundaries`, or npos.
    std::size_t in_scope(tag id, std::uint32_t boundaries = f_scope, tag extra1 = tag::unknown,
                         tag extra2 = tag::unknown) const noexcept {
        if (!is_open(id))
            return npos;
        for (std::size_t k = stack_.size(); k-- > 0;) {
            const open_element& e = stack_[k];
            if (e.is(id))
                return k;
            if ((e.flags & boundaries) != 0 ||
                (e.ns == space::html && extra1 != tag::unknown && (e.id == extra1 || e.id == extra2)))
                return npos;
        }
        return npos;
    }

    std::size_t in_button_scope(tag id) const noexcept { return in_scope(id, f_scope, tag::button); }

    void close_p() {
        if (const std::size_t k = in_button_scope(tag::p); k != npos)
            pop_through(k);
    }

    bool in_select() const noexcept {
        if (!is_open(tag::select))
            return false;
        for (std::size_t k = stack_.size(); k-- > 0;) {
            const open_element& e = stack_[k];
            if (e.is(tag::option) || e.is(tag::optgroup))
                continue;
            return e.is(tag::select);
        }
        return false;
    }

    enum class table_mode { none, table, cell };

    table_mode current_table_mode() const noexcept {
        if (!is_open(tag::table))
            return table_mode::none;
        for (std::size_t k = stack_.size(); k-- > 0;) {
            const open_element& e = stack_[k];
            if (e.ns != space::html)
                continue;
            if ((e.flags & f_table_mode) != 0)
                return table_mode::table;
            if ((e.flags & f_cell) != 0)
                return table_mode::cell;
            if (e.id == tag::template_)
                return table_mode::none;
        }
        return table_mode::none;
    }

    // Pops foster-parented and other elements down to one of `ids` (or a table, template or html element).
    void clear_to(std::initializer_list<tag> ids) {
        while (!stack_.empty()) {
            const open_element& top = stack_.back();
            if (top.ns == space::html &&
                (top.id == tag::table || top.id == tag::template_ || top.id == tag::html ||
                 std::find(ids.begin(), ids.end(), top.id) != ids.end()))
                return;
            pop();
        }
    }

    void close_cell() {
        for (std::size_t k = stack_.size(); k-- > 0;) {
            const open_element& e = stack_[k];
            if (e.is(tag::td) || e.is(tag::th)) {
                pop_through(k);
                return;
            }
            if (e.is(tag::table) || e.is(tag::template_))
                return;
        }
    }

    // ---- The list of active formatting elements ----

    void clear_to_marker() {
        while (!list_.empty()) {
            const bool marker = list_.back().marker;
            list_.pop_back();
            if (marker)
                return;
        }
    }

    std::size_t find_formatting(std::uint64_t key) const noexcept {
        for (std::size_t k = list_.size(); k-- > 0;) {
            if (list_[k].marker)
                return npos;
            if (list_[k].key == key)
                return k;
        }
        return npos;
    }

    std::size_t find_element(std::uint32_t serial) const noexcept {
        for (std::size_t k = stack_.size(); k-- > 0;)
            if (stack_[k].serial == serial)
                return k;
        return npos;
    }

    void reconstruct() {
        if (!list_.empty() && !list_.back().marker && !list_.back().on_stack)
            reconstruct_entries();
    }

    void reconstruct_entries() {
        std::size_t first = list_.size() - 1;
        while (first > 0 && !list_[first - 1].marker && !list_[first - 1].on_stack)
            --first;
        const std::size_t count = list_.size() - first;
        if (result_.reconstructed + count > budget_ || stack_.size() + count > limits_.max_depth) {
            // Too many re-created elements: blank the start tags they come from, so the parser never had
            // them. <a> stays (it carries a link) and is re-created; at most one is on the list past a
            // marker.
            std::size_t kept = first;
            for (std::size_t k = first; k < list_.size(); ++k) {
                if (list_[k].id == tag::a) {
                    list_[kept++] = list_[k];
                    continue;
                }
                blank(list_[k].begin, list_[k].end);
                ++result_.blanked_tags;
            }
            list_.resize(kept);
        }
        for (std::size_t k = first; k < list_.size(); ++k) {
            list_[k].serial = push(list_[k].id, list_[k].key, space::html);
            list_[k].on_stack = true;
            ++result_.reconstructed;
        }
    }

    void push_formatting(const tag_token& t) {
        // Noah's Ark: at most three identical entries after the last marker (identical raw attribute text
        // here, which can only count fewer identical elements than the parser does).
        const std::string_view attributes = text(t.name_end, t.end - 1);
        std::size_t same = 0;
        std::size_t earliest = npos;
        for (std::size_t k = list_.size(); k-- > 0;) {
            if (list_[k].marker)
                break;
            if (list_[k].key == t.key && text(list_[k].name_end, list_[k].end - 1) == attributes) {
                ++same;
                earliest = k;
            }
        }
        if (same >= 3)
            list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(earliest));
        formatting_entry entry;
        entry.key = t.key;
        entry.begin = t.begin;
        entry.name_end = t.name_end;
        entry.end = t.end;
        entry.serial = push(t.id, t.key, space::html);
        entry.on_stack = true;
        entry.id = t.id;
        list_.push_back(entry);
    }

    void push_marker() {
        formatting_entry marker;
        marker.marker = true;
        list_.push_back(marker);
    }

    // The adoption agency algorithm, as far as depth goes: with no furthest block it pops through the
    // formatting element; with one, it moves elements around without changing the depth, so the model leaves
    // them.
    void adopt(const tag_token& t) {
        if (!list_.empty() && !stack_.empty() && list_.back().on_stack && list_.back().key == t.key &&
            !list_.back().marker && list_.back().serial == stack_.back().serial) {
            // The usual case, <b>...</b>: the current node is the last formatting element.
            list_.pop_back();
            pop();
            return;
        }
        if (!stack_.empty() && stack_.back().ns == space::html && stack_.back().key == t.key) {
            const std::uint32_t serial = stack_.back().serial;
            const bool listed = std::any_of(list_.begin(), list_.end(), [&](const formatting_entry& e) {
                return !e.marker && e.serial == serial && e.on_stack;
            });
            if (!listed) {
                pop();
                return;
            }
        }
        const std::size_t entry = find_formatting(t.key);
        if (entry == npos) {
            any_other_end(t);
            return;
        }
        if (!list_[entry].on_stack) {
            list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(entry));
            return;
        }
        const std::size_t index = find_element(list_[entry].serial);
        if (index == npos) {
            list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(entry));
            return;
        }
        for (std::size_t k = index + 1; k < stack_.size(); ++k)
            if ((stack_[k].flags & f_scope) != 0) {
                ignored_ = true; // not in scope
                return;
            }
        for (std::size_t k = index + 1; k < stack_.size(); ++k)
            if ((stack_[k].flags & f_special) != 0)
                return; // a furthest block: depth unchanged
        list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(entry));
        pop_through(index);
    }

    void any_other_end(const tag_token& t) {
        for (std::size_t k = stack_.size(); k-- > 0;) {
            const open_element& e = stack_[k];
            if (e.ns == space::html && e.key == t.key) {
                pop_through(k);
                return;
            }
            if ((e.flags & f_special) != 0)
                break;
        }
        ignored_ = true;
    }

    // Where the parser ignores an end tag, it has walked the stack of open elements for nothing; when the
    // stack is deep, the guard turns such end tags into bogus comments of the same length ("</x a=1>" into
    // "<!      >"), which the parser skips without a walk. Spaces would not do: they are text, which
    // re-creates formatting elements. The end tags that close raw text end a tokenizer state and are never
    // touched.
    void neutralize_if_ignored(const tag_token& t) {
        if (!ignored_ || stack_.size() <= limits_.max_depth / 8 || (tags.flags(t.id) & f_raw) != 0)
            return;
        blank(t.begin + 2, t.end - 1);
        out_[t.begin + 1] = '!';
        ++result_.neutralized_end_tags;
    }

    // ---- Start tags ----

    void foreign_start(const tag_token& t) {
        if (t.self_closing)
            return; // foreign elements honour "/>"
        if (stack_.size() >= limits_.max_depth) {
            blank_tag(t);
            return;
        }
        push(t.id, t.key, stack_.back().ns);
    }

    void raw(const tag_token& t, content kind) {
        content_ = kind;
        raw_name_.clear();
        for (std::size_t k = t.begin + 1; k < t.name_end; ++k)
            raw_name_.push_back(ascii::to_lower(in_[k]));
    }

    void html_start(const tag_token& t) {
        if (in_select()) {
            select_start(t);
            return;
        }
        const std::uint32_t flags = tags.flags(t.id);
        const bool opens = (flags & (f_void | f_raw | f_never_blank)) == 0 &&
                           !(t.self_closing && (t.id == tag::svg || t.id == tag::math));
        if (opens && stack_.size() >= limits_.max_depth) {
            blank_tag(t);
            return;
        }
        if ((flags & f_raw) != 0) {
            if (t.id == tag::xmp) {
                close_p();
                reconstruct();
            } else if (t.id == tag::plaintext) {
                close_p();
            }
            raw(t, (flags & f_script) != 0      ? content::script
                   : (flags & f_plaintext) != 0 ? content::plaintext
                                                : content::rawtext);
            return;
        }
        switch (t.id) {
        case tag::html:
        case tag::head:
        case tag::body:
        case tag::frame:
        case tag::base:
        case tag::basefont:
        case tag::bgsound:
        case tag::link:
        case tag::meta:
        case tag::param:
        case tag::source:
        case tag::track:
            return;
        case tag::hr:
            close_p();
            return;
        case tag::area:
        case tag::br:
        case tag::embed:
        case tag::img:
        case tag::image:
        case tag::keygen:
        case tag::wbr:
        case tag::input:
        case tag::isindex:
            reconstruct();
            return;
        case tag::template_:
            push(t.id, t.key, space::html);
            push_marker();
            return;
        case tag::a:
            if (const std::size_t entry = find_formatting(t.key); entry != npos) {
                const std::uint32_t serial = list_[entry].serial;
                const bool on_stack = list_[entry].on_stack;
                adopt(t);
                if (const std::size_t again = find_formatting(t.key); again != npos)
                    list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(again));
                if (on_stack)
                    if (const std::size_t index = find_element(serial); index != npos)
                        erase_element(index);
            }
            reconstruct();
            push_formatting(t);
            return;
        case tag::nobr:
            reconstruct();
            if (in_scope(tag::nobr) != npos) {
                adopt(t);
                reconstruct();
            }
            push_formatting(t);
            return;
        case tag::b:
        case tag::big:
        case tag::code:
        case tag::em:
        case tag::font:
        case tag::i:
        case tag::s:
        case tag::small:
        case tag::strike:
        case tag::strong:
        case tag::tt:
        case tag::u:
            if (list_.size() >= 2 * limits_.max_depth) {
                blank_tag(t);
                return;
            }
            reconstruct();
            push_formatting(t);
            return;
        case tag::applet:
        case tag::marquee:
        case tag::object:
            reconstruct();
            push(t.id, t.key, space::html);
            push_marker();
            return;
        case tag::table:
            if (current_table_mode() == table_mode::table) {
                if (const std::size_t k = in_scope(tag::table, f_table_scope); k != npos)
                    pop_through(k);
            } else {
                close_p();
            }
            push(t.id, t.key, space::html);
            return;
        case tag::caption:
        case tag::col:
        case tag::colgroup:
        case tag::tbody:
        case tag::thead:
        case tag::tfoot:
        case tag::tr:
        case tag::td:
        case tag::th:
            table_part_start(t);
            return;
        case tag::li:
            close_list_item(tag::li, tag::li);
            close_p();
            push(t.id, t.key, space::html);
            return;
        case tag::dd:
        case tag::dt:
            close_list_item(tag::dd, tag::dt);
            close_p();
            push(t.id, t.key, space::html);
            return;
        case tag::button:
            if (const std::size_t k = in_scope(tag::button); k != npos)
                pop_through(k);
            reconstruct();
            push(t.id, t.key, space::html);
            return;
        case tag::h1:
        case tag::h2:
        case tag::h3:
        case tag::h4:
        case tag::h5:
        case tag::h6:
            close_p();
            if (!stack_.empty() && stack_.back().ns == space::html && (stack_.back().flags & f_heading) != 0)
                pop();
            push(t.id, t.key, space::html);
            return;
        case tag::form:
            if (is_open(tag::form))
                return; // the form element pointer is set: ignored
            close_p();
            push(t.id, t.key, space::html);
            return;
        case tag::option:
        case tag::optgroup:
            if (!stack_.empty() && stack_.back().is(tag::option))
                pop();
            reconstruct();
            push(t.id, t.key, space::html);
            return;
        case tag::rb:
        case tag::rtc:
        case tag::rp:
        case tag::rt:
            if (in_scope(tag::ruby) != npos)
                while (!stack_.empty() && stack_.back().ns == space::html &&
                       (stack_.back().flags & f_implied_end) != 0)
                    pop();
            push(t.id, t.key, space::html);
            return;
        case tag::svg:
        case tag::math:
            reconstruct();
            if (current_table_mode() == table_mode::table)
                fostered_foreign_ = true;
            if (!t.self_closing)
                push(t.id, t.key, t.id == tag::svg ? space::svg : space::math);
            return;
        default:
            break;
        }
        if ((flags & f_closes_p) != 0) {
            close_p();
            push(t.id, t.key, space::html);
            return;
        }
        if ((flags & f_special) != 0) { // frameset, noscript, select...
            if (t.id == tag::select)
                reconstruct();
            push(t.id, t.key, space::html);
            return;
        }
        reconstruct();
        push(t.id, t.key, space::html);
    }

    void close_list_item(tag one, tag other) {
        for (std::size_t k = stack_.size(); k-- > 0;) {
            const open_element& e = stack_[k];
            if (e.is(one) || e.is(other)) {
                pop_through(k);
                return;
            }
            if ((e.flags & f_special) != 0 && !(e.is(tag::address) || e.is(tag::div) || e.is(tag::p)))
                return;
        }
    }

    void table_part_start(const tag_token& t) {
        table_mode mode = current_table_mode();
        if (mode == table_mode::none)
            return; // ignored outside tables
        if (mode == table_mode::cell) {
            if (t.id == tag::td || t.id == tag::th || t.id == tag::tr || t.id == tag::tbody ||
                t.id == tag::thead || t.id == tag::tfoot || t.id == tag::caption || t.id == tag::col ||
                t.id == tag::colgroup) {
                close_cell();
                if (!stack_.empty() && stack_.back().is(tag::caption))
                    pop();
            } else {
                return;
            }
        }
        const auto top_is = [&](tag id) { return !stack_.empty() && stack_.back().is(id); };
        switch (t.id) {
        case tag::caption:
        case tag::colgroup:
        case tag::tbody:
        case tag::thead:
        case tag::tfoot:
            clear_to({});
            push(t.id, t.key, space::html);
            if (t.id == tag::caption)
                push_marker();
            return;
        case tag::col:
            clear_to({tag::colgroup});
            if (!top_is(tag::colgroup))
                push(tag::colgroup, key_of("colgroup"), space::html);
            return;
        case tag::tr:
            clear_to({tag::tbody, tag::thead, tag::tfoot});
            if (top_is(tag::table))
                push(tag::tbody, key_of("tbody"), space::html);
            push(t.id, t.key, space::html);
            return;
        default: // td, th
            clear_to({tag::tbody, tag::thead, tag::tfoot, tag::tr});
            if (top_is(tag::table))
                push(tag::tbody, key_of("tbody"), space::html);
            if (!top_is(tag::tr))
                push(tag::tr, key_of("tr"), space::html);
            push(t.id, t.key, space::html);
            push_marker();
            return;
        }
    }

    void select_start(const tag_token& t) {
        switch (t.id) {
        case tag::option:
            if (stack_.back().is(tag::option))
                pop();
            push(t.id, t.key, space::html);
            return;
        case tag::optgroup:
            if (stack_.back().is(tag::option))
                pop();
            if (stack_.back().is(tag::optgroup))
                pop();
            push(t.id, t.key, space::html);
            return;
        case tag::select:
            close_select();
            return;
        case tag::input:
        case tag::keygen:
        case tag::textarea:
            close_select();
            html_start(t);
            return;
        case tag::script:
            raw(t, content::script);
            return;
        case tag::template_:
            push(t.id, t.key, space::html);
            push_marker();
            return;
        default:
            if (ends_select_in_table(t.id) && current_table_mode() != table_mode::none) {
                close_select();
                html_start(t);
            }
            return; // otherwise ignored
        }
    }

    void close_select() {
        for (std::size_t k = stack_.size(); k-- > 0;)
            if (stack_[k].is(tag::select)) {
                pop_through(k);
                return;
            }
    }

    // ---- End tags ----

    void foreign_end(const tag_token& t) {
        for (std::size_t k = stack_.size(); k-- > 0;) {
            const open_element& e = stack_[k];
            if (e.ns == space::html) {
                html_end(t);
                return;
            }
            if (e.key == t.key) {
                pop_through(k);
                return;
            }
        }
        html_end(t);
    }

    void html_end(const tag_token& t) {
        if (in_select()) {
            select_end(t);
            return;
        }
        const std::uint32_t flags = tags.flags(t.id);
        switch (t.id) {
        case tag::html:
        case tag::head:
        case tag::body:
            return;
        case tag::br:
            reconstruct(); // "</br>" is a <br>
            return;
        case tag::p:
            if (const std::size_t k = in_button_scope(tag::p); k != npos)
                pop_through(k);
            return;
        case tag::li:
            if (const std::size_t k = in_scope(tag::li, f_scope, tag::ol, tag::ul); k != npos)
                pop_through(k);
            else
                ignored_ = true;
            return;
        case tag::h1:
        case tag::h2:
        case tag::h3:
        case tag::h4:
        case tag::h5:
        case tag::h6:
            for (std::size_t k = stack_.size(); k-- > 0;) {
                const open_element& e = stack_[k];
                if (e.ns == space::html && (e.flags & f_heading) != 0) {
                    pop_through(k);
                    return;
                }
                if ((e.flags & f_scope) != 0)
                    break;
            }
            ignored_ = true;
            return;
        case tag::a:
        case tag::b:
        case tag::big:
        case tag::code:
        case tag::em:
        case tag::font:
        case tag::i:
        case tag::nobr:
        case tag::s:
        case tag::small:
        case tag::strike:
        case tag::strong:
        case tag::tt:
        case tag::u:
            adopt(t);
            return;
        case tag::template_:
            for (std::size_t k = stack_.size(); k-- > 0;)
                if (stack_[k].is(tag::template_)) {
                    pop_through(k);
                    return;
                }
            ignored_ = true;
            return;
        case tag::table:
        case tag::tbody:
        case tag::thead:
        case tag::tfoot:
        case tag::tr:
        case tag::td:
        case tag::th:
        case tag::caption:
        case tag::colgroup:
            if (const std::size_t k = in_scope(t.id, f_table_scope); k != npos)
                pop_through(k);
            else
                ignored_ = true;
            return;
        case tag::form:
            // The form element is removed from the stack wherever it is; what it contains stays open.
            if (const std::size_t k = in_scope(tag::form); k != npos)
                erase_element(k);
            else
                ignored_ = true;
            return;
        default:
            break;
        }
        if ((flags & f_special) != 0) {
            if (const std::size_t k = in_scope(t.id); k != npos)
                pop_through(k);
            else
                ignored_ = true;
            return;
        }
        any_other_end(t);
    }

    void select_end(const tag_token& t) {
        switch (t.id) {
        case tag::select:
            close_select();
            return;
        case tag::option:
            if (stack_.back().is(tag::option))
                pop();
            return;
        case tag::optgroup:
            if (stack_.back().is(tag::option) && stack_.size() >= 2 &&
                stack_[stack_.size() - 2].is(tag::optgroup))
                pop();
            if (stack_.back().is(tag::optgroup))
                pop();
            return;
        default:
            if (ends_select_in_table(t.id) && in_scope(t.id, f_table_scope) != npos) {
                close_select();
                html_end(t);
            }
            return; // otherwise ignored
        }
    }

    std::string_view in_;
    const markup_guard_limits& limits_;
    const std::size_t budget_;
    markup_guard_result result_;
    std::string out_;
    bool copied_ = false;

    content content_ = content::data;
    std::string raw_name_;
    bool text_ = false;
    bool ignored_ = false; // the current end tag changes nothing
    std::vector<attribute_span> attributes_;
    int keep_seen_ = -1;
    std::size_t merged_attributes_ = 0;

    std::vector<open_element> stack_;
    std::vector<formatting_entry> list_;
    std::array<std::uint32_t, tag_count> open_{};
    std::uint32_t serial_ = 0;
    std::size_t integration_points_ = 0; // open SVG and MathML integration points
    bool fostered_foreign_ = false;      // SVG or MathML was opened in a table (not in a cell)
    std::size_t cut_ = npos;             // past max_links: where the document ends
    std::vector<std::uint64_t> removed_; // a bit a byte: tags blanked past the element budget
};

} // namespace

markup_guard_result guard_markup(std::string_view html, const markup_guard_limits& limits) {
    return guard{html, limits}.run();
}

} // namespace asiocrawl::detail
