// ASCII character helpers shared by the sans-io parsers. Locale-independent on purpose: URLs, HTTP headers
// and HTML attribute syntax are defined over ASCII, whatever the user's locale.
#pragma once

#include <string>
#include <string_view>

namespace asiocrawl::detail::ascii {

constexpr bool is_alpha(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

constexpr bool is_digit(char c) noexcept {
    return c >= '0' && c <= '9';
}

constexpr bool is_alnum(char c) noexcept {
    return is_alpha(c) || is_digit(c);
}

constexpr bool is_hex_digit(char c) noexcept {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// The value of a hex digit, or -1 for any other character.
constexpr int hex_value(char c) noexcept {
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

constexpr char to_lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string to_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = to_lower(c);
    return out;
}

constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (to_lower(a[i]) != to_lower(b[i]))
            return false;
    return true;
}

// Whitespace sets. They differ on purpose: each grammar names its own, and merging two changes what a parser
// accepts.

/// HTML's (and the Infra standard's) "ASCII whitespace": TAB, LF, FF, CR, SPACE. No vertical tab.
inline constexpr std::string_view html_whitespace = "\t\n\f\r ";
/// HTTP's optional whitespace (RFC 9110 5.6.3): SP and HTAB.
inline constexpr std::string_view http_whitespace = " \t";
/// What C's isspace() accepts in the "C" locale: SP, TAB, LF, VT, FF, CR.
inline constexpr std::string_view c_whitespace = " \t\n\v\f\r";

constexpr bool is_html_whitespace(char c) noexcept {
    return c == ' ' || c == '\n' || c == '\t' || c == '\f' || c == '\r';
}

/// True when `text` is empty or only HTML's ASCII whitespace.
constexpr bool is_html_blank(std::string_view text) noexcept {
    return text.find_first_not_of(html_whitespace) == std::string_view::npos;
}

/// `text` without leading and trailing characters from `characters`.
constexpr std::string_view trim(std::string_view text, std::string_view characters) noexcept {
    const auto first = text.find_first_not_of(characters);
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(characters) - first + 1);
}

/// `text` without leading and trailing HTML whitespace.
constexpr std::string_view trim_html_whitespace(std::string_view text) noexcept {
    return trim(text, html_whitespace);
}

/// The next token of an HTML set of space-separated tokens (a rel attribute, say), taken off the front of
/// `rest`; empty when none is left.
constexpr std::string_view next_html_token(std::string_view& rest) noexcept {
    std::size_t i = 0;
    while (i < rest.size() && is_html_whitespace(rest[i]))
        ++i;
    const std::size_t start = i;
    while (i < rest.size() && !is_html_whitespace(rest[i]))
        ++i;
    const std::string_view token = rest.substr(start, i - start);
    rest.remove_prefix(i);
    return token;
}

/// Whether an HTML set of space-separated tokens holds `word`, ASCII case-insensitively (rel keywords).
constexpr bool has_html_token(std::string_view tokens, std::string_view word) noexcept {
    for (auto token = next_html_token(tokens); !token.empty(); token = next_html_token(tokens))
        if (iequals(token, word))
            return true;
    return false;
}

/// `text` without leading and trailing characters for which `pred` holds.
template <class Predicate>
constexpr std::string_view trim_if(std::string_view text, Predicate pred) noexcept {
    while (!text.empty() && pred(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && pred(text.back()))
        text.remove_suffix(1);
    return text;
}

} // namespace asiocrawl::detail::ascii
