// Hosts of http(s) URLs as browsers parse them (the WHATWG URL Standard's host parser): internationalized
// names become their ASCII (punycode) form through UTS #46 (libidn2), IPv4 addresses written as numbers in
// any of the forms browsers accept become dotted quads, and names are checked for the code points a domain
// may not hold. Used by url.cpp's normalization; sans-io.
#pragma once

#include "util/ascii.hpp"

#include <boost/system/result.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// RFC 3986's unreserved characters and sub-delims: what a reg-name takes raw, and (with ':', '@', '/' and
/// '?') a path or a query.
constexpr bool is_unreserved_or_sub_delim(char c) noexcept {
    if (ascii::is_alpha(c) || ascii::is_digit(c))
        return true;
    switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
        return true;
    default:
        return false;
    }
}

/// The canonical ASCII form of a host written as a registered name (percent-encoded, as in a URL): the
/// percent-decoded UTF-8 name mapped and converted with UTS #46 (nontransitional, no STD3 rules, no DNS
/// length check, as the URL Standard asks), lowercased; or, when its last label is a number, the IPv4
/// address it denotes as a dotted quad ("0x7f.1" and "2130706433" are "127.0.0.1"). error::invalid_url for
/// a name UTS #46 rejects, one holding a forbidden code point, an invalid IPv4 number form, or an empty one.
/// A trailing dot is kept (the caller decides about it).
boost::system::result<std::string> canonical_host_name(std::string_view encoded_name);

/// The URL Standard's IPv4 parser: 1 to 4 dot-separated numbers, each decimal, octal (leading 0) or
/// hexadecimal (0x), the last filling the remaining bytes. nullopt when `host` is not such an address.
std::optional<std::uint32_t> parse_ipv4_number_form(std::string_view host);

/// True when the URL Standard treats `host` as an IPv4 address: its last label (a trailing empty one
/// aside) is all digits or a 0x number. Such a host must then parse as one.
bool ends_in_a_number(std::string_view host);

/// "1.2.3.4.example" and "1.2.3.4a" begin with a dotted quad; Boost.URL 1.81 reads that quad as an IPv4 host
/// and the rest as a path. True when `host` (as written, before any decoding) would be split so.
bool starts_like_a_dotted_quad(std::string_view host) noexcept;

/// The host as written in a canonical URL: characters a registered name may not hold raw are
/// percent-encoded, and the first character too when the name starts like a dotted quad (see above), so
/// that the URL parses back to the same host.
std::string host_for_url(std::string_view ascii_host);

/// An IPv6 address as text (RFC 5952, as the URL Standard serializes it): lowercase hex, no leading zeros,
/// the first longest run of two or more zero pieces as "::" (Boost.URL 1.81 also compresses a single one).
std::string ipv6_text(const std::array<unsigned char, 16>& bytes);

/// A host taken from a canonical URL as it goes on the wire (Host header, DNS, SNI, certificate check):
/// percent-decoded. IP literals and plain names come back unchanged.
std::string host_for_wire(std::string_view url_host);

/// The Unicode form of an ASCII host for people to read ("xn--fa-hia.example" -> "faß.example"); the host
/// itself when it holds no punycode label or does not convert.
std::string unicode_host(std::string_view ascii_host);

/// `text` (a log line) with the host of every http(s) URL in it shown in Unicode where it holds punycode.
std::string with_unicode_hosts(std::string_view text);

} // namespace asiocrawl::detail
