#include "extractor.hpp"

#include "tags.hpp"
#include "text.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace asiocrawl::detail::html {

namespace {

// ---- Vocabulary -----------------------------------------------------------------------------------------

enum class space : std::uint8_t { html, svg, mathml };

enum class mode : std::uint8_t {
    initial,
    before_html,
    before_head,
    in_head,
    in_head_noscript,
    after_head,
    in_body,
    text,
    in_table,
    in_table_text,
    in_caption,
    in_column_group,
    in_table_body,
    in_row,
    in_cell,
    in_select,
    in_select_in_table,
    in_template,
    after_body,
    in_frameset,
    after_frameset,
    after_after_body,
    after_after_frameset,
};

/// What the tokenizer reads after a start tag: tree construction decides.
enum class lexer_state : std::uint8_t { data, rcdata, rawtext, script, plaintext };

/// A character as tree construction tells them apart (gumbo's token types).
enum class char_class : std::uint8_t { whitespace, other, null, cdata };

struct attribute {
    std::string_view name;     // lowercased and decoded, as tree construction compares names
    std::uint32_t name_offset; // while the tag is read: where the name is in the tokenizer's name buffer
    std::string_view value;    // as written, between the quotes
    char quote;                // '"', '\'', '>' when unquoted, 0 when there is no value
};

struct token {
    enum class type : std::uint8_t { start_tag, end_tag, characters, comment, doctype, eof };
    type kind = type::eof;
    tag name = tag::unknown;
    bool self_closing = false;
    // Start tag: the name as written; end tag: everything between "</" and ">". Foreign content compares
    // these.
    std::string_view raw_name;
    const attribute* attributes = nullptr;
    std::size_t attribute_count = 0;
    char_class chars = char_class::other;
    bool quirks = false; // doctype: it puts the document in quirks mode

    bool is_start(tag t) const noexcept { return kind == type::start_tag && name == t; }
    bool is_end(tag t) const noexcept { return kind == type::end_tag && name == t; }
    bool is_start_in(const tag_set& s) const noexcept { return kind == type::start_tag && s.contains(name); }
    bool is_end_in(const tag_set& s) const noexcept { return kind == type::end_tag && s.contains(name); }
    bool is_chars(char_class c) const noexcept { return kind == type::characters && chars == c; }
    bool is_whitespace() const noexcept { return is_chars(char_class::whitespace); }

    /// The attribute of that name (names are unique: the tokenizer drops later duplicates).
    const attribute* find(std::string_view lowercase_name) const noexcept {
        for (std::size_t i = 0; i < attribute_count; ++i)
            if (attributes[i].name == lowercase_name)
                return &attributes[i];
        return nullptr;
    }
};

using enum tag;

// The tag sets of the tree construction rules, as gumbo 0.10.1 has them.
constexpr tag_set headings{h1, h2, h3, h4, h5, h6};
constexpr tag_set implied_end{dd, dt, li, option, optgroup, p, rp, rb, rt, rtc};
constexpr tag_set implied_end_thoroughly{caption, colgroup, dd,    dt, li,    option, optgroup, p, rp,
                                         rt,      rtc,      tbody, td, tfoot, th,     head,     tr};
constexpr tag_set formatting{a, b, big, code, em, font, i, nobr, s, small, strike, strong, tt, u};
constexpr tag_set special_html{
    address,   applet,   area,    article, aside,    base,       basefont, bgsound, blockquote, body,
    br,        button,   caption, center,  col,      colgroup,   menuitem, dd,      details,    dir,
    div,       dl,       dt,      embed,   fieldset, figcaption, figure,   footer,  form,       frame,
    frameset,  h1,       h2,      h3,      h4,       h5,         h6,       head,    header,     hgroup,
    hr,        html,     iframe,  img,     input,    isindex,    li,       link,    listing,    marquee,
    menu,      meta,     nav,     noembed, noframes, noscript,   object,   ol,      p,          param,
    plaintext, pre,      script,  section, select,   style,      summary,  table,   tbody,      td,
    template_, textarea, tfoot,   th,      thead,    title,      tr,       ul,      wbr,        xmp};
constexpr tag_set special_mathml{mi, mo, mn, ms, mtext, annotation_xml};
constexpr tag_set special_svg{foreignobject, desc};
constexpr tag_set scope_html{applet, caption, html, table, td, th, marquee, object, template_};
constexpr tag_set scope_mathml{mi, mo, mn, ms, mtext, annotation_xml};
constexpr tag_set scope_svg{foreignobject, desc, title};
constexpr tag_set breakout{b,     big,   blockquote, body,   br,   center, code,  dd, div,  dl,   dt,
                           em,    embed, h1,         h2,     h3,   h4,     h5,    h6, head, hr,   i,
                           img,   li,    listing,    menu,   meta, nobr,   ol,    p,  pre,  ruby, s,
                           small, span,  strong,     strike, sub,  sup,    table, tt, u,    ul,   var};
constexpr tag_set table_section{tbody, tfoot, thead};
constexpr tag_set foster_targets{table, tbody, tfoot, thead, tr};

enum class scope_kind : std::uint8_t { normal, list_item, button, table, select };

// ---- The document-order list ------------------------------------------------------------------------------
//
// The references go into a doubly linked list whose order is the document order of the tree a full parser
// would build. Each open element has two markers in it, around its content; inserting into an element links
// before its end marker, foster parenting links before the table's start marker, and the adoption agency
// moves the range between an element's markers. Closed elements lose their markers: their content never moves
// alone.

constexpr std::uint32_t no_item = 0; // item 0 is the list's sentinel
constexpr std::uint32_t marker = UINT32_MAX;

struct list_item {
    std::uint32_t prev;
    std::uint32_t next;
    std::uint32_t entry; // index into entries_, or `marker`
};

// ---- Elements ---------------------------------------------------------------------------------------------

constexpr std::uint32_t no_element = 0; // element 0 is unused; in the formatting list it is the marker

struct element {
    tag name = unknown;
    space ns = space::html;
    bool html_integration_point = false;
    bool open = false;
    std::uint32_t refs = 0; // stack, formatting list, head and form pointers
    std::uint32_t start = no_item;
    std::uint32_t end = no_item;
    std::string_view raw_name;
    // For the Noah's Ark clause: the attributes as a set.
    std::uint64_t attributes_hash = 0;
    std::uint32_t attribute_count = 0;
    // An <a>'s href when it makes a link: clones make it again.
    bool has_link = false;
    std::uint32_t link_offset = 0;
    std::uint32_t link_length = 0;
};

std::uint64_t hash_bytes(std::string_view bytes, std::uint64_t seed) noexcept {
    std::uint64_t h = seed ^ 0xcbf29ce484222325ull;
    for (const char c : bytes)
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

bool is_blank(std::string_view text) noexcept {
    for (const char c : text)
        if (!ascii::is_html_whitespace(c))
            return false;
    return true;
}

// ---- Tree construction ------------------------------------------------------------------------------------

class tree_builder {
public:
    tree_builder(const extractor_options& options, extraction& out)
        : options_(options)
        , out_(out) {
        items_.push_back({0, 0, marker}); // the sentinel
        elements_.emplace_back();         // no_element
    }

    // -- Questions of the tokenizer --

    bool stopped() const noexcept { return stopped_; }
    bool current_node_is_foreign() const noexcept {
        return !stack_.empty() && el(stack_.back()).ns != space::html;
    }
    bool in_initial_mode() const noexcept { return mode_ == mode::initial; }
    tag raw_text_tag() const noexcept { return raw_text_tag_; }

    /// True when a run of text of any kind would change nothing now.
    bool text_is_noop() const noexcept {
        if (ignore_next_linefeed_)
            return false;
        if (stack_.empty())
            return false;
        const element& current = el(stack_.back());
        const bool html_content = current.ns == space::html || current.html_integration_point ||
                                  (current.ns == space::mathml && is_mathml_text_integration_point(current));
        if (!html_content) // foreign content: frameset-ok, and pending table text that it adds to
            return !frameset_ok_ && (mode_ != mode::in_table_text || pending_table_text_);
        switch (mode_) {
        case mode::in_body:
        case mode::in_template:
            return !frameset_ok_ && reconstruct_is_noop();
        case mode::in_select:
        case mode::in_select_in_table:
        case mode::in_frameset:
        case mode::after_frameset:
            return true;
        case mode::after_after_frameset:
            return reconstruct_is_noop();
        case mode::in_table_text:
            return pending_table_text_;
        default:
            return false;
        }
    }

    /// Consumes the "ignore the next line feed" flag of <pre>, <listing> and <textarea>.
    bool take_ignore_linefeed() noexcept {
        const bool flag = ignore_next_linefeed_;
        ignore_next_linefeed_ = false;
        return flag;
    }

    // -- Tokens --

    lexer_state start_tag(const token& t) {
        next_lexer_state_ = lexer_state::data;
        process(t);
        return next_lexer_state_;
    }
    void end_tag(const token& t) { process(t); }
    void characters(char_class c, std::size_t count) {
        token t;
        t.kind = token::type::characters;
        t.chars = c;
        process(t);
        if (count > 1)
            process(t); // after the first, a run changes nothing more: the mode it ends in is stable
    }
    void comment() {
        token t;
        t.kind = token::type::comment;
        process(t);
    }
    void doctype(bool quirks) {
        token t;
        t.kind = token::type::doctype;
        t.quirks = quirks;
        process(t);
    }
    /// The text of the raw text element now open (for <style>), before its end tag or the end of input.
    void raw_text(std::string_view text) { raw_text_ = text; }
    void end_of_input() {
        token t;
        t.kind = token::type::eof;
        process(t);
        finish();
    }

private:
    // -- Elements and the stack --

    element& el(std::uint32_t id) noexcept { return elements_[id]; }
    const element& el(std::uint32_t id) const noexcept { return elements_[id]; }

    std::uint32_t new_element(tag name, space ns) {
        std::uint32_t id;
        if (free_elements_.empty()) {
            id = static_cast<std::uint32_t>(elements_.size());
            elements_.emplace_back();
        } else {
            id = free_elements_.back();
            free_elements_.pop_back();
            elements_[id] = element{};
        }
        element& e = elements_[id];
        e.name = name;
        e.ns = ns;
        return id;
    }
    void retain(std::uint32_t id) noexcept { ++el(id).refs; }
    void release(std::uint32_t id) {
        if (id != no_element && --el(id).refs == 0)
            free_elements_.push_back(id);
    }

    std::uint32_t current() const noexcept { return stack_.back(); }
    bool is_html(std::uint32_t id, tag t) const noexcept {
        return el(id).ns == space::html && el(id).name == t;
    }
    bool is_html_in(std::uint32_t id, const tag_set& s) const noexcept {
        return el(id).ns == space::html && s.contains(el(id).name);
    }
    bool current_is(tag t) const noexcept { return is_html(current(), t); }
    static bool is_mathml_text_integration_point(const element& e) noexcept {
        return e.ns == space::mathml &&
               (e.name == mi || e.name == mo || e.name == mn || e.name == ms || e.name == mtext);
    }
    bool is_special(std::uint32_t id) const noexcept {
        const element& e = el(id);
        switch (e.ns) {
        case space::html:
            return special_html.contains(e.name);
        case space::mathml:
            return special_mathml.contains(e.name);
        case space::svg:
            return special_svg.contains(e.name);
        }
        return false;
    }
    bool in_scope_set(const element& e, scope_kind kind) const noexcept {
        switch (e.ns) {
        case space::html:
            switch (kind) {
            case scope_kind::normal:
                return scope_html.contains(e.name);
            case scope_kind::list_item:
                return scope_html.contains(e.name) || e.name == ol || e.name == ul;
            case scope_kind::button:
                return scope_html.contains(e.name) || e.name == button;
            case scope_kind::table:
                return e.name == html || e.name == table || e.name == template_;
            case scope_kind::select:
                return e.name == optgroup || e.name == option;
            }
            return false;
        case space::mathml:
            return kind != scope_kind::table && kind != scope_kind::select && scope_mathml.contains(e.name);
        case space::svg:
            return kind != scope_kind::table && kind != scope_kind::select && scope_svg.contains(e.name);
        }
        return false;
    }

    bool has_in_scope(const tag_set& targets, scope_kind kind) const noexcept {
        for (std::size_t i = stack_.size(); i-- > 0;) {
            const element& e = el(stack_[i]);
            if (e.ns == space::html && targets.contains(e.name))
                return true;
            const bool boundary = in_scope_set(e, kind);
            if (kind == scope_kind::select ? !boundary : boundary)
                return false;
        }
        return false;
    }
    bool has_in_scope(tag t, scope_kind kind = scope_kind::normal) const noexcept {
        return has_in_scope(tag_set{t}, kind);
    }
    bool has_open(tag t) const noexcept {
        for (std::size_t i = stack_.size(); i-- > 0;) {
            if (is_html(stack_[i], t))
                return true;
            if (is_html(stack_[i], html))
                return false;
        }
        return false;
    }
    bool has_node_in_scope(std::uint32_t id) const noexcept {
        for (std::size_t i = stack_.size(); i-- > 0;) {
            if (stack_[i] == id)
                return true;
            if (in_scope_set(el(stack_[i]), scope_kind::normal))
                return false;
        }
        return false;
    }
    std::ptrdiff_t stack_index(std::uint32_t id) const noexcept {
        for (std::size_t i = stack_.size(); i-- > 0;)
            if (stack_[i] == id)
                return static_cast<std::ptrdiff_t>(i);
        return -1;
    }

    void push(std::uint32_t id) {
        stack_.push_back(id);
        element& e = el(id);
        e.open = true;
        retain(id);
        if (e.ns == space::html && e.name == template_)
            ++templates_open_;
    }
    /// An element leaves the stack: its markers go (its content stays where it is).
    void closed(std::uint32_t id) {
        element& e = el(id);
        e.open = false;
        if (e.start != no_item) {
            unlink_free(e.start);
            unlink_free(e.end);
            e.start = e.end = no_item;
        }
        if (e.ns == space::html && e.name == template_)
            --templates_open_;
        release(id);
    }
    std::uint32_t pop() {
        const std::uint32_t id = stack_.back();
        stack_.pop_back();
        closed(id);
        return id;
    }
    bool has_open_anywhere(tag t) const noexcept {
        for (std::size_t i = stack_.size(); i-- > 0;)
            if (is_html(stack_[i], t))
                return true;
        return false;
    }
    void pop_until(std::uint32_t id) {
        while (!stack_.empty() && pop() != id) {
        }
    }
    void pop_until_html(tag t) {
        if (!has_open_anywhere(t)) {
            // Only a foreign element of that name put the rules here (gumbo switches modes on names whatever
            // the namespace); gumbo then pops the whole stack and fails an assertion. Give up as it does.
            stopped_ = true;
            return;
        }
        while (!stack_.empty()) {
            const std::uint32_t id = stack_.back();
            const bool found = is_html(id, t);
            pop();
            if (found)
                return;
        }
    }
    void remove_from_stack(std::uint32_t id) {
        const std::ptrdiff_t i = stack_index(id);
        if (i < 0)
            return;
        stack_.erase(stack_.begin() + i);
        closed(id);
    }

    // -- The document-order list --

    std::uint32_t new_item(std::uint32_t entry) {
        std::uint32_t i;
        if (free_items_ != no_item) {
            i = free_items_;
            free_items_ = items_[i].next;
        } else {
            i = static_cast<std::uint32_t>(items_.size());
            items_.push_back({});
        }
        items_[i] = {i, i, entry};
        return i;
    }
    void link_before(std::uint32_t at, std::uint32_t first, std::uint32_t last) noexcept {
        const std::uint32_t prev = items_[at].prev;
        items_[prev].next = first;
        items_[first].prev = prev;
        items_[last].next = at;
        items_[at].prev = last;
    }
    void link_before(std::uint32_t at, std::uint32_t item) noexcept { link_before(at, item, item); }
    void unlink(std::uint32_t first, std::uint32_t last) noexcept {
        if (items_[first].prev == first)
            return; // a detached range (a clone's, in the adoption agency)
        const std::uint32_t prev = items_[first].prev;
        const std::uint32_t next = items_[last].next;
        items_[prev].next = next;
        items_[next].prev = prev;
        items_[first].prev = first;
        items_[last].next = last;
    }
    void unlink_free(std::uint32_t i) noexcept {
        unlink(i, i);
        items_[i].next = free_items_;
        free_items_ = i;
    }
    /// Gives an element its markers, as a detached pair.
    void make_markers(element& e) {
        e.start = new_item(marker);
        e.end = new_item(marker);
        items_[e.start].next = e.end;
        items_[e.end].prev = e.start;
    }

    // -- References --

    bool references_are_inert() const noexcept { return templates_open_ > 0; }

    void emit(entry_kind kind, requisite_kind requisite, std::string_view value, std::uint32_t before) {
        if (references_are_inert())
            return;
        const auto offset = static_cast<std::uint32_t>(out_.text.size());
        out_.text.append(value);
        emit_stored(kind, requisite, offset, static_cast<std::uint32_t>(value.size()), before);
    }
    void emit_stored(entry_kind kind, requisite_kind requisite, std::uint32_t offset, std::uint32_t length,
                     std::uint32_t before) {
        if (references_are_inert())
            return;
        const auto index = static_cast<std::uint32_t>(entries_.size());
        entries_.push_back({kind, requisite, offset, length});
        link_before(before, new_item(index));
        std::size_t& count = kind == entry_kind::link        ? stored_links_
                             : kind == entry_kind::requisite ? stored_requisites_
                                                             : stored_bases_;
        ++count;
    }

    /// Between tokens, where every element that may still be cloned is on the stack or in the formatting
    /// list.
    void maybe_compact() {
        if ((options_.max_links != 0 && (stored_links_ >= 2 * options_.max_links + 16 ||
                                         stored_requisites_ >= 2 * options_.max_links + 16)) ||
            stored_bases_ >= 64)
            compact();
    }

    /// Keeps the first max_links links and requisites and the first base, in document order, and the values
    /// that they and the open <a> elements need: later insertions can only come before what it drops.
    void compact() {
        std::string text;
        std::vector<extraction::entry> entries;
        std::size_t links = 0, requisites = 0;
        bool base = false;
        for (std::uint32_t i = items_[0].next; i != 0;) {
            const std::uint32_t next = items_[i].next;
            if (items_[i].entry != marker) {
                extraction::entry e = entries_[items_[i].entry];
                bool keep;
                if (e.kind == entry_kind::link) {
                    keep = options_.max_links == 0 || links < options_.max_links;
                    links += keep;
                    out_.dropped_links += !keep;
                } else if (e.kind == entry_kind::requisite) {
                    keep = options_.max_links == 0 || requisites < options_.max_links;
                    requisites += keep;
                    out_.dropped_requisites += !keep;
                } else {
                    keep = !base;
                    base = true;
                }
                if (keep) {
                    const auto offset = static_cast<std::uint32_t>(text.size());
                    text.append(out_.text, e.offset, e.length);
                    e.offset = offset;
                    items_[i].entry = static_cast<std::uint32_t>(entries.size());
                    entries.push_back(e);
                } else {
                    unlink_free(i);
                }
            }
            i = next;
        }
        const auto keep_link = [&](std::uint32_t id) {
            element& e = el(id);
            if (e.has_link) {
                const auto offset = static_cast<std::uint32_t>(text.size());
                text.append(out_.text, e.link_offset, e.link_length);
                e.link_offset = offset;
            }
        };
        for (const std::uint32_t id : stack_)
            keep_link(id);
        for (const std::uint32_t id : formatting_)
            if (id != no_element && !el(id).open)
                keep_link(id);
        out_.text.swap(text);
        entries_.swap(entries);
        stored_links_ = links;
        stored_requisites_ = requisites;
        stored_bases_ = base ? 1 : 0;
    }

    void finish() {
        compact();
        out_.entries.reserve(entries_.size());
        for (std::uint32_t i = items_[0].next; i != 0; i = items_[i].next)
            if (items_[i].entry != marker)
                out_.entries.push_back(entries_[items_[i].entry]);
    }

    std::string& scratch() {
        scratch_.clear();
        return scratch_;
    }
    std::string_view decoded(const attribute& a) {
        std::string& s = scratch();
        if (is_plain_text(a.value))
            return a.value;
        decode_attribute_value(s, a.value, a.quote);
        return s;
    }

    void emit_link_attribute(const token& t, std::string_view name, std::uint32_t before, element* e) {
        const attribute* a = t.find(name);
        if (a == nullptr || (references_are_inert() && e == nullptr))
            return;
        const std::string_view value = decoded(*a);
        if (is_blank(value))
            return;
        const auto offset = static_cast<std::uint32_t>(out_.text.size());
        const auto length = static_cast<std::uint32_t>(value.size());
        out_.text.append(value);
        emit_stored(entry_kind::link, requisite_kind::image, offset, length, before);
        if (e != nullptr) {
            // An <a> in a template's content links nowhere, but a clone of it outside may.
            e->has_link = true;
            e->link_offset = offset;
            e->link_length = length;
        }
    }

    void emit_requisite_attribute(const token& t, std::string_view name, requisite_kind kind,
                                  std::uint32_t before) {
        if (const attribute* a = t.find(name)) {
            const std::string_view value = decoded(*a);
            if (!is_blank(value))
                emit(entry_kind::requisite, kind, value, before);
        }
    }

    void emit_css(std::string_view css, std::uint32_t before) {
        for (const css_reference& r : extract_css_references(css))
            if (!is_blank(r.url))
                emit(entry_kind::requisite, r.import ? requisite_kind::stylesheet : requisite_kind::style,
                     r.url, before);
    }

    void emit_srcset(std::string_view srcset, std::uint32_t before) {
        // The HTML standard's "parse a srcset attribute", as far as the URLs go.
        std::size_t i = 0;
        const std::string value(srcset);
        while (i < value.size()) {
            while (i < value.size() && (ascii::is_html_whitespace(value[i]) || value[i] == ','))
                ++i;
            if (i >= value.size())
                break;
            const std::size_t start = i;
            while (i < value.size() && !ascii::is_html_whitespace(value[i]))
                ++i;
            std::size_t stop = i;
            bool descriptors = true;
            if (value[stop - 1] == ',') {
                while (stop > start && value[stop - 1] == ',')
                    --stop;
                descriptors = false;
            }
            if (stop > start)
                emit(entry_kind::requisite, requisite_kind::image,
                     std::string_view(value).substr(start, stop - start), before);
            if (descriptors) {
                bool in_parens = false;
                while (i < value.size()) {
                    const char c = value[i++];
                    if (in_parens) {
                        in_parens = c != ')';
                    } else if (c == '(') {
                        in_parens = true;
                    } else if (c == ',') {
                        break;
                    }
                }
            }
        }
    }

    /// The references an element makes, placed before `before` (its end marker, or where it goes when it is
    /// void).
    void emit_references(element& e, const token& t, std::uint32_t before) {
        if (references_are_inert() && !(e.ns == space::html && e.name == a))
            return;
        if (e.ns == space::html) {
            switch (e.name) {
            case a:
            case area:
                emit_link_attribute(t, "href", before, e.name == a ? &e : nullptr);
                break;
            case frame:
            case iframe:
                emit_link_attribute(t, "src", before, nullptr);
                break;
            case base:
                if (const attribute* h = t.find("href"))
                    emit(entry_kind::base, requisite_kind::image, decoded(*h), before);
                break;
            case meta:
                if (const attribute* equiv = t.find("http-equiv")) {
                    const std::string_view value = decoded(*equiv);
                    if (value.size() == 7 &&
                        std::equal(value.begin(), value.end(), "refresh",
                                   [](char x, char y) { return ascii::to_lower(x) == y; }))
                        if (const attribute* content = t.find("content")) {
                            const std::string refresh_content(decoded(*content));
                            if (auto target = parse_meta_refresh(refresh_content);
                                target && !is_blank(*target))
                                emit(entry_kind::link, requisite_kind::image, *target, before);
                        }
                }
                break;
            default:
                break;
            }
        } else if (e.ns == space::svg && e.name == a) {
            // xlink:href is renamed href in foreign content: the first of the two in attribute order is the
            // one.
            const attribute* href = t.find("href");
            const attribute* xlink = t.find("xlink:href");
            const attribute* link = href == nullptr || (xlink != nullptr && xlink < href) ? xlink : href;
            if (link != nullptr) {
                const std::string_view value = decoded(*link);
                if (!is_blank(value))
                    emit(entry_kind::link, requisite_kind::image, value, before);
            }
        }
        if (options_.requisites)
            emit_requisites(e, t, before);
    }

    void emit_requisites(const element& e, const token& t, std::uint32_t before) {
        if (const attribute* style_attribute = t.find("style")) {
            const std::string css(decoded(*style_attribute));
            emit_css(css, before);
        }
        if (e.ns != space::html)
            return;
        switch (e.name) {
        case img:
            emit_requisite_attribute(t, "src", requisite_kind::image, before);
            if (const attribute* srcset = t.find("srcset")) {
                const std::string value(decoded(*srcset));
                emit_srcset(value, before);
            }
            break;
        case script:
            emit_requisite_attribute(t, "src", requisite_kind::script, before);
            break;
        case link:
            if (const attribute* rel = t.find("rel")) {
                const std::optional<requisite_kind> kind = link_requisite(decoded(*rel));
                if (kind)
                    emit_requisite_attribute(t, "href", *kind, before);
            }
            break;
        case video:
            emit_requisite_attribute(t, "poster", requisite_kind::image, before);
            emit_requisite_attribute(t, "src", requisite_kind::media, before);
            break;
        case audio:
        case source:
            emit_requisite_attribute(t, "src", requisite_kind::media, before);
            break;
        case object:
            emit_requisite_attribute(t, "data", requisite_kind::object, before);
            break;
        case embed:
            emit_requisite_attribute(t, "src", requisite_kind::embed, before);
            break;
        default:
            break;
        }
    }

    static std::optional<requisite_kind> link_requisite(std::string_view rel) {
        std::optional<requisite_kind> found;
        std::size_t i = 0;
        while (i < rel.size()) {
            while (i < rel.size() && ascii::is_html_whitespace(rel[i]))
                ++i;
            const std::size_t start = i;
            while (i < rel.size() && !ascii::is_html_whitespace(rel[i]))
                ++i;
            std::string word(rel.substr(start, i - start));
            for (char& c : word)
                c = ascii::to_lower(c);
            if (word == "stylesheet")
                return requisite_kind::stylesheet;
            if ((word == "icon" || word == "apple-touch-icon") && !found)
                found = requisite_kind::icon;
            else if ((word == "preload" || word == "modulepreload") && !found)
                found = requisite_kind::preload;
        }
        return found;
    }

    // -- Inserting elements --

    /// Where a new node goes: before this item of the list.
    std::uint32_t insertion_point(std::uint32_t override_target = no_element) {
        if (stack_.empty())
            return no_item; // the end of the list
        const std::uint32_t target = override_target != no_element ? override_target : current();
        if (!foster_ || !is_html_in(target, foster_targets))
            return el(target).end;
        for (std::size_t i = stack_.size(); i-- > 0;) {
            const std::uint32_t id = stack_[i];
            if (is_html(id, template_))
                return el(id).end;
            if (is_html(id, table))
                return el(id).start;
        }
        return el(stack_.front()).end;
    }

    void set_attributes_identity(element& e, const token& t) {
        // The attribute set as Noah's Ark compares it: decoded names and values (names are unique).
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < t.attribute_count; ++i) {
            const attribute& at = t.attributes[i];
            std::string& value = scratch();
            if (at.quote != 0)
                decode_attribute_value(value, at.value, at.quote);
            sum += hash_bytes(value, hash_bytes(at.name, 1));
        }
        e.attributes_hash = sum;
        e.attribute_count = static_cast<std::uint32_t>(t.attribute_count);
    }

    /// A start tag's element, inserted at the appropriate place and pushed; no_element when the stack is full
    /// and the tag is an ordinary one (its references are still taken).
    std::uint32_t insert_element(const token& t, space ns, bool bounded) {
        const std::uint32_t id = new_element(t.name, ns);
        element& e = el(id);
        e.raw_name = t.raw_name;
        if (ns == space::mathml && t.name == annotation_xml) {
            if (const attribute* encoding = t.find("encoding")) {
                std::string value(decoded(*encoding));
                for (char& c : value)
                    c = ascii::to_lower(c);
                e.html_integration_point = value == "text/html" || value == "application/xhtml+xml";
            }
        } else if (ns == space::svg) {
            e.html_integration_point = t.name == foreignobject || t.name == desc || t.name == title;
        }
        if (ns == space::html && formatting.contains(t.name))
            set_attributes_identity(e, t);
        const std::uint32_t at = insertion_point();
        if (bounded && stack_.size() >= options_.max_depth) {
            emit_references(e, t, at);
            retain(id);
            release(id);
            return no_element;
        }
        make_markers(e);
        link_before(at, e.start, e.end);
        emit_references(e, t, e.end);
        push(id);
        return id;
    }
    std::uint32_t insert_html(const token& t, bool bounded = true) {
        return insert_element(t, space::html, bounded);
    }
    void insert_void(const token& t) {
        const std::uint32_t id = new_element(t.name, space::html);
        emit_references(el(id), t, insertion_point());
        retain(id);
        release(id);
    }
    std::uint32_t insert_implied(tag name) {
        const std::uint32_t id = new_element(name, space::html);
        element& e = el(id);
        make_markers(e);
        link_before(insertion_point(), e.start, e.end);
        push(id);
        return id;
    }
    std::uint32_t clone_of(std::uint32_t original) {
        const element& o = el(original);
        const std::uint32_t id = new_element(o.name, o.ns);
        element& e = el(id);
        const element& from = el(original); // elements_ may have grown
        e.raw_name = from.raw_name;
        e.html_integration_point = from.html_integration_point;
        e.attributes_hash = from.attributes_hash;
        e.attribute_count = from.attribute_count;
        e.has_link = from.has_link;
        e.link_offset = from.link_offset;
        e.link_length = from.link_length;
        make_markers(e);
        if (e.has_link)
            emit_stored(entry_kind::link, requisite_kind::image, e.link_offset, e.link_length, e.end);
        return id;
    }
    void generic_raw_text(const token& t, lexer_state state) {
        insert_html(t, false);
        next_lexer_state_ = state;
        raw_text_tag_ = t.name;
        raw_text_ = {};
        original_mode_ = mode_;
        mode_ = mode::text;
    }

    // -- The list of active formatting elements --

    bool reconstruct_is_noop() const noexcept {
        return formatting_.empty() || formatting_.back() == no_element || el(formatting_.back()).open;
    }
    /// Adds an element that was pushed (nothing when the stack was full and it was not).
    void add_formatting(std::uint32_t id) {
        if (id == no_element)
            return;
        const element& e = el(id);
        std::size_t identical = 0, earliest = 0, since_marker = 0;
        for (std::size_t i = formatting_.size(); i-- > 0;) {
            const std::uint32_t other = formatting_[i];
            if (other == no_element)
                break;
            ++since_marker;
            const element& o = el(other);
            if (o.name == e.name && o.ns == e.ns && o.attribute_count == e.attribute_count &&
                o.attributes_hash == e.attributes_hash) {
                ++identical;
                earliest = i;
            }
        }
        if (identical >= 3) {
            remove_formatting_at(earliest);
            --since_marker;
        }
        if (since_marker >= options_.max_formatting) // a bound of ours (docs/LINKS.md): forget the oldest
            remove_formatting_at(formatting_.size() - since_marker);
        formatting_.push_back(id);
        retain(id);
    }
    void add_marker() { formatting_.push_back(no_element); }
    void remove_formatting_at(std::size_t i) {
        release(formatting_[i]); // a marker is element 0: release ignores it
        formatting_.erase(formatting_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    std::ptrdiff_t formatting_index(std::uint32_t id) const noexcept {
        for (std::size_t i = formatting_.size(); i-- > 0;)
            if (formatting_[i] == id)
                return static_cast<std::ptrdiff_t>(i);
        return -1;
    }
    void clear_formatting_to_marker() {
        while (!formatting_.empty()) {
            const std::uint32_t id = formatting_.back();
            formatting_.pop_back();
            if (id == no_element)
                return;
            release(id);
        }
    }
    std::uint32_t last_formatting_a() const noexcept {
        for (std::size_t i = formatting_.size(); i-- > 0;) {
            if (formatting_[i] == no_element)
                return no_element;
            if (is_html(formatting_[i], a))
                return formatting_[i];
        }
        return no_element;
    }

    void reconstruct() {
        if (reconstruct_is_noop())
            return;
        std::size_t i = formatting_.size() - 1;
        while (i > 0) {
            const std::uint32_t id = formatting_[i - 1];
            if (id == no_element || el(id).open)
                break;
            --i;
        }
        for (; i < formatting_.size(); ++i) {
            const std::uint32_t clone = clone_of(formatting_[i]);
            const element& c = el(clone);
            const std::uint32_t first = c.start, last = c.end;
            link_before(insertion_point(), first, last);
            push(clone);
            release(formatting_[i]);
            formatting_[i] = clone;
            retain(clone);
        }
    }

    /// The adoption agency algorithm, as gumbo 0.10.1 runs it (after its step 13.5 a node stays on the
    /// stack).
    void adoption_agency(tag subject) {
        const std::uint32_t current_node = current();
        if (is_html(current_node, subject) && formatting_index(current_node) < 0) {
            pop();
            return;
        }
        for (int outer = 0; outer < 8; ++outer) {
            std::uint32_t fe = no_element;
            for (std::size_t j = formatting_.size(); j-- > 0;) {
                if (formatting_[j] == no_element)
                    return;
                if (is_html(formatting_[j], subject)) {
                    fe = formatting_[j];
                    break;
                }
            }
            if (fe == no_element)
                return;
            const std::ptrdiff_t fe_index = stack_index(fe);
            if (fe_index < 0) {
                remove_formatting_at(static_cast<std::size_t>(formatting_index(fe)));
                return;
            }
            if (!has_in_scope(el(fe).name))
                return;
            std::uint32_t furthest = no_element;
            for (std::size_t j = static_cast<std::size_t>(fe_index); j < stack_.size(); ++j)
                if (is_special(stack_[j])) {
                    furthest = stack_[j];
                    break;
                }
            if (furthest == no_element) {
                while (current() != fe)
                    pop();
                pop();
                remove_formatting_at(static_cast<std::size_t>(formatting_index(fe)));
                return;
            }
            const std::uint32_t common_ancestor = stack_[static_cast<std::size_t>(fe_index) - 1];
            std::ptrdiff_t bookmark = formatting_index(fe) + 1;
            std::uint32_t node = furthest, last_node = furthest;
            std::ptrdiff_t saved_index = stack_index(node);
            for (int j = 0;;) {
                ++j;
                std::ptrdiff_t node_index = stack_index(node);
                if (node_index < 0)
                    node_index = saved_index;
                saved_index = --node_index;
                node = stack_[static_cast<std::size_t>(node_index)];
                if (node == fe)
                    break;
                const std::ptrdiff_t fi = formatting_index(node);
                if (j > 3 && fi >= 0) {
                    remove_formatting_at(static_cast<std::size_t>(fi));
                    if (fi < bookmark)
                        --bookmark;
                    continue;
                }
                if (fi < 0) {
                    stack_.erase(stack_.begin() + node_index);
                    closed(node);
                    continue;
                }
                const std::uint32_t clone = clone_of(node);
                release(formatting_[static_cast<std::size_t>(fi)]);
                formatting_[static_cast<std::size_t>(fi)] = clone;
                retain(clone);
                // The clone takes the node's place on the stack; the node itself is closed where it is.
                stack_[static_cast<std::size_t>(node_index)] = clone;
                el(clone).open = true;
                retain(clone);
                closed(node);
                node = clone;
                if (last_node == furthest)
                    bookmark = fi + 1;
                move_into(last_node, node);
                last_node = node;
            }
            // Step 14: the last node goes where a node for the common ancestor would.
            {
                const element& l = el(last_node);
                const std::uint32_t first = l.start, last = l.end;
                unlink(first, last);
                link_before(insertion_point(common_ancestor), first, last);
            }
            // Steps 15-17: a clone of the formatting element takes the furthest block's children.
            const std::uint32_t new_fe = clone_of(fe);
            {
                element& f = el(furthest);
                element& n = el(new_fe);
                if (items_[f.start].next != f.end) {
                    const std::uint32_t first = items_[f.start].next, last = items_[f.end].prev;
                    unlink(first, last);
                    link_before(n.end, first, last);
                }
                link_before(f.end, n.start, n.end);
            }
            // Step 18.
            const std::ptrdiff_t fe_formatting = formatting_index(fe);
            if (fe_formatting < bookmark)
                --bookmark;
            remove_formatting_at(static_cast<std::size_t>(fe_formatting));
            formatting_.insert(formatting_.begin() + bookmark, new_fe);
            retain(new_fe);
            // Step 19.
            remove_from_stack(fe);
            const std::ptrdiff_t fb_index = stack_index(furthest);
            stack_.insert(stack_.begin() + fb_index + 1, new_fe);
            el(new_fe).open = true;
            retain(new_fe);
        }
    }
    /// Moves `child` (with its content) to the end of `parent`'s content.
    void move_into(std::uint32_t child, std::uint32_t parent) {
        const std::uint32_t first = el(child).start, last = el(child).end;
        unlink(first, last);
        link_before(el(parent).end, first, last);
    }

    // -- Helpers of the rules --

    void generate_implied_end_tags(tag except = count_) {
        while (!stack_.empty() && is_html_in(current(), implied_end) &&
               !(except != count_ && current_is(except)))
            pop();
    }
    void generate_implied_end_tags_thoroughly() {
        while (!stack_.empty() && is_html_in(current(), implied_end_thoroughly))
            pop();
    }
    void close_element(tag t) {
        generate_implied_end_tags(t);
        pop_until_html(t);
    }
    void close_p_in_button_scope() {
        if (has_in_scope(p, scope_kind::button))
            close_element(p);
    }
    void clear_stack_to(const tag_set& context) {
        while (!is_html_in(current(), context))
            pop();
    }
    bool close_table() {
        if (!has_in_scope(table, scope_kind::table))
            return false;
        pop_until_html(table);
        reset_insertion_mode();
        return true;
    }
    void close_cell(tag cell) {
        generate_implied_end_tags();
        pop_until_html(cell);
        clear_formatting_to_marker();
        mode_ = mode::in_row;
    }
    void close_current_cell() { close_cell(has_in_scope(td, scope_kind::table) ? td : th); }
    void close_select() {
        pop_until_html(select);
        reset_insertion_mode();
    }

    void reset_insertion_mode() {
        for (std::size_t i = stack_.size(); i-- > 0;) {
            const element& e = el(stack_[i]);
            const bool last = i == 0;
            switch (e.name) { // gumbo looks at the tag whatever the namespace
            case select:
                if (last) {
                    mode_ = mode::in_select;
                    return;
                }
                for (std::size_t j = i; j > 0; --j) {
                    if (is_html(stack_[j], template_)) {
                        mode_ = mode::in_select;
                        return;
                    }
                    if (is_html(stack_[j], table)) {
                        mode_ = mode::in_select_in_table;
                        return;
                    }
                }
                mode_ = mode::in_select;
                return;
            case td:
            case th:
                if (!last) {
                    mode_ = mode::in_cell;
                    return;
                }
                break;
            case tr:
                mode_ = mode::in_row;
                return;
            case tbody:
            case thead:
            case tfoot:
                mode_ = mode::in_table_body;
                return;
            case caption:
                mode_ = mode::in_caption;
                return;
            case colgroup:
                mode_ = mode::in_column_group;
                return;
            case table:
                mode_ = mode::in_table;
                return;
            case template_:
                mode_ = template_modes_.empty() ? mode::initial : template_modes_.back();
                if (mode_ != mode::initial)
                    return;
                break;
            case head:
                if (!last) {
                    mode_ = mode::in_head;
                    return;
                }
                break;
            case body:
                mode_ = mode::in_body;
                return;
            case frameset:
                mode_ = mode::in_frameset;
                return;
            case html:
                mode_ = head_element_ != no_element ? mode::after_head : mode::before_head;
                return;
            default:
                break;
            }
            if (last) {
                mode_ = mode::in_body;
                return;
            }
        }
    }

    bool input_is_hidden(const token& t) {
        const attribute* type = t.find("type");
        if (type == nullptr)
            return false;
        const std::string_view value = decoded(*type);
        return value.size() == 6 && std::equal(value.begin(), value.end(), "hidden",
                                               [](char x, char y) { return ascii::to_lower(x) == y; });
    }

    // -- Dispatch --

    void process(const token& t) {
        if (stopped_)
            return;
        if (t.kind != token::type::characters)
            ignore_next_linefeed_ = false;
        maybe_compact();
        do {
            reprocess_ = false;
            dispatch(t);
        } while (reprocess_ && !stopped_);
    }

    void dispatch(const token& t) {
        if (stack_.empty()) {
            in_mode(t);
            return;
        }
        const element& node = el(current());
        const bool start = t.kind == token::type::start_tag;
        const bool chars = t.kind == token::type::characters && t.chars != char_class::cdata;
        if (node.ns == space::html ||
            (is_mathml_text_integration_point(node) &&
             (chars || (start && t.name != mglyph && t.name != malignmark))) ||
            (node.ns == space::mathml && node.name == annotation_xml && start && t.name == svg) ||
            (node.html_integration_point && (start || chars)) || t.kind == token::type::eof)
            in_mode(t);
        else
            foreign_content(t);
    }

    void in_mode(const token& t) {
        switch (mode_) {
        case mode::initial:
            return initial(t);
        case mode::before_html:
            return before_html(t);
        case mode::before_head:
            return before_head(t);
        case mode::in_head:
            return in_head(t);
        case mode::in_head_noscript:
            return in_head_noscript(t);
        case mode::after_head:
            return after_head(t);
        case mode::in_body:
            return in_body(t);
        case mode::text:
            return text(t);
        case mode::in_table:
            return in_table(t);
        case mode::in_table_text:
            return in_table_text(t);
        case mode::in_caption:
            return in_caption(t);
        case mode::in_column_group:
            return in_column_group(t);
        case mode::in_table_body:
            return in_table_body(t);
        case mode::in_row:
            return in_row(t);
        case mode::in_cell:
            return in_cell(t);
        case mode::in_select:
            return in_select(t);
        case mode::in_select_in_table:
            return in_select_in_table(t);
        case mode::in_template:
            return in_template(t);
        case mode::after_body:
            return after_body(t);
        case mode::in_frameset:
            return in_frameset(t);
        case mode::after_frameset:
            return after_frameset(t);
        case mode::after_after_body:
            return after_after_body(t);
        case mode::after_after_frameset:
            return after_after_frameset(t);
        }
    }

    void reprocess(mode m) {
        mode_ = m;
        reprocess_ = true;
    }

    // -- The insertion modes --

    void initial(const token& t) {
        if (t.is_whitespace() || t.kind == token::type::comment)
            return;
        if (t.kind == token::type::doctype) {
            quirks_ = t.quirks;
            mode_ = mode::before_html;
            return;
        }
        quirks_ = true;
        reprocess(mode::before_html);
    }

    void before_html(const token& t) {
        if (t.kind == token::type::doctype || t.kind == token::type::comment || t.is_whitespace())
            return;
        if (t.is_start(html)) {
            insert_html(t, false);
            mode_ = mode::before_head;
            return;
        }
        if (t.kind == token::type::end_tag &&
            !(t.name == head || t.name == body || t.name == html || t.name == br))
            return;
        insert_implied(html);
        reprocess(mode::before_head);
    }

    void before_head(const token& t) {
        if (t.kind == token::type::doctype || t.kind == token::type::comment || t.is_whitespace())
            return;
        if (t.is_start(head)) {
            set_head(insert_html(t, false));
            mode_ = mode::in_head;
            return;
        }
        if (t.kind == token::type::end_tag &&
            !(t.name == head || t.name == body || t.name == html || t.name == br))
            return;
        set_head(insert_implied(head));
        reprocess(mode::in_head);
    }
    void set_head(std::uint32_t id) {
        release(head_element_);
        head_element_ = id;
        retain(id);
    }

    void in_head(const token& t) {
        if (t.is_whitespace() || t.kind == token::type::doctype || t.kind == token::type::comment)
            return;
        if (t.is_start(html))
            return in_body(t);
        if (t.is_start_in(tag_set{base, basefont, bgsound, menuitem, link, meta}))
            return insert_void(t);
        if (t.is_start(title))
            return generic_raw_text(t, lexer_state::rcdata);
        if (t.is_start(noframes) || t.is_start(style))
            return generic_raw_text(t, lexer_state::rawtext);
        if (t.is_start(noscript)) {
            insert_html(t, false);
            mode_ = mode::in_head_noscript;
            return;
        }
        if (t.is_start(script))
            return generic_raw_text(t, lexer_state::script);
        if (t.is_end(head)) {
            pop();
            mode_ = mode::after_head;
            return;
        }
        if (t.is_end(body) || t.is_end(html) || t.is_end(br)) {
            pop();
            reprocess(mode::after_head);
            return;
        }
        if (t.is_start(template_)) {
            insert_html(t, false);
            add_marker();
            frameset_ok_ = false;
            mode_ = mode::in_template;
            template_modes_.push_back(mode::in_template);
            return;
        }
        if (t.is_end(template_)) {
            if (!has_open(template_))
                return;
            generate_implied_end_tags_thoroughly();
            pop_until_html(template_);
            clear_formatting_to_marker();
            if (!template_modes_.empty())
                template_modes_.pop_back();
            reset_insertion_mode();
            return;
        }
        if (t.is_start(head) || t.kind == token::type::end_tag)
            return;
        pop();
        reprocess(mode::after_head);
    }

    void in_head_noscript(const token& t) {
        if (t.kind == token::type::doctype)
            return;
        if (t.is_start(html))
            return in_body(t);
        if (t.is_end(noscript)) {
            pop();
            mode_ = mode::in_head;
            return;
        }
        if (t.is_whitespace() || t.kind == token::type::comment ||
            t.is_start_in(tag_set{basefont, bgsound, link, meta, noframes, style}))
            return in_head(t);
        if (t.is_start(head) || t.is_start(noscript) || (t.kind == token::type::end_tag && t.name != br))
            return;
        pop();
        reprocess(mode::in_head);
    }

    void after_head(const token& t) {
        if (t.is_whitespace() || t.kind == token::type::doctype || t.kind == token::type::comment)
            return;
        if (t.is_start(html))
            return in_body(t);
        if (t.is_start(body)) {
            insert_html(t, false);
            frameset_ok_ = false;
            mode_ = mode::in_body;
            return;
        }
        if (t.is_start(frameset)) {
            insert_html(t, false);
            mode_ = mode::in_frameset;
            return;
        }
        if (t.is_start_in(
                tag_set{base, basefont, bgsound, link, meta, noframes, script, style, template_, title})) {
            // The head is open again for this one element: it is the last child of <html> so far.
            const std::uint32_t h = head_element_;
            element& e = el(h);
            if (e.start == no_item) {
                make_markers(e);
                link_before(el(stack_.front()).end, e.start, e.end);
            }
            push(h);
            in_head(t);
            remove_from_stack(h);
            return;
        }
        if (t.is_end(template_))
            return in_head(t);
        if (t.is_start(head) ||
            (t.kind == token::type::end_tag && !(t.name == body || t.name == html || t.name == br)))
            return;
        insert_implied(body);
        reprocess(mode::in_body);
    }

    void in_body(const token& t) {
        switch (t.kind) {
        case token::type::characters:
            switch (t.chars) {
            case char_class::null:
                return;
            case char_class::whitespace:
                reconstruct();
                return;
            case char_class::other:
            case char_class::cdata:
                reconstruct();
                frameset_ok_ = false;
                return;
            }
            return;
        case token::type::comment:
        case token::type::doctype:
            return;
        case token::type::eof:
            if (!template_modes_.empty())
                return in_template(t);
            stopped_ = true;
            return;
        case token::type::start_tag:
            return in_body_start(t);
        case token::type::end_tag:
            return in_body_end(t);
        }
    }

    void in_body_start(const token& t) {
        switch (t.name) {
        case html:
            return; // its attributes go to the <html> element: nothing to do here
        case base:
        case basefont:
        case bgsound:
        case menuitem:
        case link:
        case meta:
        case noframes:
        case script:
        case style:
        case template_:
        case title:
            return in_head(t);
        case body:
            if (stack_.size() < 2 || !is_html(stack_[1], body) || has_open(template_))
                return;
            frameset_ok_ = false;
            return;
        case frameset:
            return in_body_frameset(t);
        case address:
        case article:
        case aside:
        case blockquote:
        case center:
        case details:
        case dir:
        case div:
        case dl:
        case fieldset:
        case figcaption:
        case figure:
        case footer:
        case header:
        case hgroup:
        case menu:
        case main:
        case nav:
        case ol:
        case p:
        case section:
        case summary:
        case ul:
            close_p_in_button_scope();
            insert_html(t);
            return;
        case h1:
        case h2:
        case h3:
        case h4:
        case h5:
        case h6:
            close_p_in_button_scope();
            if (is_html_in(current(), headings))
                pop();
            insert_html(t);
            return;
        case pre:
        case listing:
            close_p_in_button_scope();
            insert_html(t);
            ignore_next_linefeed_ = true;
            frameset_ok_ = false;
            return;
        case form: {
            const bool template_open = has_open(template_);
            if (form_element_ != no_element && !template_open)
                return;
            close_p_in_button_scope();
            const std::uint32_t id = insert_html(t);
            if (!template_open && id != no_element)
                set_form(id);
            return;
        }
        case li:
        case dd:
        case dt:
            close_list_item(t.name == li);
            close_p_in_button_scope();
            insert_html(t);
            return;
        case plaintext:
            close_p_in_button_scope();
            insert_html(t, false);
            next_lexer_state_ = lexer_state::plaintext;
            return;
        case button:
            if (has_in_scope(button)) {
                close_element(button);
                reprocess_ = true;
                return;
            }
            reconstruct();
            insert_html(t);
            frameset_ok_ = false;
            return;
        case a:
            if (const std::uint32_t previous = last_formatting_a(); previous != no_element) {
                adoption_agency(a);
                if (const std::uint32_t still = last_formatting_a(); still != no_element) {
                    remove_formatting_at(static_cast<std::size_t>(formatting_index(still)));
                    remove_from_stack(still);
                }
            }
            reconstruct();
            add_formatting(insert_html(t));
            return;
        case b:
        case big:
        case code:
        case em:
        case font:
        case i:
        case s:
        case small:
        case strike:
        case strong:
        case tt:
        case u:
            reconstruct();
            add_formatting(insert_html(t));
            return;
        case nobr:
            reconstruct();
            if (has_in_scope(nobr)) {
                adoption_agency(nobr);
                reconstruct();
            }
            add_formatting(insert_html(t));
            return;
        case applet:
        case marquee:
        case object:
            reconstruct();
            if (insert_html(t) != no_element)
                add_marker();
            frameset_ok_ = false;
            return;
        case table:
            if (!quirks_)
                close_p_in_button_scope();
            insert_html(t, false);
            frameset_ok_ = false;
            mode_ = mode::in_table;
            return;
        case area:
        case br:
        case embed:
        case img:
        case image:
        case keygen:
        case wbr: {
            reconstruct();
            if (t.name == image) {
                token copy = t;
                copy.name = img;
                insert_void(copy);
            } else {
                insert_void(t);
            }
            frameset_ok_ = false;
            return;
        }
        case input:
            if (!input_is_hidden(t))
                frameset_ok_ = false;
            reconstruct();
            insert_void(t);
            return;
        case param:
        case source:
        case track:
            insert_void(t);
            return;
        case hr:
            close_p_in_button_scope();
            insert_void(t);
            frameset_ok_ = false;
            return;
        case isindex:
            // A form, a rule, a label, an input, a rule: nothing that links, and nothing left open.
            if (form_element_ != no_element && !has_open(template_))
                return;
            close_p_in_button_scope();
            frameset_ok_ = false;
            return;
        case textarea:
            generic_raw_text(t, lexer_state::rcdata);
            ignore_next_linefeed_ = true;
            frameset_ok_ = false;
            return;
        case xmp:
            close_p_in_button_scope();
            reconstruct();
            frameset_ok_ = false;
            generic_raw_text(t, lexer_state::rawtext);
            return;
        case iframe:
            frameset_ok_ = false;
            generic_raw_text(t, lexer_state::rawtext);
            return;
        case noembed:
            generic_raw_text(t, lexer_state::rawtext);
            return;
        case select: {
            reconstruct();
            const mode before = mode_;
            insert_html(t, false);
            frameset_ok_ = false;
            mode_ = (before == mode::in_table || before == mode::in_caption ||
                     before == mode::in_table_body || before == mode::in_row || before == mode::in_cell)
                        ? mode::in_select_in_table
                        : mode::in_select;
            return;
        }
        case option:
        case optgroup:
            if (current_is(option))
                pop();
            reconstruct();
            insert_html(t);
            return;
        case rb:
        case rp:
        case rt:
        case rtc:
            if (has_in_scope(ruby))
                generate_implied_end_tags((t.name == rt || t.name == rp) ? rtc : count_);
            insert_html(t);
            return;
        case math:
        case svg: {
            reconstruct();
            const std::uint32_t id = insert_element(t, t.name == math ? space::mathml : space::svg, true);
            if (t.self_closing && id != no_element)
                pop();
            return;
        }
        case caption:
        case col:
        case colgroup:
        case frame:
        case head:
        case tbody:
        case td:
        case tfoot:
        case th:
        case thead:
        case tr:
            return;
        default:
            reconstruct();
            insert_html(t);
            return;
        }
    }

    void in_body_frameset(const token& t) {
        if (stack_.size() < 2 || !is_html(stack_[1], body) || !frameset_ok_)
            return;
        // The body goes, with everything in it.
        element& b = el(stack_[1]);
        std::uint32_t i = b.start;
        const std::uint32_t stop = items_[b.end].next;
        while (i != stop) {
            const std::uint32_t next = items_[i].next;
            unlink_free(i);
            i = next;
        }
        for (std::size_t k = 1; k < stack_.size(); ++k)
            el(stack_[k]).start = el(stack_[k]).end = no_item;
        while (stack_.size() > 1)
            pop();
        clear_formatting_to_marker();
        insert_html(t, false);
        mode_ = mode::in_frameset;
    }

    void close_list_item(bool is_li) {
        frameset_ok_ = false;
        for (std::size_t i = stack_.size(); i-- > 0;) {
            const std::uint32_t id = stack_[i];
            const element& e = el(id);
            if (e.ns == space::html && (is_li ? e.name == li : (e.name == dd || e.name == dt))) {
                close_element(e.name);
                return;
            }
            if (is_special(id) && !is_html_in(id, tag_set{address, div, p}))
                return;
        }
    }

    void set_form(std::uint32_t id) {
        release(form_element_);
        form_element_ = id;
        if (id != no_element)
            retain(id);
    }

    void in_body_end(const token& t) {
        switch (t.name) {
        case template_:
            return in_head(t);
        case body:
        case html:
            if (!has_in_scope(body))
                return;
            mode_ = mode::after_body;
            if (t.name == html)
                reprocess_ = true;
            return;
        case address:
        case article:
        case aside:
        case blockquote:
        case button:
        case center:
        case details:
        case dir:
        case div:
        case dl:
        case fieldset:
        case figcaption:
        case figure:
        case footer:
        case header:
        case hgroup:
        case listing:
        case main:
        case menu:
        case nav:
        case ol:
        case pre:
        case section:
        case summary:
        case ul:
            if (has_in_scope(t.name))
                close_element(t.name);
            return;
        case form:
            if (has_open(template_)) {
                if (!has_in_scope(form))
                    return;
                generate_implied_end_tags();
                if (!current_is(form))
                    return;
                pop_until_html(form);
            } else {
                const std::uint32_t node = form_element_;
                form_element_ = no_element;
                if (node == no_element) {
                    return;
                }
                const bool in_scope = has_node_in_scope(node);
                if (!in_scope) {
                    release(node);
                    return;
                }
                generate_implied_end_tags();
                remove_from_stack(node);
                release(node);
            }
            return;
        case p:
            if (!has_in_scope(p, scope_kind::button)) {
                insert_implied(p);
                reprocess_ = true;
                return;
            }
            close_element(p);
            return;
        case li:
            if (has_in_scope(li, scope_kind::list_item))
                close_element(li);
            return;
        case dd:
        case dt:
            if (has_in_scope(t.name))
                close_element(t.name);
            return;
        case h1:
        case h2:
        case h3:
        case h4:
        case h5:
        case h6:
            if (!has_in_scope(headings, scope_kind::normal))
                return;
            generate_implied_end_tags();
            while (!stack_.empty()) {
                const bool heading = is_html_in(current(), headings);
                pop();
                if (heading)
                    return;
            }
            return;
        case a:
        case b:
        case big:
        case code:
        case em:
        case font:
        case i:
        case nobr:
        case s:
        case small:
        case strike:
        case strong:
        case tt:
        case u:
            adoption_agency(t.name);
            return;
        case applet:
        case marquee:
        case object:
            if (!has_in_scope(t.name, scope_kind::table))
                return;
            close_element(t.name);
            clear_formatting_to_marker();
            return;
        case br: {
            reconstruct();
            token implied;
            implied.kind = token::type::start_tag;
            implied.name = br;
            insert_void(implied);
            return;
        }
        default:
            for (std::size_t i = stack_.size(); i-- > 0;) {
                const std::uint32_t node = stack_[i];
                if (is_html(node, t.name)) {
                    generate_implied_end_tags(t.name);
                    pop_until(node);
                    return;
                }
                if (is_special(node))
                    return;
            }
            return;
        }
    }

    void text(const token& t) {
        if (t.kind == token::type::characters)
            return;
        if (t.kind == token::type::eof)
            reprocess_ = true;
        const element& current_node = el(current());
        if (options_.requisites && current_node.ns == space::html && current_node.name == style &&
            !raw_text_.empty()) {
            std::string css;
            append_input_text(css, raw_text_);
            emit_css(css, current_node.end);
        }
        raw_text_ = {};
        pop();
        mode_ = original_mode_;
    }

    void in_table(const token& t) {
        switch (t.kind) {
        case token::type::characters:
            if (t.chars == char_class::whitespace || t.chars == char_class::other) {
                original_mode_ = mode_;
                pending_table_text_ = false;
                reprocess(mode::in_table_text);
                return;
            }
            break;
        case token::type::doctype:
        case token::type::comment:
            return;
        case token::type::eof:
            return in_body(t);
        case token::type::start_tag:
            switch (t.name) {
            case caption:
                clear_stack_to(tag_set{html, table, template_});
                add_marker();
                insert_html(t, false);
                mode_ = mode::in_caption;
                return;
            case colgroup:
                clear_stack_to(tag_set{html, table, template_});
                insert_html(t, false);
                mode_ = mode::in_column_group;
                return;
            case col:
                clear_stack_to(tag_set{html, table, template_});
                insert_implied(colgroup);
                reprocess(mode::in_column_group);
                return;
            case tbody:
            case tfoot:
            case thead:
            case td:
            case th:
            case tr:
                clear_stack_to(tag_set{html, table, template_});
                mode_ = mode::in_table_body;
                if (t.name == td || t.name == th || t.name == tr) {
                    insert_implied(tbody);
                    reprocess_ = true;
                } else {
                    insert_html(t, false);
                }
                return;
            case table:
                if (close_table())
                    reprocess_ = true;
                return;
            case style:
            case script:
            case template_:
                return in_head(t);
            case input:
                if (input_is_hidden(t)) {
                    insert_void(t);
                    return;
                }
                break;
            case form:
                if (form_element_ != no_element || has_open(template_))
                    return;
                {
                    const std::uint32_t id = insert_html(t, false);
                    set_form(id);
                    pop();
                }
                return;
            default:
                break;
            }
            break;
        case token::type::end_tag:
            switch (t.name) {
            case table:
                close_table();
                return;
            case body:
            case caption:
            case col:
            case colgroup:
            case html:
            case tbody:
            case td:
            case tfoot:
            case th:
            case thead:
            case tr:
                return;
            case template_:
                return in_head(t);
            default:
                break;
            }
            break;
        }
        foster_ = true;
        in_body(t);
        foster_ = false;
    }

    void in_table_text(const token& t) {
        if (t.kind == token::type::characters) {
            if (t.chars == char_class::other)
                pending_table_text_ = true;
            return; // NULs are dropped; whitespace waits
        }
        if (pending_table_text_) {
            foster_ = true;
            reconstruct();
            foster_ = false;
        }
        pending_table_text_ = false;
        reprocess(original_mode_);
    }

    void in_caption(const token& t) {
        if (t.is_end(caption)) {
            if (!has_in_scope(caption, scope_kind::table))
                return;
            generate_implied_end_tags();
            pop_until_html(caption);
            clear_formatting_to_marker();
            mode_ = mode::in_table;
            return;
        }
        if (t.is_start_in(tag_set{caption, col, colgroup, tbody, td, tfoot, th, thead, tr}) ||
            t.is_end(table)) {
            if (!has_in_scope(caption, scope_kind::table))
                return;
            pop_until_html(caption);
            clear_formatting_to_marker();
            reprocess(mode::in_table);
            return;
        }
        if (t.is_end_in(tag_set{body, col, colgroup, html, tbody, td, tfoot, th, thead, tr}))
            return;
        in_body(t);
    }

    void in_column_group(const token& t) {
        if (t.is_whitespace() || t.kind == token::type::doctype || t.kind == token::type::comment)
            return;
        if (t.is_start(html))
            return in_body(t);
        if (t.is_start(col))
            return insert_void(t);
        if (t.is_end(colgroup)) {
            if (!current_is(colgroup))
                return;
            pop();
            mode_ = mode::in_table;
            return;
        }
        if (t.is_end(col))
            return;
        if (t.is_start(template_) || t.is_end(template_))
            return in_head(t);
        if (t.kind == token::type::eof)
            return in_body(t);
        if (!current_is(colgroup))
            return;
        pop();
        reprocess(mode::in_table);
    }

    void in_table_body(const token& t) {
        if (t.is_start(tr)) {
            clear_stack_to(tag_set{html, tbody, tfoot, thead, template_});
            insert_html(t, false);
            mode_ = mode::in_row;
            return;
        }
        if (t.is_start(td) || t.is_start(th)) {
            clear_stack_to(tag_set{html, tbody, tfoot, thead, template_});
            insert_implied(tr);
            reprocess(mode::in_row);
            return;
        }
        if (t.is_end_in(table_section)) {
            if (!has_in_scope(t.name, scope_kind::table))
                return;
            clear_stack_to(tag_set{html, tbody, tfoot, thead, template_});
            pop();
            mode_ = mode::in_table;
            return;
        }
        if (t.is_start_in(tag_set{caption, col, colgroup, tbody, tfoot, thead}) || t.is_end(table)) {
            if (!has_in_scope(table_section, scope_kind::table))
                return;
            clear_stack_to(tag_set{html, tbody, tfoot, thead, template_});
            pop();
            reprocess(mode::in_table);
            return;
        }
        if (t.is_end_in(tag_set{body, caption, col, tr, colgroup, html, td, th}))
            return;
        in_table(t);
    }

    void in_row(const token& t) {
        if (t.is_start(th) || t.is_start(td)) {
            clear_stack_to(tag_set{html, tr, template_});
            insert_html(t, false);
            mode_ = mode::in_cell;
            add_marker();
            return;
        }
        if (t.is_end(tr)) {
            if (!has_in_scope(tr, scope_kind::table))
                return;
            clear_stack_to(tag_set{html, tr, template_});
            pop();
            mode_ = mode::in_table_body;
            return;
        }
        if (t.is_start_in(tag_set{caption, col, colgroup, tbody, tfoot, thead, tr}) || t.is_end(table)) {
            if (!has_in_scope(tr, scope_kind::table))
                return;
            clear_stack_to(tag_set{html, tr, template_});
            pop();
            reprocess(mode::in_table_body);
            return;
        }
        if (t.is_end_in(table_section)) {
            if (!has_in_scope(t.name, scope_kind::table) || !has_in_scope(tr, scope_kind::table))
                return;
            clear_stack_to(tag_set{html, tr, template_});
            pop();
            reprocess(mode::in_table_body);
            return;
        }
        if (t.is_end_in(tag_set{body, caption, col, colgroup, html, td, th}))
            return;
        in_table(t);
    }

    void in_cell(const token& t) {
        if (t.is_end(td) || t.is_end(th)) {
            if (!has_in_scope(t.name, scope_kind::table))
                return;
            close_cell(t.name);
            return;
        }
        if (t.is_start_in(tag_set{caption, col, colgroup, tbody, td, tfoot, th, thead, tr})) {
            if (!has_in_scope(th, scope_kind::table) && !has_in_scope(td, scope_kind::table))
                return;
            reprocess_ = true;
            close_current_cell();
            return;
        }
        if (t.is_end_in(tag_set{body, caption, col, colgroup, html}))
            return;
        if (t.is_end_in(tag_set{table, tbody, tfoot, thead, tr})) {
            if (!has_in_scope(t.name, scope_kind::table))
                return;
            reprocess_ = true;
            close_current_cell();
            return;
        }
        in_body(t);
    }

    void in_select(const token& t) {
        switch (t.kind) {
        case token::type::characters:
        case token::type::doctype:
        case token::type::comment:
            return;
        case token::type::eof:
            return in_body(t);
        case token::type::start_tag:
            switch (t.name) {
            case html:
                return in_body(t);
            case option:
                if (current_is(option))
                    pop();
                insert_html(t);
                return;
            case optgroup:
                if (current_is(option))
                    pop();
                if (current_is(optgroup))
                    pop();
                insert_html(t);
                return;
            case select:
                if (has_in_scope(select, scope_kind::select))
                    close_select();
                return;
            case input:
            case keygen:
            case textarea:
                if (!has_in_scope(select, scope_kind::select))
                    return;
                close_select();
                reprocess_ = true;
                return;
            case script:
            case template_:
                return in_head(t);
            default:
                return;
            }
        case token::type::end_tag:
            switch (t.name) {
            case optgroup:
                if (current_is(option) && stack_.size() >= 2 && is_html(stack_[stack_.size() - 2], optgroup))
                    pop();
                if (current_is(optgroup))
                    pop();
                return;
            case option:
                if (current_is(option))
                    pop();
                return;
            case select:
                if (has_in_scope(select, scope_kind::select))
                    close_select();
                return;
            case template_:
                return in_head(t);
            default:
                return;
            }
        }
    }

    void in_select_in_table(const token& t) {
        constexpr tag_set table_parts{caption, table, tbody, tfoot, thead, tr, td, th};
        if (t.is_start_in(table_parts)) {
            close_select();
            reprocess_ = true;
            return;
        }
        if (t.is_end_in(table_parts)) {
            if (!has_in_scope(t.name, scope_kind::table))
                return;
            close_select();
            reprocess_ = true;
            return;
        }
        in_select(t);
    }

    void in_template(const token& t) {
        switch (t.kind) {
        case token::type::characters:
        case token::type::comment:
        case token::type::doctype:
            return in_body(t);
        case token::type::start_tag:
            switch (t.name) {
            case base:
            case basefont:
            case bgsound:
            case link:
            case meta:
            case noframes:
            case script:
            case style:
            case template_:
            case title:
                return in_head(t);
            case caption:
            case colgroup:
            case tbody:
            case tfoot:
            case thead:
                return switch_template_mode(mode::in_table);
            case col:
                return switch_template_mode(mode::in_column_group);
            case tr:
                return switch_template_mode(mode::in_table_body);
            case td:
            case th:
                return switch_template_mode(mode::in_row);
            default:
                return switch_template_mode(mode::in_body);
            }
        case token::type::end_tag:
            if (t.name == template_)
                return in_head(t);
            return;
        case token::type::eof:
            if (!has_open(template_)) {
                stopped_ = true;
                return;
            }
            pop_until_html(template_);
            clear_formatting_to_marker();
            if (!template_modes_.empty())
                template_modes_.pop_back();
            reset_insertion_mode();
            reprocess_ = true;
            return;
        }
    }
    void switch_template_mode(mode m) {
        if (!template_modes_.empty())
            template_modes_.pop_back();
        template_modes_.push_back(m);
        reprocess(m);
    }

    void after_body(const token& t) {
        if (t.is_whitespace() || t.is_start(html))
            return in_body(t);
        if (t.kind == token::type::comment || t.kind == token::type::doctype)
            return;
        if (t.is_end(html)) {
            mode_ = mode::after_after_body;
            return;
        }
        if (t.kind == token::type::eof) {
            stopped_ = true;
            return;
        }
        reprocess(mode::in_body);
    }

    void in_frameset(const token& t) {
        if (t.is_start(html))
            return in_body(t);
        if (t.is_start(frameset)) {
            insert_html(t, false);
            return;
        }
        if (t.is_end(frameset)) {
            if (current_is(html))
                return;
            pop();
            if (!current_is(frameset))
                mode_ = mode::after_frameset;
            return;
        }
        if (t.is_start(frame))
            return insert_void(t);
        if (t.is_start(noframes))
            return in_head(t);
        if (t.kind == token::type::eof)
            stopped_ = true;
    }

    void after_frameset(const token& t) {
        if (t.is_start(html))
            return in_body(t);
        if (t.is_end(html)) {
            mode_ = mode::after_after_frameset;
            return;
        }
        if (t.is_start(noframes))
            return in_head(t);
        if (t.kind == token::type::eof)
            stopped_ = true;
    }

    void after_after_body(const token& t) {
        if (t.kind == token::type::comment)
            return;
        if (t.kind == token::type::doctype || t.is_whitespace() || t.is_start(html))
            return in_body(t);
        if (t.kind == token::type::eof) {
            stopped_ = true;
            return;
        }
        reprocess(mode::in_body);
    }

    void after_after_frameset(const token& t) {
        if (t.kind == token::type::comment)
            return;
        if (t.kind == token::type::doctype || t.is_whitespace() || t.is_start(html))
            return in_body(t);
        if (t.kind == token::type::eof) {
            stopped_ = true;
            return;
        }
        if (t.is_start(noframes))
            return in_head(t);
    }

    void foreign_content(const token& t) {
        // gumbo's pending table text is its text buffer, which foreign content fills too and which inserting
        // a node, popping one or appending a comment flushes in place, unfostered: the table text then found
        // at the end of "in table text" is only what came after.
        const bool table_text = mode_ == mode::in_table_text;
        switch (t.kind) {
        case token::type::characters:
            if (t.chars != char_class::whitespace && table_text)
                pending_table_text_ = true;
            if (t.chars == char_class::other || t.chars == char_class::cdata)
                frameset_ok_ = false;
            return;
        case token::type::comment:
            if (table_text)
                pending_table_text_ = false;
            return;
        case token::type::doctype:
            return;
        case token::type::start_tag:
            if (table_text)
                pending_table_text_ = false;
            if (breakout.contains(t.name) ||
                (t.name == font &&
                 (t.find("color") != nullptr || t.find("face") != nullptr || t.find("size") != nullptr))) {
                do {
                    pop();
                } while (!stack_.empty() &&
                         !(is_mathml_text_integration_point(el(current())) ||
                           el(current()).html_integration_point || el(current()).ns == space::html));
                reprocess_ = true;
                return;
            }
            {
                const std::uint32_t id = insert_element(t, el(current()).ns, true);
                if (t.self_closing && id != no_element)
                    pop();
            }
            return;
        case token::type::end_tag: {
            const auto same_name = [](std::string_view x, std::string_view y) {
                return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](char c, char d) {
                           return ascii::to_lower(c) == ascii::to_lower(d);
                       });
            };
            std::size_t i = stack_.size() - 1;
            std::uint32_t node = stack_[i];
            while (i > 0) {
                if (same_name(el(node).raw_name, t.raw_name)) {
                    if (table_text)
                        pending_table_text_ = false;
                    pop_until(node);
                    return;
                }
                --i;
                node = stack_[i];
                if (el(node).ns == space::html)
                    break;
            }
            in_mode(t);
            return;
        }
        case token::type::eof:
            return;
        }
    }

    const extractor_options& options_;
    extraction& out_;

    std::vector<list_item> items_;
    std::uint32_t free_items_ = no_item;
    std::vector<extraction::entry> entries_;
    std::size_t stored_links_ = 0;
    std::size_t stored_requisites_ = 0;
    std::size_t stored_bases_ = 0;

    std::vector<element> elements_;
    std::vector<std::uint32_t> free_elements_;
    std::vector<std::uint32_t> stack_;
    std::vector<std::uint32_t> formatting_; // no_element is a marker
    std::vector<mode> template_modes_;
    std::uint32_t head_element_ = no_element;
    std::uint32_t form_element_ = no_element;
    std::size_t templates_open_ = 0;

    mode mode_ = mode::initial;
    mode original_mode_ = mode::initial;
    lexer_state next_lexer_state_ = lexer_state::data;
    tag raw_text_tag_ = unknown;
    std::string_view raw_text_;
    bool frameset_ok_ = true;
    bool foster_ = false;
    bool quirks_ = false;
    bool ignore_next_linefeed_ = false;
    bool pending_table_text_ = false;
    bool reprocess_ = false;
    bool stopped_ = false;

    std::string scratch_;
};

// ---- Tokenization ---------------------------------------------------------------------------------------

bool ascii_iequals(std::string_view text, std::string_view lowercase) noexcept {
    return text.size() == lowercase.size() &&
           std::equal(text.begin(), text.end(), lowercase.begin(),
                      [](char c, char d) { return ascii::to_lower(c) == d; });
}

bool starts_with_icase(const char* p, const char* end, std::string_view lowercase) noexcept {
    return static_cast<std::size_t>(end - p) >= lowercase.size() &&
           ascii_iequals({p, lowercase.size()}, lowercase);
}

// Quirks mode from a doctype, as gumbo 0.10.1 decides it (its "prefix" lists compare whole identifiers).
bool doctype_quirks(std::string_view name, std::string_view public_id, std::string_view system_id,
                    bool has_system, bool force_quirks) {
    static constexpr std::string_view public_whole[] = {
        "+//Silmaril//dtd html Pro v0r11 19970101//",
        "-//AdvaSoft Ltd//DTD HTML 3.0 asWedit + extensions//",
        "-//AS//DTD HTML 3.0 asWedit + extensions//",
        "-//IETF//DTD HTML 2.0 Level 1//",
        "-//IETF//DTD HTML 2.0 Level 2//",
        "-//IETF//DTD HTML 2.0 Strict Level 1//",
        "-//IETF//DTD HTML 2.0 Strict Level 2//",
        "-//IETF//DTD HTML 2.0 Strict//",
        "-//IETF//DTD HTML 2.0//",
        "-//IETF//DTD HTML 2.1E//",
        "-//IETF//DTD HTML 3.0//",
        "-//IETF//DTD HTML 3.2 Final//",
        "-//IETF//DTD HTML 3.2//",
        "-//IETF//DTD HTML 3//",
        "-//IETF//DTD HTML Level 0//",
        "-//IETF//DTD HTML Level 1//",
        "-//IETF//DTD HTML Level 2//",
        "-//IETF//DTD HTML Level 3//",
        "-//IETF//DTD HTML Strict Level 0//",
        "-//IETF//DTD HTML Strict Level 1//",
        "-//IETF//DTD HTML Strict Level 2//",
        "-//IETF//DTD HTML Strict Level 3//",
        "-//IETF//DTD HTML Strict//",
        "-//IETF//DTD HTML//",
        "-//Metrius//DTD Metrius Presentational//",
        "-//Microsoft//DTD Internet Explorer 2.0 HTML Strict//",
        "-//Microsoft//DTD Internet Explorer 2.0 HTML//",
        "-//Microsoft//DTD Internet Explorer 2.0 Tables//",
        "-//Microsoft//DTD Internet Explorer 3.0 HTML Strict//",
        "-//Microsoft//DTD Internet Explorer 3.0 HTML//",
        "-//Microsoft//DTD Internet Explorer 3.0 Tables//",
        "-//Netscape Comm. Corp.//DTD HTML//",
        "-//Netscape Comm. Corp.//DTD Strict HTML//",
        "-//O'Reilly and Associates//DTD HTML 2.0//",
        "-//O'Reilly and Associates//DTD HTML Extended 1.0//",
        "-//O'Reilly and Associates//DTD HTML Extended Relaxed 1.0//",
        "-//SoftQuad Software//DTD HoTMetaL PRO 6.0::19990601::)extensions to HTML 4.0//",
        "-//SoftQuad//DTD HoTMetaL PRO 4.0::19971010::extensions to HTML 4.0//",
        "-//Spyglass//DTD HTML 2.0 Extended//",
        "-//SQ//DTD HTML 2.0 HoTMetaL + extensions//",
        "-//Sun Microsystems Corp.//DTD HotJava HTML//",
        "-//Sun Microsystems Corp.//DTD HotJava Strict HTML//",
        "-//W3C//DTD HTML 3 1995-03-24//",
        "-//W3C//DTD HTML 3.2 Draft//",
        "-//W3C//DTD HTML 3.2 Final//",
        "-//W3C//DTD HTML 3.2//",
        "-//W3C//DTD HTML 3.2S Draft//",
        "-//W3C//DTD HTML 4.0 Frameset//",
        "-//W3C//DTD HTML 4.0 Transitional//",
        "-//W3C//DTD HTML Experimental 19960712//",
        "-//W3C//DTD HTML Experimental 970421//",
        "-//W3C//DTD W3 HTML//",
        "-//W3O//DTD W3 HTML 3.0//",
        "-//WebTechs//DTD Mozilla HTML 2.0//",
        "-//WebTechs//DTD Mozilla HTML//",
    };
    static constexpr std::string_view public_exact[] = {"-//W3O//DTD W3 HTML Strict 3.0//EN//",
                                                        "-/W3C/DTD HTML 4.0 Transitional/EN", "HTML"};
    static constexpr std::string_view system_exact[] = {
        "http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd"};
    static constexpr std::string_view public_needing_system[] = {"-//W3C//DTD HTML 4.01 Frameset//",
                                                                 "-//W3C//DTD HTML 4.01 Transitional//"};
    const auto icase = [](std::string_view x, std::string_view y) {
        return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](char c, char d) {
                   return ascii::to_lower(c) == ascii::to_lower(d);
               });
    };
    if (force_quirks || name != "html")
        return true;
    for (const auto id : public_whole)
        if (icase(public_id, id))
            return true;
    for (const auto id : public_exact)
        if (public_id == id)
            return true;
    for (const auto id : system_exact)
        if (system_id == id)
            return true;
    if (!has_system)
        for (const auto id : public_needing_system)
            if (icase(public_id, id))
                return true;
    return false;
}

class tokenizer {
public:
    tokenizer(std::string_view html, tree_builder& builder)
        : p_(html.data())
        , end_(html.data() + html.size())
        , builder_(builder) {}

    void run() {
        while (p_ < end_ && !builder_.stopped()) {
            switch (state_) {
            case lexer_state::data:
                data();
                break;
            case lexer_state::rcdata:
                raw_text(true);
                break;
            case lexer_state::rawtext:
                raw_text(false);
                break;
            case lexer_state::script:
                script_data();
                break;
            case lexer_state::plaintext:
                text_run(p_, end_, false);
                p_ = end_;
                break;
            }
        }
        if (state_ != lexer_state::data && state_ != lexer_state::plaintext)
            builder_.raw_text({raw_text_start_, static_cast<std::size_t>(end_ - raw_text_start_)});
        builder_.end_of_input();
    }

private:
    // -- Text --

    /// Where a numeric character reference in text stands for -1, which gumbo reads as the end of the input.
    const char* text_end_of_input(const char* from, const char* to) noexcept {
        for (const char* amp = from;
             amp < to && (amp = static_cast<const char*>(
                              std::memchr(amp, '&', static_cast<std::size_t>(to - amp)))) != nullptr;) {
            if (amp + 1 < to && amp[1] == '#') {
                const char_ref ref = consume_char_ref(amp, end_, ' ', false);
                if (ref.length != 0 && ref.first == -1)
                    return amp;
            }
            ++amp;
        }
        return nullptr;
    }

    /// Text of the data or plaintext states from `from` to `to`, handed to tree construction in runs of one
    /// kind. With `references`, character references count as what they stand for. Returns false when a
    /// reference ends the input.
    bool text_run(const char* from, const char* to, bool references) {
        if (from >= to)
            return true;
        gap_ = nullptr;
        if (builder_.text_is_noop()) {
            if (references)
                if (const char* stop = text_end_of_input(from, to)) {
                    end_ = stop;
                    p_ = stop;
                    return false;
                }
            builder_.take_ignore_linefeed();
            return true;
        }
        const char* q = from;
        if (builder_.take_ignore_linefeed()) {
            if (*q == '\n')
                ++q;
            else if (*q == '\r')
                q += (q + 1 < to && q[1] == '\n') ? 2 : 1;
            else if (references && *q == '&') {
                const char_ref ref = consume_char_ref(q, end_, ' ', false);
                if (ref.length != 0 && ref.first == '\n' && ref.second < 0)
                    q += ref.length;
            }
        }
        char_class run = char_class::whitespace;
        std::size_t count = 0;
        const auto add = [&](char_class c) {
            if (count != 0 && c != run) {
                builder_.characters(run, count);
                count = 0;
            }
            run = c;
            ++count;
        };
        while (q < to) {
            if (run == char_class::other && count >= 2) {
                // Two characters of a kind do all that a run of them does; after them nothing of this text
                // may matter, but for a reference that ends the input.
                builder_.characters(run, count);
                count = 0;
                if (builder_.text_is_noop()) {
                    if (references)
                        if (const char* stop = text_end_of_input(q, to)) {
                            end_ = stop;
                            p_ = stop;
                            return false;
                        }
                    return true;
                }
            }
            const char c = *q;
            if (ascii::is_html_whitespace(c)) {
                add(char_class::whitespace);
                ++q;
            } else if (c == '\0') {
                add(references ? char_class::null : char_class::other);
                ++q;
            } else if (c == '&' && references) {
                const char_ref ref = consume_char_ref(q, end_, ' ', false);
                if (ref.length == 0) {
                    add(char_class::other);
                    ++q;
                    continue;
                }
                if (ref.first == -1) {
                    if (count != 0)
                        builder_.characters(run, count);
                    end_ = q;
                    p_ = q;
                    return false;
                }
                const std::int32_t cp = ref.first;
                add(cp == '\t' || cp == '\n' || cp == '\f' || cp == '\r' || cp == ' ' ? char_class::whitespace
                                                                                      : char_class::other);
                if (ref.second >= 0)
                    add(char_class::other);
                q += ref.length;
            } else {
                add(char_class::other);
                ++q;
            }
        }
        if (count != 0)
            builder_.characters(run, count);
        return true;
    }

    void emit_text_char(char_class c) {
        gap_ = nullptr;
        if (builder_.text_is_noop()) {
            builder_.take_ignore_linefeed();
            return;
        }
        builder_.take_ignore_linefeed();
        builder_.characters(c, 1);
    }

    // -- The data state --

    void data() {
        const char* lt = static_cast<const char*>(std::memchr(p_, '<', static_cast<std::size_t>(end_ - p_)));
        const char* stop = lt != nullptr ? lt : end_;
        if (!text_run(p_, stop, true))
            return;
        if (lt == nullptr) {
            p_ = end_;
            return;
        }
        p_ = lt;
        markup();
    }

    /// At a '<' in the data state.
    void markup() {
        const char* q = p_ + 1;
        if (q >= end_) {
            emit_text_char(char_class::other);
            p_ = end_;
            return;
        }
        const char c = *q;
        if (c == '!') {
            markup_declaration(q + 1);
        } else if (c == '/') {
            end_tag_open(q + 1);
        } else if (c == '?') {
            bogus_comment(q);
        } else if (ascii::is_alpha(c)) {
            start_tag(q);
        } else {
            emit_text_char(char_class::other); // the '<'; what follows is read again as text
            p_ = q;
        }
    }

    void markup_declaration(const char* q) {
        if (end_ - q >= 2 && q[0] == '-' && q[1] == '-') {
            comment(q + 2);
        } else if (starts_with_icase(q, end_, "doctype")) {
            doctype(q + 7);
        } else if (builder_.current_node_is_foreign() && end_ - q >= 7 && std::memcmp(q, "[CDATA[", 7) == 0) {
            cdata(q + 7);
        } else {
            bogus_comment(q);
        }
    }

    void comment(const char* s) {
        gap_ = nullptr;
        for (const char* g = s; g < end_; ++g) {
            g = static_cast<const char*>(std::memchr(g, '>', static_cast<std::size_t>(end_ - g)));
            if (g == nullptr)
                break;
            if (g == s || (g == s + 1 && s[0] == '-') || (g >= s + 2 && g[-1] == '-' && g[-2] == '-') ||
                (g >= s + 3 && g[-1] == '!' && g[-2] == '-' && g[-3] == '-')) {
                builder_.comment();
                p_ = g + 1;
                return;
            }
        }
        builder_.comment();
        p_ = end_;
    }

    void bogus_comment(const char* s) {
        gap_ = nullptr;
        const char* g = static_cast<const char*>(std::memchr(s, '>', static_cast<std::size_t>(end_ - s)));
        builder_.comment();
        p_ = g != nullptr ? g + 1 : end_;
    }

    void cdata(const char* s) {
        gap_ = nullptr;
        const char* e = s;
        const char* found = nullptr;
        while (e + 2 < end_) {
            e = static_cast<const char*>(std::memchr(e, ']', static_cast<std::size_t>(end_ - e)));
            if (e == nullptr || e + 2 >= end_)
                break;
            if (e[1] == ']' && e[2] == '>') {
                found = e;
                break;
            }
            ++e;
        }
        const char* stop = found != nullptr ? found : end_;
        bool non_null = false;
        for (const char* c = s; c < stop && !non_null; ++c)
            non_null = *c != '\0';
        bool null_char = false;
        for (const char* c = s; c < stop && !null_char; ++c)
            null_char = *c == '\0';
        if (non_null)
            builder_.characters(char_class::cdata, 1);
        if (null_char)
            builder_.characters(char_class::null, 1);
        if (stop > s)
            builder_.take_ignore_linefeed();
        p_ = found != nullptr ? found + 3 : end_;
    }

    void doctype(const char* q) {
        gap_ = nullptr;
        if (!builder_.in_initial_mode()) {
            const char* g = static_cast<const char*>(std::memchr(q, '>', static_cast<std::size_t>(end_ - q)));
            builder_.doctype(true);
            p_ = g != nullptr ? g + 1 : end_;
            return;
        }
        // The doctype states, for quirks mode. Every path ends at the first '>'.
        std::string name, public_id, system_id;
        bool has_system = false;
        bool force_quirks = false;
        const auto at_end = [&] { return q >= end_; };
        const auto finish = [&](const char* close) {
            builder_.doctype(doctype_quirks(name, public_id, system_id, has_system, force_quirks));
            const char* g =
                close != nullptr
                    ? close
                    : static_cast<const char*>(std::memchr(q, '>', static_cast<std::size_t>(end_ - q)));
            p_ = g != nullptr ? g + 1 : end_;
        };
        const auto skip_space = [&] {
            while (!at_end() && ascii::is_html_whitespace(*q))
                ++q;
        };
        if (at_end()) {
            force_quirks = true;
            return finish(nullptr);
        }
        if (ascii::is_html_whitespace(*q)) {
            ++q;
        } else {
            force_quirks = true;
        }
        skip_space();
        if (at_end() || *q == '>') {
            force_quirks = true;
            return finish(at_end() ? nullptr : q);
        }
        force_quirks = *q == '\0';
        while (!at_end() && !ascii::is_html_whitespace(*q) && *q != '>') {
            name.push_back(*q == '\0' ? '\x01' : ascii::to_lower(*q)); // a NUL is U+FFFD: never "html"
            if (*q != '\0')
                force_quirks = false;
            ++q;
        }
        if (at_end()) {
            force_quirks = true;
            return finish(nullptr);
        }
        if (*q == '>')
            return finish(q);
        skip_space();
        if (at_end()) {
            force_quirks = true;
            return finish(nullptr);
        }
        if (*q == '>')
            return finish(q);
        const bool is_public = starts_with_icase(q, end_, "public");
        const bool is_system = !is_public && starts_with_icase(q, end_, "system");
        if (!is_public && !is_system) {
            force_quirks = true;
            return finish(nullptr);
        }
        q += 6;
        const auto quoted = [&](std::string& out) -> bool { // false: the doctype ended inside
            const char quote = *q++;
            while (!at_end() && *q != quote && *q != '>') {
                out.push_back(*q == '\0' ? '\x01' : *q);
                ++q;
            }
            if (at_end() || *q == '>') {
                force_quirks = true;
                return false;
            }
            ++q;
            return true;
        };
        if (is_public) {
            if (at_end()) {
                force_quirks = true;
                return finish(nullptr);
            }
            if (ascii::is_html_whitespace(*q))
                skip_space();
            if (at_end() || *q == '>' || (*q != '"' && *q != '\'')) {
                force_quirks = true;
                return finish(nullptr);
            }
            if (!quoted(public_id))
                return finish(nullptr);
            if (at_end()) {
                force_quirks = true;
                return finish(nullptr);
            }
            if (*q == '>')
                return finish(q);
            if (ascii::is_html_whitespace(*q)) {
                skip_space();
                if (at_end()) {
                    force_quirks = true;
                    return finish(nullptr);
                }
                if (*q == '>')
                    return finish(q);
            }
            if (*q != '"' && *q != '\'') {
                force_quirks = true;
                return finish(nullptr);
            }
        } else {
            if (at_end()) {
                force_quirks = true;
                return finish(nullptr);
            }
            if (ascii::is_html_whitespace(*q))
                skip_space();
            if (at_end() || *q == '>' || (*q != '"' && *q != '\'')) {
                force_quirks = true;
                return finish(nullptr);
            }
        }
        has_system = true;
        if (!quoted(system_id))
            return finish(nullptr);
        skip_space();
        if (at_end())
            force_quirks = true;
        return finish(nullptr);
    }

    void end_tag_open(const char* q) {
        if (q >= end_) {
            emit_text_char(char_class::other); // "</"
            p_ = end_;
            return;
        }
        if (*q == '>') {
            // "</>" is no token at all, so gumbo counts it in the original text of the next one.
            if (gap_ == nullptr)
                gap_ = p_;
            p_ = q + 1;
            return;
        }
        if (!ascii::is_alpha(*q)) {
            bogus_comment(q);
            return;
        }
        tag_token(q, false);
    }

    void start_tag(const char* q) { tag_token(q, true); }

    /// A start or end tag from its name's first letter; p_ is at its '<'.
    void tag_token(const char* name_start, bool start) {
        const char* q = name_start;
        while (q < end_ && !ascii::is_html_whitespace(*q) && *q != '/' && *q != '>')
            ++q;
        if (q >= end_) {
            p_ = end_; // a tag cut by the end of input is dropped
            return;
        }
        token t;
        t.kind = start ? token::type::start_tag : token::type::end_tag;
        t.name = lookup(name_start, q);
        attributes_.clear();
        name_index_.clear();
        const char* close = attributes(q, t.self_closing, start);
        for (attribute& at : attributes_) // names_ is complete: its views are stable now
            at.name = std::string_view(names_.data() + at.name_offset, at.name.size());
        if (close == nullptr) {
            p_ = end_;
            return;
        }
        // gumbo compares foreign end tags by names it takes from each tag's original text: from the end of
        // the previous token (a "</>" before the tag is part of it) to the '>'.
        const char* original = gap_ != nullptr ? gap_ : p_;
        gap_ = nullptr;
        if (original[1] == '/') {
            t.raw_name = {original + 2, static_cast<std::size_t>(close - original - 2)};
        } else {
            const char* name_end = original + 1;
            while (name_end < close && !is_c_space(*name_end) && *name_end != '/')
                ++name_end;
            t.raw_name = {original + 1, static_cast<std::size_t>(name_end - original - 1)};
        }
        p_ = close + 1;
        if (start) {
            t.attributes = attributes_.data();
            t.attribute_count = attributes_.size();
            const lexer_state next = builder_.start_tag(t);
            if (next != lexer_state::data) {
                state_ = next;
                raw_text_start_ = p_;
            }
        } else {
            builder_.end_tag(t);
        }
    }

    static bool is_c_space(char c) noexcept {
        return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
    }

    static tag lookup(const char* from, const char* to) noexcept {
        char name[16];
        const auto n = static_cast<std::size_t>(to - from);
        if (n > 14)
            return tag::unknown;
        for (std::size_t i = 0; i < n; ++i)
            name[i] = ascii::to_lower(from[i]);
        return find_tag({name, n});
    }

    /// The attributes after a tag name, up to the '>' (returned); nullptr when the input ends first. With
    /// `collect`, the attributes (their names decoded, later duplicates dropped) go to attributes_.
    const char* attributes(const char* q, bool& self_closing, bool collect) {
        enum class st { before_name, name, after_name, before_value, after_quoted, self_closing };
        st state = st::before_name;
        const char* name_begin = nullptr;
        // gumbo (with its error list off) keeps the name of a duplicate that has no value in its buffer: the
        // next attribute's name starts with it.
        std::size_t leaked = 0;
        bool dropping = false; // the attribute being read is a duplicate: its value goes too
        names_.clear();
        if (*q == '/') {
            state = st::self_closing;
            ++q;
        } else if (*q == '>') {
            return q;
        } else {
            ++q; // the whitespace after the name
        }
        while (q < end_) {
            const char c = *q;
            switch (state) {
            case st::before_name:
            case st::after_name:
                if (ascii::is_html_whitespace(c)) {
                    ++q;
                } else if (c == '/') {
                    state = st::self_closing;
                    ++q;
                } else if (c == '>') {
                    return q;
                } else if (c == '=' && state == st::after_name) {
                    state = st::before_value;
                    leaked = 0;
                    ++q;
                } else {
                    // gumbo drops a NUL that starts an attribute name.
                    name_begin = c == '\0' ? q + 1 : q;
                    state = st::name;
                    ++q;
                }
                break;
            case st::name: {
                while (q < end_ && !ascii::is_html_whitespace(*q) && *q != '/' && *q != '=' && *q != '>')
                    ++q;
                if (q >= end_)
                    return nullptr;
                dropping = false;
                if (collect)
                    dropping = !finish_name({name_begin, static_cast<std::size_t>(q - name_begin)}, leaked);
                leaked = 0;
                const char e = *q;
                if (ascii::is_html_whitespace(e)) {
                    state = st::after_name;
                    ++q;
                } else if (e == '/') {
                    state = st::self_closing;
                    ++q;
                } else if (e == '=') {
                    state = st::before_value;
                    ++q;
                } else {
                    return q;
                }
                if (dropping && e != '=')
                    leaked = last_name_length_; // the duplicate's name stays for the next one
                break;
            }
            case st::before_value:
                leaked = 0;
                if (ascii::is_html_whitespace(c)) {
                    ++q;
                } else if (c == '"' || c == '\'') {
                    const char* close = static_cast<const char*>(
                        std::memchr(q + 1, c, static_cast<std::size_t>(end_ - q - 1)));
                    if (close == nullptr)
                        return nullptr;
                    if (collect && !dropping) {
                        attributes_.back().value = {q + 1, static_cast<std::size_t>(close - q - 1)};
                        attributes_.back().quote = c;
                    }
                    q = close + 1;
                    state = st::after_quoted;
                } else if (c == '>') {
                    return q;
                } else {
                    const char* v = q;
                    while (q < end_ && !ascii::is_html_whitespace(*q) && *q != '>')
                        ++q;
                    if (q >= end_)
                        return nullptr;
                    if (collect && !dropping) {
                        attributes_.back().value = {v, static_cast<std::size_t>(q - v)};
                        attributes_.back().quote = '>';
                    }
                    if (*q == '>')
                        return q;
                    ++q;
                    state = st::before_name;
                }
                break;
            case st::after_quoted:
                if (ascii::is_html_whitespace(c)) {
                    state = st::before_name;
                    ++q;
                } else if (c == '/') {
                    state = st::self_closing;
                    ++q;
                } else if (c == '>') {
                    return q;
                } else {
                    state = st::before_name;
                }
                break;
            case st::self_closing:
                if (c == '>') {
                    self_closing = true;
                    return q;
                }
                state = st::before_name;
                break;
            }
        }
        return nullptr;
    }

    /// Decodes an attribute name (after `leaked` bytes of the previous name, a duplicate) and adds the
    /// attribute; false when it is a duplicate, which is dropped.
    bool finish_name(std::string_view raw, std::size_t leaked) {
        const std::size_t start = names_.size();
        if (leaked != 0)
            names_.append(names_, last_name_offset_, leaked);
        bool plain = true;
        for (const char c : raw)
            if (c <= 0x20 || c >= 0x7F) {
                plain = false;
                break;
            }
        if (plain) {
            for (const char c : raw)
                names_.push_back(ascii::to_lower(c));
        } else {
            std::string lowered(raw);
            for (char& c : lowered)
                c = ascii::to_lower(c);
            append_input_text(names_, lowered);
        }
        const std::size_t length = names_.size() - start;
        last_name_offset_ = start;
        last_name_length_ = length;
        const std::string_view name(names_.data() + start, length);
        const auto name_of = [&](const attribute& a) {
            return std::string_view(names_.data() + a.name_offset, a.name.size());
        };
        // Tags rarely have many attributes; hostile ones have thousands, looked up by hash.
        constexpr std::size_t linear_limit = 16;
        if (attributes_.size() < linear_limit) {
            for (const attribute& other : attributes_)
                if (name_of(other) == name)
                    return false;
        } else {
            if (name_index_.empty())
                for (std::size_t i = 0; i < attributes_.size(); ++i)
                    name_index_.emplace(hash_bytes(name_of(attributes_[i]), 7),
                                        static_cast<std::uint32_t>(i));
            const auto [first, last] = name_index_.equal_range(hash_bytes(name, 7));
            for (auto it = first; it != last; ++it)
                if (name_of(attributes_[it->second]) == name)
                    return false;
            name_index_.emplace(hash_bytes(name, 7), static_cast<std::uint32_t>(attributes_.size()));
        }
        attribute added;
        added.name =
            std::string_view(names_.data() + start, length); // names_ may still move: tag_token rebases
        added.name_offset = static_cast<std::uint32_t>(start);
        added.value = {};
        added.quote = 0;
        attributes_.push_back(added);
        return true;
    }

    // -- Raw text states --

    /// RCDATA or RAWTEXT: up to the end tag of the element that opened it.
    void raw_text(bool references) {
        const char* q = p_;
        while (true) {
            const char* lt =
                static_cast<const char*>(std::memchr(q, '<', static_cast<std::size_t>(end_ - q)));
            if (references)
                if (const char* stop = text_end_of_input(q, lt != nullptr ? lt : end_)) {
                    builder_.raw_text({raw_text_start_, static_cast<std::size_t>(stop - raw_text_start_)});
                    end_ = stop;
                    p_ = stop;
                    return;
                }
            if (lt == nullptr) {
                p_ = end_;
                return;
            }
            if (const char* after = appropriate_end_tag(lt)) {
                raw_text_end(lt, after);
                return;
            }
            q = lt + 1;
        }
    }

    /// When `lt` starts the end tag of the open raw text element ("</name" then a space, '/' or '>'), the
    /// name's end.
    const char* appropriate_end_tag(const char* lt) const noexcept {
        if (end_ - lt < 3 || lt[1] != '/' || !ascii::is_alpha(lt[2]))
            return nullptr;
        const char* q = lt + 2;
        while (q < end_ && ascii::is_alpha(*q))
            ++q;
        if (q >= end_ || !(ascii::is_html_whitespace(*q) || *q == '/' || *q == '>'))
            return nullptr;
        return lookup(lt + 2, q) == builder_.raw_text_tag() ? q : nullptr;
    }

    void raw_text_end(const char* lt, const char* name_end) {
        builder_.raw_text({raw_text_start_, static_cast<std::size_t>(lt - raw_text_start_)});
        state_ = lexer_state::data;
        p_ = lt;
        token t;
        t.kind = token::type::end_tag;
        t.name = builder_.raw_text_tag();
        attributes_.clear();
        bool self_closing = false;
        const char* close = attributes(name_end, self_closing, false);
        if (close == nullptr) {
            p_ = end_;
            return;
        }
        t.raw_name = {lt + 2, static_cast<std::size_t>(close - lt - 2)};
        p_ = close + 1;
        builder_.end_tag(t);
    }

    /// Script data with its escaped and double escaped states.
    void script_data() {
        enum class st {
            plain,
            escaped,
            escaped_dash,
            escaped_dash_dash,
            double_escaped,
            double_escaped_dash,
            double_escaped_dash_dash
        };
        st state = st::plain;
        const char* q = p_;
        const auto alpha_run = [&](const char* from) {
            while (from < end_ && ascii::is_alpha(*from))
                ++from;
            return from;
        };
        const auto is_script = [](const char* from, const char* to) {
            return to - from == 6 && ascii_iequals({from, 6}, "script");
        };
        while (q < end_) {
            if (state == st::plain) {
                const char* lt =
                    static_cast<const char*>(std::memchr(q, '<', static_cast<std::size_t>(end_ - q)));
                if (lt == nullptr)
                    break;
                if (const char* after = appropriate_end_tag(lt)) {
                    raw_text_end(lt, after);
                    return;
                }
                q = lt + 1;
                if (q < end_ && *q == '!') {
                    ++q;
                    if (q + 1 < end_ && q[0] == '-' && q[1] == '-') {
                        q += 2;
                        state = st::escaped_dash_dash;
                    }
                }
                continue;
            }
            const char c = *q;
            if (c == '<') {
                if (state == st::escaped || state == st::escaped_dash || state == st::escaped_dash_dash) {
                    if (const char* after = appropriate_end_tag(q)) {
                        raw_text_end(q, after);
                        return;
                    }
                    const char* r = q + 1;
                    if (r < end_ && ascii::is_alpha(*r)) {
                        const char* e = alpha_run(r);
                        if (e < end_ && (ascii::is_html_whitespace(*e) || *e == '/' || *e == '>')) {
                            state = is_script(r, e) ? st::double_escaped : st::escaped;
                            q = e + 1;
                        } else {
                            state = st::escaped;
                            q = e;
                        }
                    } else {
                        state = st::escaped;
                        q = r;
                    }
                } else {
                    // Double escaped: "</script" ends it, back to escaped.
                    const char* r = q + 1;
                    if (r < end_ && *r == '/') {
                        const char* e = alpha_run(r + 1);
                        if (e < end_ && (ascii::is_html_whitespace(*e) || *e == '/' || *e == '>')) {
                            state = is_script(r + 1, e) ? st::escaped : st::double_escaped;
                            q = e + 1;
                        } else {
                            state = st::double_escaped;
                            q = e;
                        }
                    } else {
                        state = st::double_escaped;
                        q = r;
                    }
                }
                continue;
            }
            if (c == '-') {
                switch (state) {
                case st::escaped:
                    state = st::escaped_dash;
                    break;
                case st::escaped_dash:
                    state = st::escaped_dash_dash;
                    break;
                case st::double_escaped:
                    state = st::double_escaped_dash;
                    break;
                case st::double_escaped_dash:
                    state = st::double_escaped_dash_dash;
                    break;
                default:
                    break;
                }
                ++q;
                continue;
            }
            if (c == '>' && (state == st::escaped_dash_dash || state == st::double_escaped_dash_dash)) {
                state = st::plain;
                ++q;
                continue;
            }
            if (state == st::escaped_dash || state == st::escaped_dash_dash)
                state = st::escaped;
            else if (state == st::double_escaped_dash || state == st::double_escaped_dash_dash)
                state = st::double_escaped;
            ++q;
        }
        p_ = end_;
    }

    const char* p_;
    const char* end_;
    tree_builder& builder_;
    lexer_state state_ = lexer_state::data;
    const char* raw_text_start_ = nullptr;
    std::vector<attribute> attributes_;
    std::string names_; // the decoded attribute names of the tag being read
    std::size_t last_name_offset_ = 0;
    std::size_t last_name_length_ = 0;
    std::unordered_multimap<std::uint64_t, std::uint32_t> name_index_;
    const char* gap_ = nullptr; // where a run of "</>" began, just before the next token
};

} // namespace

void extract(std::string_view html, const extractor_options& options, extraction& out) {
    out.text.clear();
    out.entries.clear();
    out.dropped_links = 0;
    out.dropped_requisites = 0;
    tree_builder builder(options, out);
    tokenizer lexer(html, builder);
    lexer.run();
}

} // namespace asiocrawl::detail::html
