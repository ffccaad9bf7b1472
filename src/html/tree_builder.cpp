// Tree construction of the link extractor: the insertion modes and their helpers (see tree_builder.hpp).
//
// The member functions that only this file calls are defined `inline`: the extractor was one file with
// everything in an anonymous namespace, and with external linkage GCC inlines less of it (the fast parser's
// rate fell by about 2.5% in bench's parse-rate tool). dispatch(), compact() and finish(), which
// tree_builder.hpp's inline functions call, are the ones that are not.
#include "html/tree_builder.hpp"

#include "html/text.hpp"

#include <algorithm>
#include <bit>
#include <string_view>
#include <unordered_set>

namespace asiocrawl::detail::html {

namespace {

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
// The grouping elements of "in body": a start tag closes an open p first (as <p> does), an end tag closes the
// element if it is in scope (as </button>, </listing> and </pre> do). Tested in the default branches of
// in_body_start and in_body_end: the spec lists them twice, once for each.
constexpr tag_set grouping{address, article,  aside,      blockquote, center,  details, dir,    div,
                           dl,      fieldset, figcaption, figure,     footer,  header,  hgroup, main,
                           menu,    nav,      ol,         section,    summary, ul};

} // namespace

inline std::uint32_t tree_builder::new_element(tag name, space ns) {
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

inline void tree_builder::retain(std::uint32_t id) noexcept {
    ++el(id).refs;
}

inline void tree_builder::release(std::uint32_t id) {
    if (id != no_element && --el(id).refs == 0)
        free_elements_.push_back(id);
}

inline bool tree_builder::is_html(std::uint32_t id, tag t) const noexcept {
    return el(id).ns == space::html && el(id).name == t;
}

inline bool tree_builder::is_html_in(std::uint32_t id, const tag_set& s) const noexcept {
    return el(id).ns == space::html && s.contains(el(id).name);
}

inline bool tree_builder::current_is(tag t) const noexcept {
    return is_html(current(), t);
}

inline bool tree_builder::is_special(std::uint32_t id) const noexcept {
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

inline bool tree_builder::in_scope_set(const element& e, scope_kind kind) const noexcept {
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

inline bool tree_builder::has_in_scope(const tag_set& targets, scope_kind kind) const noexcept {
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

inline bool tree_builder::has_in_scope(tag t, scope_kind kind) const noexcept {
    return has_in_scope(tag_set{t}, kind);
}

inline bool tree_builder::has_open(tag t) const noexcept {
    for (std::size_t i = stack_.size(); i-- > 0;) {
        if (is_html(stack_[i], t))
            return true;
        if (is_html(stack_[i], html))
            return false;
    }
    return false;
}

inline bool tree_builder::has_node_in_scope(std::uint32_t id) const noexcept {
    for (std::size_t i = stack_.size(); i-- > 0;) {
        if (stack_[i] == id)
            return true;
        if (in_scope_set(el(stack_[i]), scope_kind::normal))
            return false;
    }
    return false;
}

inline std::ptrdiff_t tree_builder::stack_index(std::uint32_t id) const noexcept {
    for (std::size_t i = stack_.size(); i-- > 0;)
        if (stack_[i] == id)
            return static_cast<std::ptrdiff_t>(i);
    return -1;
}

inline void tree_builder::push(std::uint32_t id) {
    stack_.push_back(id);
    element& e = el(id);
    e.open = true;
    retain(id);
    if (e.ns == space::html && e.name == template_)
        ++templates_open_;
}

inline void tree_builder::closed(std::uint32_t id) {
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

inline std::uint32_t tree_builder::pop() {
    const std::uint32_t id = stack_.back();
    stack_.pop_back();
    closed(id);
    return id;
}

inline bool tree_builder::has_open_anywhere(tag t) const noexcept {
    for (std::size_t i = stack_.size(); i-- > 0;)
        if (is_html(stack_[i], t))
            return true;
    return false;
}

inline void tree_builder::pop_until(std::uint32_t id) {
    while (!stack_.empty() && pop() != id) {
    }
}

inline void tree_builder::pop_until_html(tag t) {
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

inline void tree_builder::remove_from_stack(std::uint32_t id) {
    const std::ptrdiff_t i = stack_index(id);
    if (i < 0)
        return;
    stack_.erase(stack_.begin() + i);
    closed(id);
}

inline std::uint32_t tree_builder::new_item(std::uint32_t entry) {
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

inline void tree_builder::link_before(std::uint32_t at, std::uint32_t first, std::uint32_t last) noexcept {
    const std::uint32_t prev = items_[at].prev;
    items_[prev].next = first;
    items_[first].prev = prev;
    items_[last].next = at;
    items_[at].prev = last;
}

inline void tree_builder::link_before(std::uint32_t at, std::uint32_t item) noexcept {
    link_before(at, item, item);
}

inline void tree_builder::unlink(std::uint32_t first, std::uint32_t last) noexcept {
    if (items_[first].prev == first)
        return; // a detached range (a clone's, in the adoption agency)
    const std::uint32_t prev = items_[first].prev;
    const std::uint32_t next = items_[last].next;
    items_[prev].next = next;
    items_[next].prev = prev;
    items_[first].prev = first;
    items_[last].next = last;
}

inline void tree_builder::unlink_free(std::uint32_t i) noexcept {
    unlink(i, i);
    items_[i].next = free_items_;
    free_items_ = i;
}

inline void tree_builder::make_markers(element& e) {
    e.start = new_item(marker);
    e.end = new_item(marker);
    items_[e.start].next = e.end;
    items_[e.end].prev = e.start;
}

inline bool tree_builder::references_are_inert() const noexcept {
    return templates_open_ > 0;
}

inline void tree_builder::emit(entry_kind kind, requisite_kind requisite, std::string_view value,
                               std::uint32_t before) {
    if (references_are_inert())
        return;
    const auto offset = static_cast<std::uint32_t>(out_.text.size());
    out_.text.append(value);
    emit_stored(kind, requisite, offset, static_cast<std::uint32_t>(value.size()), before);
}

inline void tree_builder::emit_stored(entry_kind kind, requisite_kind requisite, std::uint32_t offset,
                                      std::uint32_t length, std::uint32_t before) {
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

void tree_builder::compact() {
    std::string text;
    std::vector<extraction::entry> entries;
    std::size_t links = 0, requisites = 0;
    bool base = false, canonical = false;
    unsigned robots = 0; // the codes kept: each says the same wherever it is
    // Past the cap, it counts distinct links: a repeat of a kept one, up to its fragment, names the same
    // document, and is dropped without counting (a table of contents of 13,972 links to 497 pages keeps them
    // all). Views into out_.text, which lives until the end.
    links_over_cap_ = links_over_cap_ || (options_.max_links != 0 && stored_links_ > options_.max_links);
    const bool over_cap = links_over_cap_;
    std::unordered_set<std::string_view> kept_links;
    for (std::uint32_t i = items_[0].next; i != 0;) {
        const std::uint32_t next = items_[i].next;
        if (items_[i].entry != marker) {
            extraction::entry e = entries_[items_[i].entry];
            bool keep;
            if (e.kind == entry_kind::link && over_cap) {
                const std::string_view value = std::string_view(out_.text).substr(e.offset, e.length);
                const std::string_view document = value.substr(0, value.find('#'));
                if (kept_links.contains(document)) {
                    keep = false;
                    ++dropped_repeats_[std::string(document)];
                } else {
                    keep = links < options_.max_links;
                    if (keep)
                        kept_links.insert(document);
                    links += keep;
                    if (!keep) {
                        ++out_.dropped_links;
                        if (const auto repeats = dropped_repeats_.find(std::string(document));
                            repeats != dropped_repeats_.end()) {
                            out_.dropped_links += repeats->second; // it lost its place: its repeats count
                            dropped_repeats_.erase(repeats);
                        }
                    }
                }
            } else if (e.kind == entry_kind::link) {
                keep = options_.max_links == 0 || links < options_.max_links;
                links += keep;
                out_.dropped_links += !keep;
            } else if (e.kind == entry_kind::requisite) {
                keep = options_.max_links == 0 || requisites < options_.max_links;
                requisites += keep;
                out_.dropped_requisites += !keep;
            } else if (e.kind == entry_kind::canonical) {
                keep = !canonical;
                canonical = true;
            } else if (e.kind == entry_kind::robots) {
                const unsigned bit = 1u << (out_.text[e.offset] - '0');
                keep = (robots & bit) == 0;
                robots |= bit;
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
    stored_bases_ = (base ? 1 : 0) + (canonical ? 1 : 0) + static_cast<std::size_t>(std::popcount(robots));
}

void tree_builder::finish() {
    compact();
    out_.entries.reserve(entries_.size());
    for (std::uint32_t i = items_[0].next; i != 0; i = items_[i].next)
        if (items_[i].entry != marker)
            out_.entries.push_back(entries_[items_[i].entry]);
}

inline std::string& tree_builder::scratch() {
    scratch_.clear();
    return scratch_;
}

inline std::string_view tree_builder::decoded(const attribute& a) {
    std::string& s = scratch();
    if (is_plain_text(a.value))
        return a.value;
    decode_attribute_value(s, a.value, a.quote);
    return s;
}

inline void tree_builder::emit_link_attribute(const token& t, std::string_view name, std::uint32_t before,
                                              element* e) {
    const attribute* a = t.find(name);
    if (a == nullptr || (references_are_inert() && e == nullptr))
        return;
    if (options_.skip_rel_nofollow) {
        if (const attribute* rel = t.find("rel"); rel != nullptr && rel_has(decoded(*rel), "nofollow")) {
            if (!ascii::is_html_blank(decoded(*a)) && !references_are_inert())
                ++out_.rel_nofollow;
            return; // no link, and none for a clone to make again
        }
    }
    const std::string_view value = decoded(*a);
    if (ascii::is_html_blank(value))
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

inline void tree_builder::emit_requisite_attribute(const token& t, std::string_view name, requisite_kind kind,
                                                   std::uint32_t before) {
    if (const attribute* a = t.find(name)) {
        const std::string_view value = decoded(*a);
        if (!ascii::is_html_blank(value))
            emit(entry_kind::requisite, kind, value, before);
    }
}

inline void tree_builder::emit_css(std::string_view css, std::uint32_t before) {
    for (const css_reference& r : extract_css_references(css))
        if (!ascii::is_html_blank(r.url))
            emit(entry_kind::requisite, r.import ? requisite_kind::stylesheet : requisite_kind::style, r.url,
                 before);
}

inline void tree_builder::emit_srcset(std::string_view srcset, std::uint32_t before) {
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

inline void tree_builder::emit_references(element& e, const token& t, std::uint32_t before) {
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
        case link:
            if (const attribute* rel = t.find("rel"); rel != nullptr && rel_has(decoded(*rel), "canonical"))
                if (const attribute* href = t.find("href"))
                    if (const std::string_view value = decoded(*href); !ascii::is_html_blank(value))
                        emit(entry_kind::canonical, requisite_kind::image, value, before);
            break;
        case meta:
            if (const attribute* name = t.find("name")) {
                const std::string_view value = decoded(*name);
                if (ascii::iequals(ascii::trim_html_whitespace(value), "robots"))
                    if (const attribute* content = t.find("content")) {
                        // An entry, not a flag: a <frameset> that replaces the body takes it away too.
                        const robots_directives said = parse_robots_directives(decoded(*content));
                        const char code =
                            static_cast<char>('0' + (said.noindex ? 1 : 0) + (said.nofollow ? 2 : 0));
                        if (code != '0')
                            emit(entry_kind::robots, requisite_kind::image, std::string_view(&code, 1),
                                 before);
                    }
            }
            if (const attribute* equiv = t.find("http-equiv")) {
                const std::string_view value = decoded(*equiv);
                if (value.size() == 7 && std::equal(value.begin(), value.end(), "refresh",
                                                    [](char x, char y) { return ascii::to_lower(x) == y; }))
                    if (const attribute* content = t.find("content")) {
                        const std::string refresh_content(decoded(*content));
                        if (auto target = parse_meta_refresh(refresh_content);
                            target && !ascii::is_html_blank(*target))
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
            if (!ascii::is_html_blank(value))
                emit(entry_kind::link, requisite_kind::image, value, before);
        }
    }
    if (options_.requisites)
        emit_requisites(e, t, before);
}

inline void tree_builder::emit_requisites(const element& e, const token& t, std::uint32_t before) {
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

inline bool tree_builder::rel_has(std::string_view rel, std::string_view word) {
    return ascii::has_html_token(rel, word);
}

inline std::optional<requisite_kind> tree_builder::link_requisite(std::string_view rel) {
    std::optional<requisite_kind> found;
    for (auto token = ascii::next_html_token(rel); !token.empty(); token = ascii::next_html_token(rel)) {
        if (ascii::iequals(token, "stylesheet"))
            return requisite_kind::stylesheet;
        if ((ascii::iequals(token, "icon") || ascii::iequals(token, "apple-touch-icon")) && !found)
            found = requisite_kind::icon;
        else if ((ascii::iequals(token, "preload") || ascii::iequals(token, "modulepreload")) && !found)
            found = requisite_kind::preload;
    }
    return found;
}

inline std::uint32_t tree_builder::insertion_point(std::uint32_t override_target) {
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

inline void tree_builder::set_attributes_identity(element& e, const token& t) {
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

inline std::uint32_t tree_builder::insert_element(const token& t, space ns, bool bounded) {
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

inline std::uint32_t tree_builder::insert_html(const token& t, bool bounded) {
    return insert_element(t, space::html, bounded);
}

inline void tree_builder::insert_void(const token& t) {
    const std::uint32_t id = new_element(t.name, space::html);
    emit_references(el(id), t, insertion_point());
    retain(id);
    release(id);
}

inline std::uint32_t tree_builder::insert_implied(tag name) {
    const std::uint32_t id = new_element(name, space::html);
    element& e = el(id);
    make_markers(e);
    link_before(insertion_point(), e.start, e.end);
    push(id);
    return id;
}

inline std::uint32_t tree_builder::clone_of(std::uint32_t original) {
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

inline void tree_builder::generic_raw_text(const token& t, lexer_state state) {
    insert_html(t, false);
    next_lexer_state_ = state;
    raw_text_tag_ = t.name;
    raw_text_ = {};
    original_mode_ = mode_;
    mode_ = mode::text;
}

inline void tree_builder::add_formatting(std::uint32_t id) {
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

inline void tree_builder::add_marker() {
    formatting_.push_back(no_element);
}

inline void tree_builder::remove_formatting_at(std::size_t i) {
    release(formatting_[i]); // a marker is element 0: release ignores it
    formatting_.erase(formatting_.begin() + static_cast<std::ptrdiff_t>(i));
}

inline std::ptrdiff_t tree_builder::formatting_index(std::uint32_t id) const noexcept {
    for (std::size_t i = formatting_.size(); i-- > 0;)
        if (formatting_[i] == id)
            return static_cast<std::ptrdiff_t>(i);
    return -1;
}

inline void tree_builder::clear_formatting_to_marker() {
    while (!formatting_.empty()) {
        const std::uint32_t id = formatting_.back();
        formatting_.pop_back();
        if (id == no_element)
            return;
        release(id);
    }
}

inline std::uint32_t tree_builder::last_formatting_a() const noexcept {
    for (std::size_t i = formatting_.size(); i-- > 0;) {
        if (formatting_[i] == no_element)
            return no_element;
        if (is_html(formatting_[i], a))
            return formatting_[i];
    }
    return no_element;
}

inline void tree_builder::reconstruct() {
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

inline void tree_builder::adoption_agency(tag subject) {
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

inline void tree_builder::move_into(std::uint32_t child, std::uint32_t parent) {
    const std::uint32_t first = el(child).start, last = el(child).end;
    unlink(first, last);
    link_before(el(parent).end, first, last);
}

inline void tree_builder::generate_implied_end_tags(tag except) {
    while (!stack_.empty() && is_html_in(current(), implied_end) && !(except != count_ && current_is(except)))
        pop();
}

inline void tree_builder::generate_implied_end_tags_thoroughly() {
    while (!stack_.empty() && is_html_in(current(), implied_end_thoroughly))
        pop();
}

inline void tree_builder::close_element(tag t) {
    generate_implied_end_tags(t);
    pop_until_html(t);
}

inline void tree_builder::close_p_in_button_scope() {
    if (has_in_scope(p, scope_kind::button))
        close_element(p);
}

inline void tree_builder::clear_stack_to(const tag_set& context) {
    while (!is_html_in(current(), context))
        pop();
}

inline bool tree_builder::close_table() {
    if (!has_in_scope(table, scope_kind::table))
        return false;
    pop_until_html(table);
    reset_insertion_mode();
    return true;
}

inline void tree_builder::close_cell(tag cell) {
    generate_implied_end_tags();
    pop_until_html(cell);
    clear_formatting_to_marker();
    mode_ = mode::in_row;
}

inline void tree_builder::close_current_cell() {
    close_cell(has_in_scope(td, scope_kind::table) ? td : th);
}

inline void tree_builder::close_select() {
    pop_until_html(select);
    reset_insertion_mode();
}

inline void tree_builder::reset_insertion_mode() {
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

inline bool tree_builder::input_is_hidden(const token& t) {
    const attribute* type = t.find("type");
    if (type == nullptr)
        return false;
    const std::string_view value = decoded(*type);
    return value.size() == 6 && std::equal(value.begin(), value.end(), "hidden",
                                           [](char x, char y) { return ascii::to_lower(x) == y; });
}

void tree_builder::dispatch(const token& t) {
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

inline void tree_builder::in_mode(const token& t) {
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

inline void tree_builder::reprocess(mode m) {
    mode_ = m;
    reprocess_ = true;
}

inline void tree_builder::initial(const token& t) {
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

inline void tree_builder::before_html(const token& t) {
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

inline void tree_builder::before_head(const token& t) {
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

inline void tree_builder::set_head(std::uint32_t id) {
    release(head_element_);
    head_element_ = id;
    retain(id);
}

inline void tree_builder::in_head(const token& t) {
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

inline void tree_builder::in_head_noscript(const token& t) {
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

inline void tree_builder::after_head(const token& t) {
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

inline void tree_builder::in_body(const token& t) {
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

inline void tree_builder::in_body_start(const token& t) {
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
        mode_ = (before == mode::in_table || before == mode::in_caption || before == mode::in_table_body ||
                 before == mode::in_row || before == mode::in_cell)
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
        if (t.name == p || grouping.contains(t.name)) {
            close_p_in_button_scope();
            insert_html(t);
            return;
        }
        reconstruct();
        insert_html(t);
        return;
    }
}

inline void tree_builder::in_body_frameset(const token& t) {
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

inline void tree_builder::close_list_item(bool is_li) {
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

inline void tree_builder::set_form(std::uint32_t id) {
    release(form_element_);
    form_element_ = id;
    if (id != no_element)
        retain(id);
}

inline void tree_builder::in_body_end(const token& t) {
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
        if (grouping.contains(t.name) || t.name == button || t.name == listing || t.name == pre) {
            if (has_in_scope(t.name))
                close_element(t.name);
            return;
        }
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

inline void tree_builder::text(const token& t) {
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

inline void tree_builder::in_table(const token& t) {
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

inline void tree_builder::in_table_text(const token& t) {
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

inline void tree_builder::in_caption(const token& t) {
    if (t.is_end(caption)) {
        if (!has_in_scope(caption, scope_kind::table))
            return;
        generate_implied_end_tags();
        pop_until_html(caption);
        clear_formatting_to_marker();
        mode_ = mode::in_table;
        return;
    }
    if (t.is_start_in(tag_set{caption, col, colgroup, tbody, td, tfoot, th, thead, tr}) || t.is_end(table)) {
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

inline void tree_builder::in_column_group(const token& t) {
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

inline void tree_builder::in_table_body(const token& t) {
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

inline void tree_builder::in_row(const token& t) {
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

inline void tree_builder::in_cell(const token& t) {
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

inline void tree_builder::in_select(const token& t) {
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

inline void tree_builder::in_select_in_table(const token& t) {
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

inline void tree_builder::in_template(const token& t) {
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

inline void tree_builder::switch_template_mode(mode m) {
    if (!template_modes_.empty())
        template_modes_.pop_back();
    template_modes_.push_back(m);
    reprocess(m);
}

inline void tree_builder::after_body(const token& t) {
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

inline void tree_builder::in_frameset(const token& t) {
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

inline void tree_builder::after_frameset(const token& t) {
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

inline void tree_builder::after_after_body(const token& t) {
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

inline void tree_builder::after_after_frameset(const token& t) {
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

inline void tree_builder::foreign_content(const token& t) {
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

} // namespace asiocrawl::detail::html
