// url() and @import references in CSS, following the tokenizer of CSS Syntax Module Level 3 (§4) as far as it
// decides what is a URL: comments, strings (with escapes and line continuations), identifiers and numbers are
// consumed whole, so that "myurl(", "5url(", "#url(" or "url(" inside a comment or a string are not
// references.
#include "html/links.hpp"

#include "util/ascii.hpp"

#include <cstdint>

namespace asiocrawl {

namespace {

namespace ascii = detail::ascii;

class css_scanner {
public:
    explicit css_scanner(std::string_view css)
        : css_(css) {}

    std::vector<css_reference> run() {
        while (i_ < css_.size()) {
            const char c = css_[i_];
            if (c == '/' && peek(1) == '*') {
                const std::size_t close = css_.find("*/", i_ + 2);
                i_ = close == std::string_view::npos ? css_.size() : close + 2;
                continue; // comments keep an @import waiting for its URL
            }
            if (is_whitespace(c)) {
                ++i_;
                continue;
            }
            if (c == '"' || c == '\'') {
                ++i_;
                std::string value;
                const bool good = consume_string(c, value);
                if (import_pending_ && good)
                    add(std::move(value), true);
                import_pending_ = false;
                continue;
            }
            if (c == '@' && starts_identifier(i_ + 1)) {
                ++i_;
                const std::string name = consume_name();
                import_pending_ = ascii::iequals(name, "import");
                continue;
            }
            if (starts_number(i_)) {
                consume_numeric();
                import_pending_ = false;
                continue;
            }
            if (starts_identifier(i_)) {
                const std::string name = consume_name();
                if (peek(0) == '(') {
                    ++i_;
                    if (ascii::iequals(name, "url"))
                        url_function();
                }
                import_pending_ = false;
                continue;
            }
            if (c == '#' && (is_name_char(peek(1)) || starts_escape(i_ + 1))) {
                ++i_;
                (void)consume_name();
                import_pending_ = false;
                continue;
            }
            if (c == '\\') { // an invalid escape: a delimiter
                ++i_;
                import_pending_ = false;
                continue;
            }
            ++i_;
            import_pending_ = false;
        }
        return std::move(found_);
    }

private:
    char peek(std::size_t ahead) const noexcept { return i_ + ahead < css_.size() ? css_[i_ + ahead] : '\0'; }
    static bool is_newline(char c) noexcept { return c == '\n' || c == '\r' || c == '\f'; }
    // CSS's whitespace (newline, tab, space) is HTML's set.
    static bool is_whitespace(char c) noexcept { return ascii::is_html_whitespace(c); }
    static bool is_name_start(char c) noexcept {
        return ascii::is_alpha(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
    }
    static bool is_name_char(char c) noexcept { return is_name_start(c) || ascii::is_digit(c) || c == '-'; }

    bool starts_escape(std::size_t at) const noexcept {
        return at < css_.size() && css_[at] == '\\' && (at + 1 >= css_.size() || !is_newline(css_[at + 1]));
    }
    bool starts_identifier(std::size_t at) const noexcept {
        if (at >= css_.size())
            return false;
        const char c = css_[at];
        if (c == '-') {
            const char next = at + 1 < css_.size() ? css_[at + 1] : '\0';
            return is_name_start(next) || next == '-' || starts_escape(at + 1);
        }
        return is_name_start(c) || starts_escape(at);
    }
    bool starts_number(std::size_t at) const noexcept {
        const auto at_char = [&](std::size_t k) { return k < css_.size() ? css_[k] : '\0'; };
        char c = at_char(at);
        if (c == '+' || c == '-') {
            ++at;
            c = at_char(at);
        }
        return ascii::is_digit(c) || (c == '.' && ascii::is_digit(at_char(at + 1)));
    }

    static void append_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }

    /// After a '\\' that starts a valid escape: appends what it stands for.
    void consume_escape(std::string& out) {
        if (i_ >= css_.size()) {
            append_utf8(out, 0xFFFD);
            return;
        }
        if (ascii::is_hex_digit(css_[i_])) {
            std::uint32_t cp = 0;
            for (int digits = 0; digits < 6 && i_ < css_.size() && ascii::is_hex_digit(css_[i_]);
                 ++digits, ++i_) {
                const char h = css_[i_];
                cp = cp * 16 + static_cast<std::uint32_t>(ascii::hex_value(h));
            }
            if (i_ < css_.size() && is_whitespace(css_[i_]))
                i_ += (css_[i_] == '\r' && peek(1) == '\n') ? 2 : 1;
            if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                cp = 0xFFFD;
            append_utf8(out, cp);
            return;
        }
        out.push_back(css_[i_++]); // a byte of UTF-8 at a time: the rest follows as ordinary characters
    }

    std::string consume_name() {
        std::string name;
        while (i_ < css_.size()) {
            const char c = css_[i_];
            if (is_name_char(c)) {
                name.push_back(c);
                ++i_;
            } else if (starts_escape(i_)) {
                ++i_;
                consume_escape(name);
            } else {
                break;
            }
        }
        return name;
    }

    void consume_numeric() {
        if (css_[i_] == '+' || css_[i_] == '-')
            ++i_;
        while (i_ < css_.size() && ascii::is_digit(css_[i_]))
            ++i_;
        if (peek(0) == '.' && ascii::is_digit(peek(1))) {
            i_ += 2;
            while (i_ < css_.size() && ascii::is_digit(css_[i_]))
                ++i_;
        }
        if ((peek(0) == 'e' || peek(0) == 'E') &&
            (ascii::is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && ascii::is_digit(peek(2))))) {
            i_ += 2;
            while (i_ < css_.size() && ascii::is_digit(css_[i_]))
                ++i_;
        }
        if (starts_identifier(i_))
            (void)consume_name(); // a dimension's unit, "5url" included
        else if (peek(0) == '%')
            ++i_;
    }

    /// After the opening quote; false for a bad string (cut by a newline).
    bool consume_string(char quote, std::string& value) {
        while (i_ < css_.size()) {
            const char c = css_[i_];
            if (c == quote) {
                ++i_;
                return true;
            }
            if (is_newline(c))
                return false; // the newline is read again as whitespace
            if (c == '\\') {
                ++i_;
                if (i_ >= css_.size())
                    return true;
                if (is_newline(css_[i_])) {
                    i_ += (css_[i_] == '\r' && peek(1) == '\n') ? 2 : 1;
                    continue;
                }
                consume_escape(value);
                continue;
            }
            if (c == '\0')
                value += "\xEF\xBF\xBD";
            else
                value.push_back(c);
            ++i_;
        }
        return true;
    }

    /// After "url(": a quoted argument makes it a function whose string is the URL; otherwise a url token.
    void url_function() {
        const bool import = import_pending_;
        while (i_ < css_.size() && is_whitespace(css_[i_]))
            ++i_;
        if (i_ < css_.size() && (css_[i_] == '"' || css_[i_] == '\'')) {
            const char quote = css_[i_++];
            std::string value;
            if (consume_string(quote, value))
                add(std::move(value), import);
            return; // the rest of the function is read as ordinary tokens
        }
        std::string value;
        while (i_ < css_.size()) {
            const char c = css_[i_];
            if (c == ')') {
                ++i_;
                add(std::move(value), import);
                return;
            }
            if (is_whitespace(c)) {
                while (i_ < css_.size() && is_whitespace(css_[i_]))
                    ++i_;
                if (i_ >= css_.size() || css_[i_] == ')') {
                    if (i_ < css_.size())
                        ++i_;
                    add(std::move(value), import);
                    return;
                }
                return bad_url();
            }
            if (c == '"' || c == '\'' || c == '(' ||
                (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\0') || c == 0x7F)
                return bad_url();
            if (c == '\\') {
                if (!starts_escape(i_))
                    return bad_url();
                ++i_;
                consume_escape(value);
                continue;
            }
            if (c == '\0')
                value += "\xEF\xBF\xBD";
            else
                value.push_back(c);
            ++i_;
        }
        add(std::move(value), import); // cut by the end of the stylesheet: still a URL
    }

    void bad_url() {
        while (i_ < css_.size()) {
            const char c = css_[i_];
            if (c == ')') {
                ++i_;
                return;
            }
            if (starts_escape(i_)) {
                i_ += 2;
                continue;
            }
            ++i_;
        }
    }

    void add(std::string url, bool import) {
        if (!url.empty())
            found_.push_back({std::move(url), import});
    }

    std::string_view css_;
    std::size_t i_ = 0;
    bool import_pending_ = false;
    std::vector<css_reference> found_;
};

} // namespace

std::vector<css_reference> extract_css_references(std::string_view css) {
    return css_scanner(css).run();
}

} // namespace asiocrawl
