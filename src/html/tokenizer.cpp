// The tokenizer states of the link extractor, and the doctype quirks table (see tokenizer.hpp).
//
// The member functions other than run() are defined `inline`, as tree_builder.cpp's are (only this file calls
// them; see there why).
#include "html/tokenizer.hpp"

#include "html/text.hpp"

#include <algorithm>
#include <cstring>

namespace asiocrawl::detail::html {

namespace {

using enum tag;

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

} // namespace

void tokenizer::run() {
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

inline const char* tokenizer::text_end_of_input(const char* from, const char* to) noexcept {
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

inline bool tokenizer::text_run(const char* from, const char* to, bool references) {
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

inline void tokenizer::emit_text_char(char_class c) {
    gap_ = nullptr;
    if (builder_.text_is_noop()) {
        builder_.take_ignore_linefeed();
        return;
    }
    builder_.take_ignore_linefeed();
    builder_.characters(c, 1);
}

inline void tokenizer::data() {
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

inline void tokenizer::markup() {
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

inline void tokenizer::markup_declaration(const char* q) {
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

inline void tokenizer::comment(const char* s) {
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

inline void tokenizer::bogus_comment(const char* s) {
    gap_ = nullptr;
    const char* g = static_cast<const char*>(std::memchr(s, '>', static_cast<std::size_t>(end_ - s)));
    builder_.comment();
    p_ = g != nullptr ? g + 1 : end_;
}

inline void tokenizer::cdata(const char* s) {
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

inline void tokenizer::doctype(const char* q) {
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
    // After either keyword: optional whitespace, then an opening quote; anything else forces quirks.
    if (!at_end() && ascii::is_html_whitespace(*q))
        skip_space();
    if (at_end() || (*q != '"' && *q != '\'')) {
        force_quirks = true;
        return finish(nullptr);
    }
    if (is_public) {
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
    }
    has_system = true;
    if (!quoted(system_id))
        return finish(nullptr);
    skip_space();
    if (at_end())
        force_quirks = true;
    return finish(nullptr);
}

inline void tokenizer::end_tag_open(const char* q) {
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

inline void tokenizer::start_tag(const char* q) {
    tag_token(q, true);
}

inline void tokenizer::tag_token(const char* name_start, bool start) {
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

inline bool tokenizer::is_c_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline tag tokenizer::lookup(const char* from, const char* to) noexcept {
    char name[16];
    const auto n = static_cast<std::size_t>(to - from);
    if (n > 14)
        return tag::unknown;
    for (std::size_t i = 0; i < n; ++i)
        name[i] = ascii::to_lower(from[i]);
    return find_tag({name, n});
}

inline const char* tokenizer::attributes(const char* q, bool& self_closing, bool collect) {
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
                const char* close =
                    static_cast<const char*>(std::memchr(q + 1, c, static_cast<std::size_t>(end_ - q - 1)));
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

inline bool tokenizer::finish_name(std::string_view raw, std::size_t leaked) {
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
                name_index_.emplace(hash_bytes(name_of(attributes_[i]), 7), static_cast<std::uint32_t>(i));
        const auto [first, last] = name_index_.equal_range(hash_bytes(name, 7));
        for (auto it = first; it != last; ++it)
            if (name_of(attributes_[it->second]) == name)
                return false;
        name_index_.emplace(hash_bytes(name, 7), static_cast<std::uint32_t>(attributes_.size()));
    }
    attribute added;
    added.name = std::string_view(names_.data() + start, length); // names_ may still move: tag_token rebases
    added.name_offset = static_cast<std::uint32_t>(start);
    added.value = {};
    added.quote = 0;
    attributes_.push_back(added);
    return true;
}

inline void tokenizer::raw_text(bool references) {
    const char* q = p_;
    while (true) {
        const char* lt = static_cast<const char*>(std::memchr(q, '<', static_cast<std::size_t>(end_ - q)));
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

inline const char* tokenizer::appropriate_end_tag(const char* lt) const noexcept {
    if (end_ - lt < 3 || lt[1] != '/' || !ascii::is_alpha(lt[2]))
        return nullptr;
    const char* q = lt + 2;
    while (q < end_ && ascii::is_alpha(*q))
        ++q;
    if (q >= end_ || !(ascii::is_html_whitespace(*q) || *q == '/' || *q == '>'))
        return nullptr;
    return lookup(lt + 2, q) == builder_.raw_text_tag() ? q : nullptr;
}

inline void tokenizer::raw_text_end(const char* lt, const char* name_end) {
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

inline void tokenizer::script_data() {
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

} // namespace asiocrawl::detail::html
