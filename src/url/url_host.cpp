// The URL Standard's host parser for special schemes, over a registered name that Boost.URL has already
// delimited: percent-decode, domain to ASCII (UTS #46 through libidn2), forbidden code points, IPv4 number
// forms. What browsers do here decides which server a link reaches, so the crawl's dedup key, its Host
// header and its DNS query must all come from this one form.
#include "url/url_host.hpp"

#include "url/percent.hpp"
#include "util/ascii.hpp"

#include <asiocrawl/error.hpp>

#include <boost/url/parse.hpp>

#include <idn2.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <vector>

namespace asiocrawl::detail {
namespace {

using ascii::hex_value;
using ascii::is_digit;

std::vector<std::string_view> split_labels(std::string_view host) {
    std::vector<std::string_view> labels;
    std::size_t start = 0;
    for (;;) {
        const auto dot = host.find('.', start);
        labels.push_back(host.substr(start, dot == std::string_view::npos ? host.npos : dot - start));
        if (dot == std::string_view::npos)
            return labels;
        start = dot + 1;
    }
}

/// One number of an IPv4 number form; nullopt when it is not one. Saturates at 2^32 (too large anyway).
std::optional<std::uint64_t> parse_ipv4_number(std::string_view text) {
    if (text.empty())
        return std::nullopt;
    int radix = 10;
    if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        radix = 16;
        text.remove_prefix(2);
    } else if (text.size() >= 2 && text[0] == '0') {
        radix = 8;
        text.remove_prefix(1);
    }
    std::uint64_t value = 0;
    for (char c : text) {
        const int digit = radix == 16 ? hex_value(c) : (is_digit(c) ? c - '0' : -1);
        if (digit < 0 || digit >= radix)
            return std::nullopt;
        value = std::min<std::uint64_t>(value * static_cast<unsigned>(radix) + static_cast<unsigned>(digit),
                                        std::uint64_t{1} << 40);
    }
    return value;
}

/// The URL Standard's forbidden domain code points, in the ASCII result of domain to ASCII.
bool is_forbidden_in_domain(char c) noexcept {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f)
        return true;
    switch (c) {
    case '#':
    case '%':
    case '/':
    case ':':
    case '<':
    case '>':
    case '?':
    case '@':
    case '[':
    case '\\':
    case ']':
    case '^':
    case '|':
        return true;
    default:
        return false;
    }
}

/// An ASCII name is only lowercased, "xn--" labels included: browsers take an ASCII label as written, valid
/// Punycode or not (web-platform-tests' toascii.json: "xn--a" stays "xn--a").
bool needs_uts46(std::string_view name) noexcept {
    for (char c : name)
        if (static_cast<unsigned char>(c) >= 0x80)
            return true;
    return false;
}

bool has_punycode_label(std::string_view name) {
    for (auto label : split_labels(name))
        if (label.size() >= 4 && ascii::iequals(label.substr(0, 4), "xn--"))
            return true;
    return false;
}

struct idn2_free_deleter {
    void operator()(char* p) const noexcept { idn2_free(p); }
};

int idn2_lookup(const std::string& name, int flags, std::string& out) {
    char* converted = nullptr;
    const int rc = idn2_lookup_u8(reinterpret_cast<const std::uint8_t*>(name.c_str()),
                                  reinterpret_cast<std::uint8_t**>(&converted), IDN2_NFC_INPUT | flags);
    std::unique_ptr<char, idn2_free_deleter> owned(converted);
    if (rc == IDN2_OK && !converted)
        return IDN2_MALLOC;
    if (rc == IDN2_OK)
        out = ascii::to_lower(std::string_view(converted));
    return rc;
}

/// The four code points that UTS #46 transitional and nontransitional processing treat differently (ß, ς,
/// ZWNJ, ZWJ), as UTF-8.
bool has_deviation_character(std::string_view name) noexcept {
    for (std::string_view deviation : {"\xC3\x9F", "\xCF\x82", "\xE2\x80\x8C", "\xE2\x80\x8D"})
        if (name.find(deviation) != std::string_view::npos)
            return true;
    return false;
}

/// UTS #46 ToASCII of a name without its trailing dot; nullopt when it is not a valid name.
std::optional<std::string> uts46_to_ascii(const std::string& name) {
    // Nontransitional processing (ß stays ß, as in every current browser); no STD3 rules: '_' and other
    // ASCII are allowed, as the URL Standard's domain to ASCII asks with beStrict false.
    std::string out;
    const int rc = idn2_lookup(name, IDN2_NONTRANSITIONAL, out);
    if (rc == IDN2_OK)
        return out;
    // libidn2 also applies IDNA2008's table of disallowed code points, which UTS #46 and browsers do not:
    // "☃.net" and emoji names are valid there. Its transitional mode skips that table and, for a name
    // without deviation characters, maps exactly as nontransitional processing does.
    if (rc == IDN2_DISALLOWED && !has_deviation_character(name) &&
        idn2_lookup(name, IDN2_TRANSITIONAL, out) == IDN2_OK)
        return out;
    return std::nullopt;
}

} // namespace

std::optional<std::uint32_t> parse_ipv4_number_form(std::string_view host) {
    auto parts = split_labels(host);
    if (parts.size() > 1 && parts.back().empty())
        parts.pop_back();
    if (parts.size() > 4)
        return std::nullopt;
    std::vector<std::uint64_t> numbers;
    for (auto part : parts) {
        auto number = parse_ipv4_number(part);
        if (!number)
            return std::nullopt;
        numbers.push_back(*number);
    }
    for (std::size_t i = 0; i + 1 < numbers.size(); ++i)
        if (numbers[i] > 255)
            return std::nullopt;
    const std::uint64_t last_limit = std::uint64_t{1} << (8 * (5 - numbers.size()));
    if (numbers.back() >= last_limit)
        return std::nullopt;
    std::uint64_t address = numbers.back();
    for (std::size_t i = 0; i + 1 < numbers.size(); ++i)
        address += numbers[i] << (8 * (3 - i));
    return static_cast<std::uint32_t>(address);
}

bool ends_in_a_number(std::string_view host) {
    auto labels = split_labels(host);
    if (labels.back().empty()) {
        if (labels.size() == 1)
            return false;
        labels.pop_back();
    }
    const auto last = labels.back();
    if (!last.empty() && last.find_first_not_of("0123456789") == std::string_view::npos)
        return true;
    return parse_ipv4_number(last).has_value();
}

bool starts_like_a_dotted_quad(std::string_view host) noexcept {
    if (host.empty() || !is_digit(host.front()))
        return false;
    // Asked of Boost.URL itself, so that the workaround follows its grammar exactly.
    std::string probe = "http://";
    probe.append(host).append("/");
    const auto parsed = boost::urls::parse_uri(probe);
    return parsed && parsed->host_type() == boost::urls::host_type::ipv4 &&
           parsed->encoded_host().size() < host.size();
}

boost::system::result<std::string> canonical_host_name(std::string_view encoded_name) {
    std::string name = percent_decode(encoded_name);
    std::string ascii_name;
    if (!needs_uts46(name)) {
        ascii_name = ascii::to_lower(name);
    } else {
        const bool trailing_dot = name.size() > 1 && name.back() == '.';
        if (trailing_dot)
            name.pop_back();
        auto converted = uts46_to_ascii(name);
        if (!converted)
            return make_error_code(error::invalid_url);
        ascii_name = std::move(*converted);
        if (trailing_dot)
            ascii_name += '.';
    }
    if (ascii_name.empty())
        return make_error_code(error::invalid_url);
    for (char c : ascii_name)
        if (is_forbidden_in_domain(c))
            return make_error_code(error::invalid_url);
    if (ends_in_a_number(ascii_name)) {
        const auto address = parse_ipv4_number_form(ascii_name);
        if (!address)
            return make_error_code(error::invalid_url);
        return std::to_string(*address >> 24) + "." + std::to_string((*address >> 16) & 0xff) + "." +
               std::to_string((*address >> 8) & 0xff) + "." + std::to_string(*address & 0xff);
    }
    return ascii_name;
}

std::string host_for_url(std::string_view ascii_host) {
    static constexpr char hex[] = "0123456789ABCDEF";
    const bool escape_first = starts_like_a_dotted_quad(ascii_host);
    std::string out;
    out.reserve(ascii_host.size() + 2);
    for (std::size_t i = 0; i < ascii_host.size(); ++i) {
        const char c = ascii_host[i];
        if (is_unreserved_or_sub_delim(c) && !(i == 0 && escape_first)) {
            out += c;
            continue;
        }
        const auto byte = static_cast<unsigned char>(c);
        out += '%';
        out += hex[byte >> 4];
        out += hex[byte & 0x0f];
    }
    return out;
}

std::string ipv6_text(const std::array<unsigned char, 16>& bytes) {
    std::array<unsigned, 8> pieces{};
    for (std::size_t i = 0; i < 8; ++i)
        pieces[i] = bytes[2 * i] * 256u + bytes[2 * i + 1];
    // RFC 5952 4.2: "::" replaces the first longest run of two or more zero pieces, never a single one.
    std::size_t best_start = 8, best_length = 1;
    for (std::size_t i = 0; i < 8;) {
        if (pieces[i] != 0) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < 8 && pieces[end] == 0)
            ++end;
        if (end - i > best_length) {
            best_start = i;
            best_length = end - i;
        }
        i = end;
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < 8; ++i) {
        if (i == best_start) {
            out += i == 0 ? "::" : ":";
            i += best_length - 1;
            continue;
        }
        std::string piece;
        for (unsigned v = pieces[i]; piece.empty() || v != 0; v >>= 4)
            piece.insert(piece.begin(), hex[v & 15]);
        out += piece;
        if (i != 7)
            out += ':';
    }
    return out;
}

std::string host_for_wire(std::string_view url_host) {
    if (url_host.find('%') == std::string_view::npos)
        return std::string(url_host);
    return percent_decode(url_host);
}

std::string unicode_host(std::string_view ascii_host) {
    if (!has_punycode_label(ascii_host))
        return std::string(ascii_host);
    char* converted = nullptr;
    const std::string input(ascii_host);
    const int rc = idn2_to_unicode_8z8z(input.c_str(), &converted, 0);
    std::unique_ptr<char, idn2_free_deleter> owned(converted);
    if (rc != IDN2_OK || !converted)
        return input;
    // Shown only when it converts back to the same name: an invalid "xn--" label may decode to anything.
    std::string unicode(converted);
    if (uts46_to_ascii(unicode) != input)
        return input;
    return unicode;
}

std::string with_unicode_hosts(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (;;) {
        const auto scheme_end = text.find("://");
        if (scheme_end == std::string_view::npos)
            break;
        const std::size_t host_begin = scheme_end + 3;
        std::size_t host_end = host_begin;
        while (host_end < text.size() &&
               std::string_view("/?#:@ \t\"'<>[]()").find(text[host_end]) == std::string_view::npos)
            ++host_end;
        out.append(text.substr(0, host_begin));
        out.append(unicode_host(text.substr(host_begin, host_end - host_begin)));
        text.remove_prefix(host_end);
    }
    out.append(text);
    return out;
}

} // namespace asiocrawl::detail
