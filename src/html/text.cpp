#include "text.hpp"

#include "entities.hpp"

#include <cstring>

namespace asiocrawl::detail::html {

namespace {

constexpr std::int32_t replacement_character = 0xFFFD;

// Windows-1252 for the C1 range and two more: what a numeric reference to these stands for.
std::int32_t numeric_replacement(std::int32_t code_point) noexcept {
    static constexpr std::uint16_t c1[32] = {0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                             0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
                                             0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                             0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};
    if (code_point == 0)
        return replacement_character;
    if (code_point == 0x0D)
        return 0x0D;
    if (code_point >= 0x80 && code_point <= 0x9F)
        return c1[code_point - 0x80];
    return -1;
}

// Code points the input stream reports as errors; gumbo replaces them with U+FFFD when they come from the
// input (not from a numeric reference, which keeps them).
bool is_error_code_point(std::int32_t c) noexcept {
    return (c >= 0x1 && c <= 0x8) || c == 0xB || (c >= 0xE && c <= 0x1F) || (c >= 0x7F && c <= 0x9F) ||
           (c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFF) == 0xFFFE || (c & 0xFFFF) == 0xFFFF;
}

int digit_value(char c, bool hex) noexcept {
    if (hex)
        return ascii::hex_value(c);
    return ascii::is_digit(c) ? c - '0' : -1;
}

// Decodes one UTF-8 sequence at p (p < end): the code point and the bytes it takes. A malformed sequence is
// U+FFFD over its longest valid start (at least one byte), as the input stream's decoder does.
std::int32_t decode_utf8(const unsigned char* p, const unsigned char* end, std::size_t& width) noexcept {
    const unsigned char lead = p[0];
    if (lead < 0x80) {
        width = 1;
        return lead;
    }
    std::size_t need;
    unsigned char low = 0x80, high = 0xBF;
    std::int32_t value;
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 1;
        value = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 2;
        value = lead & 0x0F;
        if (lead == 0xE0)
            low = 0xA0;
        else if (lead == 0xED)
            high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 3;
        value = lead & 0x07;
        if (lead == 0xF0)
            low = 0x90;
        else if (lead == 0xF4)
            high = 0x8F;
    } else {
        width = 1;
        return replacement_character;
    }
    std::size_t i = 1;
    for (; i <= need; ++i) {
        if (p + i >= end) {
            width = static_cast<std::size_t>(end - p); // cut short by the end: the rest is one U+FFFD
            return replacement_character;
        }
        const unsigned char c = p[i];
        if (c < low || c > high) {
            width = i;
            return replacement_character;
        }
        low = 0x80;
        high = 0xBF;
        value = (value << 6) | (c & 0x3F);
    }
    width = i;
    return value;
}

} // namespace

bool is_plain_text(std::string_view raw) noexcept {
    for (const char c : raw)
        if (c < 0x20 || c > 0x7E || c == '&')
            return false;
    return true;
}

void append_code_point(std::string& out, std::int32_t c) {
    if (c <= 0x7F) {
        out.push_back(static_cast<char>(c & 0xFF));
    } else if (c <= 0x7FF) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c <= 0xFFFF) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

char_ref consume_char_ref(const char* p, const char* end, char additional_allowed,
                          bool in_attribute) noexcept {
    const char* q = p + 1;
    if (q >= end)
        return {};
    const char next = *q == '\r' ? '\n' : *q;
    if (next == additional_allowed || next == '\t' || next == '\n' || next == '\f' || next == ' ' ||
        next == '<' || next == '&')
        return {};
    if (next == '#') {
        ++q;
        const bool hex = q < end && (*q == 'x' || *q == 'X');
        if (hex)
            ++q;
        if (q >= end || digit_value(*q, hex) < 0)
            return {};
        // gumbo accumulates in an int that wraps: kept as its two's complement value.
        std::uint32_t value = 0;
        for (int digit; q < end && (digit = digit_value(*q, hex)) >= 0; ++q)
            value = value * (hex ? 16u : 10u) + static_cast<std::uint32_t>(digit);
        if (q < end && *q == ';')
            ++q;
        auto code_point = static_cast<std::int32_t>(value);
        if (const std::int32_t replaced = numeric_replacement(code_point); replaced >= 0)
            code_point = replaced;
        else if ((code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF)
            code_point = replacement_character;
        return {static_cast<std::size_t>(q - p), code_point, -1};
    }
    const named_reference named = match_named_reference({q, static_cast<std::size_t>(end - q)});
    if (named.length == 0)
        return {};
    const char* after = q + named.length;
    if (q[named.length - 1] != ';' && in_attribute) {
        const char following = after < end ? *after : '\0';
        if (following == '=' || ascii::is_alnum(following))
            return {};
    }
    return {named.length + 1, static_cast<std::int32_t>(named.first),
            named.second != 0 ? static_cast<std::int32_t>(named.second) : -1};
}

void append_input_text(std::string& out, std::string_view raw) {
    const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
    const auto* end = p + raw.size();
    while (p < end) {
        const unsigned char c = *p;
        if (c >= 0x20 && c < 0x7F) {
            out.push_back(static_cast<char>(c));
            ++p;
            continue;
        }
        if (c == '\r') {
            out.push_back('\n');
            p += (p + 1 < end && p[1] == '\n') ? 2 : 1;
            continue;
        }
        if (c == 0) {
            append_code_point(out, replacement_character);
            ++p;
            continue;
        }
        std::size_t width = 1;
        std::int32_t code_point = decode_utf8(p, end, width);
        if (is_error_code_point(code_point))
            code_point = replacement_character;
        append_code_point(out, code_point);
        p += width;
    }
}

void decode_attribute_value(std::string& out, std::string_view raw, char quote) {
    const std::size_t first = out.size();
    const char* p = raw.data();
    const char* end = p + raw.size();
    while (p < end) {
        const char* amp = static_cast<const char*>(std::memchr(p, '&', static_cast<std::size_t>(end - p)));
        const char* stop = amp != nullptr ? amp : end;
        append_input_text(out, {p, static_cast<std::size_t>(stop - p)});
        if (amp == nullptr)
            break;
        const char_ref ref = consume_char_ref(amp, end, quote, true);
        if (ref.length == 0) {
            out.push_back('&');
            p = amp + 1;
            continue;
        }
        append_code_point(out, ref.first);
        if (ref.second >= 0)
            append_code_point(out, ref.second);
        p = amp + ref.length;
    }
    if (const auto nul = out.find('\0', first); nul != std::string::npos)
        out.resize(nul);
}

} // namespace asiocrawl::detail::html
