// URL cleaning, resolution and normalization.
//
// Boost.URL is used to parse and to hold URLs, but resolution (RFC 3986 §5.2) and normalization (§6.2.2) are
// done here on the encoded components because Boost.URL 1.81 gets both wrong in ways that change the dedup
// key: it keeps ".." above the root (boostorg/url#808), its normalize_path() decodes %2F into a path
// separator (and resolve() calls normalize_path()), and resolve() can leave NUL bytes in the decoded path.
#include "url/url.hpp"

#include <asiocrawl/error.hpp>

#include "url/url_host.hpp"
#include "util/ascii.hpp"

#include <boost/url/parse.hpp>

#include <charconv>
#include <cstdint>
#include <optional>

namespace asiocrawl {
namespace {

namespace urls = boost::urls;

constexpr char hex_digits[] = "0123456789ABCDEF";

using detail::ascii::is_alpha;
using detail::ascii::is_digit;
using detail::ascii::is_hex_digit;

using detail::ascii::hex_value;

bool is_unreserved(char c) noexcept {
    return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

void append_percent_encoded(std::string& out, char c) {
    const auto byte = static_cast<unsigned char>(c);
    out += '%';
    out += hex_digits[byte >> 4];
    out += hex_digits[byte & 0x0F];
}

bool starts_with_percent_triplet(std::string_view s) noexcept {
    return s.size() >= 3 && s[0] == '%' && is_hex_digit(s[1]) && is_hex_digit(s[2]);
}

// Bytes that browsers strip from both ends of an href: all C0 controls and the space.
bool is_c0_control_or_space(char c) noexcept {
    return static_cast<unsigned char>(c) <= 0x20;
}

std::string_view trim_c0_controls_and_spaces(std::string_view s) noexcept {
    return detail::ascii::trim_if(s, is_c0_control_or_space);
}

// Characters RFC 3986 never allows raw anywhere in a URI reference.
bool must_be_percent_encoded(char c) noexcept {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7F) {
        return true;
    }
    switch (c) {
    case '"':
    case '<':
    case '>':
    case '\\':
    case '^':
    case '`':
    case '{':
    case '|':
    case '}':
        return true;
    default:
        return false;
    }
}

// Browsers ignore tabs and newlines inside a URL (an href wrapped over several lines), and treat a backslash
// as a slash in the authority and path of http(s) URLs.
std::string strip_newlines_and_fix_backslashes(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    bool in_query_or_fragment = false;
    for (char c : s) {
        if (c == '\t' || c == '\n' || c == '\r') {
            continue;
        }
        if (c == '?' || c == '#') {
            in_query_or_fragment = true;
        }
        out += (c == '\\' && !in_query_or_fragment) ? '/' : c;
    }
    return out;
}

bool is_scheme(std::string_view s) noexcept {
    if (s.empty() || !is_alpha(s.front())) {
        return false;
    }
    for (char c : s) {
        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') {
            return false;
        }
    }
    return true;
}

// The position of the first ':' that ends a valid scheme, if the reference starts with "scheme:".
std::optional<std::size_t> scheme_end(std::string_view reference) noexcept {
    const auto colon = reference.find(':');
    if (colon == std::string_view::npos || !is_scheme(reference.substr(0, colon))) {
        return std::nullopt;
    }
    const auto first_delimiter = reference.find_first_of("/?#");
    if (first_delimiter != std::string_view::npos && first_delimiter < colon) {
        return std::nullopt;
    }
    return colon;
}

struct authority_range {
    std::size_t begin = 0;
    std::size_t end = 0;
};

// Where the authority of a reference lies ("//" after an optional scheme), so that brackets (IPv6 literals)
// and the userinfo's '@' are treated as delimiters there only.
std::optional<authority_range> find_authority(std::string_view reference) noexcept {
    const auto colon = scheme_end(reference);
    const std::size_t after_scheme = colon ? *colon + 1 : 0;
    if (reference.substr(after_scheme, 2) != "//") {
        return std::nullopt;
    }
    const std::size_t begin = after_scheme + 2;
    const auto end = reference.find_first_of("/?#", begin);
    return authority_range{begin, end == std::string_view::npos ? reference.size() : end};
}

// Where the host of the authority starts when it begins like a dotted quad but goes on ("1.2.3.4.nip.io"):
// Boost.URL 1.81 would read the quad as an IPv4 host and the rest as a path, so its first character is
// percent-encoded to make it a registered name (normalization decodes it and parses the host as browsers
// do). npos otherwise.
std::size_t dotted_quad_prefixed_host_begin(std::string_view s,
                                            const std::optional<authority_range>& authority,
                                            std::size_t last_at) {
    if (!authority)
        return std::string_view::npos;
    const std::size_t begin =
        last_at != std::string_view::npos && last_at >= authority->begin ? last_at + 1 : authority->begin;
    const auto host = s.substr(begin, authority->end - begin);
    if (!detail::starts_like_a_dotted_quad(host.substr(0, host.find(':'))))
        return std::string_view::npos;
    return begin;
}

// Percent-encodes what an RFC 3986 parser would reject, keeping every delimiter that gives the reference its
// structure.
std::string percent_encode_invalid_characters(std::string_view s) {
    const auto authority = find_authority(s);
    const auto last_at =
        authority ? s.substr(0, authority->end).rfind('@') : std::string_view::npos; // userinfo ends here
    const auto host_begin = dotted_quad_prefixed_host_begin(s, authority, last_at);
    std::string out;
    out.reserve(s.size() + s.size() / 4);
    bool seen_fragment = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool in_authority = authority && i >= authority->begin && i < authority->end;
        if (i == host_begin) {
            append_percent_encoded(out, c);
        } else if (c == '%') {
            if (starts_with_percent_triplet(s.substr(i))) {
                out += c;
            } else {
                out += "%25";
            }
        } else if (c == '#') {
            if (seen_fragment) {
                out += "%23";
            } else {
                seen_fragment = true;
                out += c;
            }
        } else if ((c == '[' || c == ']') &&
                   (!in_authority || (last_at != std::string_view::npos && i < last_at))) {
            // Brackets delimit an IPv6 host and nothing else: in a path, query or userinfo they are data.
            append_percent_encoded(out, c);
        } else if (c == '@' && in_authority && last_at != std::string_view::npos && i < last_at) {
            // Browsers take the last '@' as the end of the userinfo: "http://a@b@c/" is host c.
            append_percent_encoded(out, c);
        } else if (must_be_percent_encoded(c)) {
            append_percent_encoded(out, c);
        } else {
            out += c;
        }
    }
    return out;
}

// A relative reference whose first segment holds a ':' but does not start with a valid scheme ("1a:b") is a
// path to browsers; RFC 3986 requires it to be written "./1a:b", which resolves to the same URL.
std::string protect_colon_in_first_segment(std::string reference) {
    if (reference.empty() || reference.front() == '/' || scheme_end(reference)) {
        return reference;
    }
    const auto colon = reference.find(':');
    const auto first_delimiter = reference.find_first_of("/?#");
    if (colon != std::string::npos && colon < first_delimiter) {
        reference.insert(0, "./");
    }
    return reference;
}

// Decodes %XX triplets that stand for unreserved characters and uppercases the hex digits of the others
// (RFC 3986 §6.2.2.1 and §6.2.2.2). Reserved characters stay encoded: %2F is not a path separator.
std::string normalize_percent_encoding(std::string_view encoded) {
    std::string out;
    out.reserve(encoded.size());
    for (std::size_t i = 0; i < encoded.size(); ++i) {
        if (!starts_with_percent_triplet(encoded.substr(i))) {
            out += encoded[i];
            continue;
        }
        const auto decoded = static_cast<char>(hex_value(encoded[i + 1]) * 16 + hex_value(encoded[i + 2]));
        if (is_unreserved(decoded)) {
            out += decoded;
        } else {
            append_percent_encoded(out, decoded);
        }
        i += 2;
    }
    return out;
}

bool is_special_scheme(std::string_view scheme) noexcept {
    return detail::ascii::iequals(scheme, "http") || detail::ascii::iequals(scheme, "https");
}

std::string_view without_leading_slashes(std::string_view s) noexcept {
    return s.substr(std::min(s.find_first_not_of('/'), s.size()));
}

// Browsers read any number of slashes (none included) after "http:" as the start of the authority, and a
// reference "http:x" against an http base as relative (the URL Standard's special-scheme states, RFC 3986's
// "non-strict" reading). RFC 3986 would make "http:/x" a host-less URL and "///x" an empty host: links
// browsers follow, lost. Backslashes were already turned into slashes by clean_reference().
std::string repair_special_slashes(urls::url_view base, std::string reference) {
    if (const auto colon = scheme_end(reference)) {
        const std::string_view scheme = std::string_view(reference).substr(0, *colon);
        if (!is_special_scheme(scheme)) {
            return reference;
        }
        const std::string_view rest = std::string_view(reference).substr(*colon + 1);
        if (!rest.starts_with("//") && detail::ascii::iequals(base.scheme(), scheme)) {
            return protect_colon_in_first_segment(std::string(rest));
        }
        if (rest.starts_with("//") && !rest.starts_with("///")) {
            return reference;
        }
        std::string repaired(scheme);
        repaired += "://";
        repaired += without_leading_slashes(rest);
        return clean_reference(repaired); // the authority it now has may need its host protected
    }
    if (reference.starts_with("///") && is_special_scheme(base.scheme())) {
        std::string repaired = "//";
        repaired += without_leading_slashes(reference);
        return clean_reference(repaired);
    }
    return reference;
}

// RFC 3986 §5.2.3.
std::string merge_paths(urls::url_view base, std::string_view reference_path) {
    const auto base_path = base.encoded_path();
    if (base.has_authority() && base_path.empty()) {
        // Appended rather than "/" + string: g++ 12 -O3 warns falsely (-Wrestrict) on that form.
        std::string merged = "/";
        merged.append(reference_path);
        return merged;
    }
    const auto last_slash = base_path.rfind('/');
    if (last_slash == std::string_view::npos) {
        return std::string(reference_path);
    }
    std::string merged(base_path.substr(0, last_slash + 1));
    merged += reference_path;
    return merged;
}

// The components of a URI as RFC 3986 §5.2.2 computes them; an unset optional is an undefined component.
struct uri_components {
    std::string scheme;
    std::optional<std::string> authority;
    std::string path;
    std::optional<std::string> query;
    std::optional<std::string> fragment;
};

std::optional<std::string> encoded_query_of(urls::url_view u) {
    return u.has_query() ? std::optional<std::string>(u.encoded_query()) : std::nullopt;
}

std::optional<std::string> encoded_authority_of(urls::url_view u) {
    return u.has_authority() ? std::optional<std::string>(u.encoded_authority()) : std::nullopt;
}

// RFC 3986 §5.2.2, strict (a reference with a scheme is taken as absolute, even "http:g").
uri_components transform_reference(urls::url_view base, urls::url_view reference) {
    uri_components target;
    if (reference.has_scheme()) {
        target.scheme = reference.scheme();
        target.authority = encoded_authority_of(reference);
        target.path = remove_dot_segments(reference.encoded_path());
        target.query = encoded_query_of(reference);
    } else {
        target.scheme = base.scheme();
        if (reference.has_authority()) {
            target.authority = encoded_authority_of(reference);
            target.path = remove_dot_segments(reference.encoded_path());
            target.query = encoded_query_of(reference);
        } else {
            target.authority = encoded_authority_of(base);
            if (reference.encoded_path().empty()) {
                target.path = base.encoded_path();
                target.query = reference.has_query() ? encoded_query_of(reference) : encoded_query_of(base);
            } else {
                target.path = reference.is_path_absolute()
                                  ? remove_dot_segments(reference.encoded_path())
                                  : remove_dot_segments(merge_paths(base, reference.encoded_path()));
                target.query = encoded_query_of(reference);
            }
        }
    }
    if (reference.has_fragment()) {
        target.fragment = std::string(reference.encoded_fragment());
    }
    return target;
}

// RFC 3986 §5.3.
std::string recompose(const uri_components& parts) {
    std::string out = parts.scheme + ":";
    if (parts.authority) {
        out += "//";
        out += *parts.authority;
    } else if (parts.path.starts_with("//")) {
        // Without an authority a path starting with "//" would be read back as one.
        out += "/.";
    }
    out += parts.path;
    if (parts.query) {
        out += '?';
        out += *parts.query;
    }
    if (parts.fragment) {
        out += '#';
        out += *parts.fragment;
    }
    return out;
}

// Boost.URL 1.81 accepts "http://h:port/" as host "h", an empty port and the path "port/": RFC 3986 requires
// the path after an authority to be empty or to start with '/', so such a parse is a malformed authority.
bool has_well_formed_path(urls::url_view u) noexcept {
    const auto path = u.encoded_path();
    return !u.has_authority() || path.empty() || path.starts_with('/');
}

boost::system::result<urls::url> parse_absolute(std::string_view text) {
    auto parsed = urls::parse_uri(text);
    if (!parsed || !has_well_formed_path(*parsed)) {
        return make_error_code(error::invalid_url);
    }
    return urls::url(*parsed);
}

std::optional<std::uint16_t> default_port(std::string_view lowercase_scheme) noexcept {
    if (lowercase_scheme == "http") {
        return 80;
    }
    if (lowercase_scheme == "https") {
        return 443;
    }
    return std::nullopt;
}

// The port to write in the normalized URL: empty when it is absent, empty or the scheme's default.
boost::system::result<std::string> normalized_port(urls::url_view u, std::uint16_t scheme_default) {
    const auto port = u.port();
    if (port.empty()) {
        return std::string();
    }
    // Parsed here because Boost.URL 1.81's port_number() wraps values above 65535 instead of failing.
    std::uint32_t number = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (ec != std::errc() || end != port.data() + port.size() || number > 65535) {
        return make_error_code(error::invalid_url);
    }
    if (number == scheme_default) {
        return std::string();
    }
    return std::to_string(number);
}

boost::system::result<std::string> normalized_host(urls::url_view u) {
    std::string host;
    switch (u.host_type()) {
    case urls::host_type::name: {
        // As browsers parse it: IDNA to punycode, IPv4 number forms to a dotted quad.
        auto parsed = detail::canonical_host_name(u.encoded_host());
        if (!parsed) {
            return parsed.error();
        }
        host = std::move(*parsed);
        if (host.ends_with('.')) {
            host.pop_back();
        }
        // "h.." would become "h." here and "h" on a second pass: the canonical form must be a fixed point.
        if (host.ends_with('.')) {
            host.clear();
        }
        host = detail::host_for_url(host);
        break;
    }
    case urls::host_type::ipv6:
        host = "[";
        host += detail::ipv6_text(u.host_ipv6_address().to_bytes());
        host += ']';
        break;
    case urls::host_type::ipv4:
    case urls::host_type::ipvfuture:
        host = detail::ascii::to_lower(u.encoded_host());
        break;
    case urls::host_type::none:
        break;
    }
    if (host.empty()) {
        return make_error_code(error::invalid_url);
    }
    return host;
}

// Browsers percent-encode ' in the query of http(s) URLs (the URL Standard's special-query set): the server
// must see the bytes a browser would send.
std::string encode_apostrophes(std::string query) {
    for (auto at = query.find('\''); at != std::string::npos; at = query.find('\'', at))
        query.replace(at, 1, "%27");
    return query;
}

std::string normalized_path(urls::url_view u) {
    std::string path = remove_dot_segments(normalize_percent_encoding(u.encoded_path()));
    return path.empty() ? "/" : path;
}

// RFC 3986 §5.2.4 remove_dot_segments of `path`, appended to `output` (what is already there stays: a
// segment is never dropped below it). Step by step; "input" shrinks from the front, a replaced prefix becomes
// a literal "/".
void append_without_dot_segments(std::string& output, std::string_view path) {
    std::string_view input = path;
    const std::size_t floor = output.size();
    const auto drop_last_output_segment = [&output, floor] {
        const auto last_slash = output.rfind('/');
        output.resize(last_slash == std::string::npos || last_slash < floor ? floor : last_slash);
    };
    while (!input.empty()) {
        if (input.starts_with("../")) {
            input.remove_prefix(3);
        } else if (input.starts_with("./")) {
            input.remove_prefix(2);
        } else if (input.starts_with("/./")) {
            input.remove_prefix(2);
        } else if (input == "/.") {
            input = "/";
        } else if (input.starts_with("/../")) {
            input.remove_prefix(3);
            drop_last_output_segment();
        } else if (input == "/..") {
            input = "/";
            drop_last_output_segment();
        } else if (input == "." || input == "..") {
            input = {};
        } else {
            const auto segment_end = input.find('/', 1);
            const auto segment = input.substr(0, segment_end);
            output += segment;
            input.remove_prefix(segment.size());
        }
    }
}

// What reference_resolver's one pass takes before the fragment: characters RFC 3986 allows raw in a path or
// query, which clean_reference() leaves as they are ('%' aside: its triplets need normalizing).
bool is_plain_reference_character(char c) noexcept {
    return detail::is_unreserved_or_sub_delim(c) || c == ':' || c == '@' || c == '/' || c == '?';
}

// Four decimal octets as RFC 3986's IPv4address has them (no leading zero, none above 255): Boost.URL reads
// such a host as an IPv4 address, which normalization keeps as written.
bool is_dotted_quad(std::string_view host) noexcept {
    int octets = 0;
    std::size_t i = 0;
    while (i <= host.size()) {
        const std::size_t end = std::min(host.find('.', i), host.size());
        const std::string_view octet = host.substr(i, end - i);
        if (octet.empty() || octet.size() > 3 || (octet.size() > 1 && octet.front() == '0'))
            return false;
        unsigned value = 0;
        for (const char c : octet) {
            if (!is_digit(c))
                return false;
            value = value * 10 + static_cast<unsigned>(c - '0');
        }
        if (value > 255)
            return false;
        ++octets;
        i = end + 1;
    }
    return octets == 4;
}

// Appends "scheme://host[:port]" in canonical form for `absolute`, which starts "http:" or "https:"
// (any case) and has no query or fragment, when its authority is a plain one: an ASCII host name of letters,
// digits, '-' and '.' (or a dotted quad), and a port of digits. `path_begin` is where its path starts. False,
// with `out` unspecified, for anything else: userinfo, IP literals, IDNA, IPv4 number forms, percent-encoded
// or unusual host characters, a missing or repeated "//", an out-of-range port.
bool append_plain_origin(std::string& out, std::string_view absolute, std::size_t& path_begin) {
    const std::size_t colon = absolute.find(':');
    const std::string_view scheme = absolute.substr(0, colon);
    const bool https = detail::ascii::iequals(scheme, "https");
    if (!https && !detail::ascii::iequals(scheme, "http"))
        return false;
    const std::string_view rest = absolute.substr(colon + 1);
    if (!rest.starts_with("//") || rest.starts_with("///"))
        return false;
    const std::size_t authority_end = std::min(rest.find('/', 2), rest.size());
    const std::string_view authority = rest.substr(2, authority_end - 2);
    path_begin = colon + 1 + authority_end;
    const std::size_t port_colon = authority.find(':');
    std::string_view host = authority.substr(0, port_colon);
    if (host.empty() || host.starts_with('.'))
        return false;
    for (const char c : host)
        if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '.')
            return false;
    if (detail::ends_in_a_number(host)) {
        if (!is_dotted_quad(host))
            return false; // the URL Standard's other IPv4 forms
    } else if (detail::starts_like_a_dotted_quad(host)) {
        return false;
    } else if (host.ends_with('.')) {
        host.remove_suffix(1);
        if (host.ends_with('.'))
            return false;
    }
    out += https ? "https://" : "http://";
    const std::size_t host_begin = out.size();
    out += host;
    for (std::size_t i = host_begin; i < out.size(); ++i)
        out[i] = detail::ascii::to_lower(out[i]);
    if (port_colon != std::string_view::npos) {
        const std::string_view port = authority.substr(port_colon + 1);
        if (port.size() > 5)
            return false;
        std::uint32_t number = 0;
        for (const char c : port) {
            if (!is_digit(c))
                return false;
            number = number * 10 + static_cast<std::uint32_t>(c - '0');
        }
        if (number > 65535)
            return false;
        if (!port.empty() && number != (https ? 443u : 80u)) {
            out += ':';
            out += std::to_string(number);
        }
    }
    return true;
}

// Appends the normalized form of an encoded path (after the base's merge): dot segments removed as resolution
// removes them, then percent-encoding normalized and dot segments removed again, as normalize() does
// ("%2E%2E" is a ".." segment only once decoded); "/" for an empty path.
void append_normalized_path(std::string& out, std::string_view path) {
    const std::size_t begin = out.size();
    if (path.find('%') == std::string_view::npos) {
        append_without_dot_segments(out, path);
    } else {
        append_without_dot_segments(out, normalize_percent_encoding(remove_dot_segments(path)));
    }
    if (out.size() == begin)
        out += '/';
}

// Appends a query as normalize() writes it: percent-encoding normalized, ' encoded.
void append_normalized_query(std::string& out, std::string_view query) {
    for (std::size_t i = 0; i < query.size(); ++i) {
        const char c = query[i];
        if (c == '%' && starts_with_percent_triplet(query.substr(i))) {
            const auto decoded = static_cast<char>(hex_value(query[i + 1]) * 16 + hex_value(query[i + 2]));
            if (is_unreserved(decoded))
                out += decoded;
            else
                append_percent_encoded(out, decoded);
            i += 2;
        } else if (c == '\'') {
            out += "%27";
        } else {
            out += c;
        }
    }
}

} // namespace

std::string clean_reference(std::string_view reference) {
    const auto trimmed = trim_c0_controls_and_spaces(reference);
    return protect_colon_in_first_segment(
        percent_encode_invalid_characters(strip_newlines_and_fix_backslashes(trimmed)));
}

std::string remove_dot_segments(std::string_view path) {
    std::string output;
    output.reserve(path.size());
    append_without_dot_segments(output, path);
    return output;
}

boost::system::result<urls::url> resolve(urls::url_view base, std::string_view reference) {
    if (!base.has_scheme()) {
        return make_error_code(error::invalid_url);
    }
    const std::string cleaned = repair_special_slashes(base, clean_reference(reference));
    const auto parsed = urls::parse_uri_reference(cleaned);
    if (!parsed || !has_well_formed_path(*parsed)) {
        return make_error_code(error::invalid_url);
    }
    return parse_absolute(recompose(transform_reference(base, *parsed)));
}

boost::system::result<urls::url> normalize(urls::url_view absolute) {
    if (!absolute.has_scheme() || !has_well_formed_path(absolute)) {
        return make_error_code(error::invalid_url);
    }
    const std::string scheme = detail::ascii::to_lower(absolute.scheme());
    const auto scheme_default = default_port(scheme);
    if (!scheme_default) {
        return make_error_code(error::unsupported_scheme);
    }
    if (!absolute.has_authority()) {
        return make_error_code(error::invalid_url);
    }
    const auto host = normalized_host(absolute);
    if (!host) {
        return host.error();
    }
    const auto port = normalized_port(absolute, *scheme_default);
    if (!port) {
        return port.error();
    }
    // Userinfo is dropped: the fetcher never sends it, so it only split dedup keys and carried credentials
    // into logs, records and archives.
    std::string text = scheme + "://" + *host;
    if (!port->empty()) {
        text += ':';
        text += *port;
    }
    text += normalized_path(absolute);
    if (absolute.has_query()) {
        text += '?';
        text += encode_apostrophes(normalize_percent_encoding(absolute.encoded_query()));
    }
    return parse_absolute(text);
}

boost::system::result<urls::url> normalize_reference(urls::url_view base, std::string_view reference) {
    const auto resolved = resolve(base, reference);
    if (!resolved) {
        return resolved.error();
    }
    return normalize(*resolved);
}

reference_resolver::reference_resolver(urls::url_view base, std::string_view document_encoding)
    : base_(base)
    , encoding_(document_encoding) {
    const std::string_view text = base_.buffer();
    canonical_ = base_.has_scheme() && base_.has_authority();
    if (!canonical_)
        return;
    // The one pass, which reads nothing of the base for a reference with a scheme, gives a plain base back
    // unchanged when it is canonical; normalize() decides for the others (it costs ten times more).
    std::string rebuilt;
    if (!resolve_simple(text, rebuilt) || rebuilt != text) {
        const auto normalized = normalize(base_);
        canonical_ = normalized && normalized->buffer() == text;
    }
    if (!canonical_)
        return;
    const std::size_t path_begin = text.size() - base_.encoded_path().size() -
                                   (base_.has_query() ? base_.encoded_query().size() + 1 : 0);
    origin_ = text.substr(0, path_begin);
    directory_ = text.substr(0, path_begin + base_.encoded_path().rfind('/') + 1);
}

bool reference_resolver::resolve_simple(std::string_view reference, std::string& text) const {
    if (!canonical_)
        return false;
    // clean_reference() trims the ends first; what follows '#' is dropped by normalization whatever it holds.
    const std::string_view trimmed = trim_c0_controls_and_spaces(reference);
    const std::string_view body = trimmed.substr(0, trimmed.find('#'));
    std::size_t question = std::string_view::npos;
    std::size_t colon = std::string_view::npos; // in the first segment: a scheme's end
    bool in_first_segment = true;
    for (std::size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (c == '%') {
            if (!starts_with_percent_triplet(body.substr(i)))
                return false; // clean_reference() encodes the '%'
            continue;
        }
        if (!is_plain_reference_character(c))
            return false;
        if (question != std::string_view::npos)
            continue;
        if (c == '?')
            question = i;
        else if (c == '/')
            in_first_segment = false;
        else if (c == ':' && in_first_segment && colon == std::string_view::npos)
            colon = i;
    }
    const std::size_t path_end = question == std::string_view::npos ? body.size() : question;
    text.clear();
    text.reserve(directory_.size() + body.size() + 16); // one allocation: "'" aside, nothing grows
    if (colon != std::string_view::npos) {
        // "http://host:port/path?query" with a plain host; other schemes and forms take the long way.
        std::size_t path_begin = 0;
        if (!append_plain_origin(text, body.substr(0, path_end), path_begin))
            return false;
        append_normalized_path(text, body.substr(path_begin, path_end - path_begin));
    } else if (body.starts_with("//")) {
        return false; // an authority of its own
    } else if (path_end == 0) {
        text = origin_;
        text += base_.encoded_path();
        if (question == std::string_view::npos) {
            // "" and "#...": the base itself, which has no fragment
            if (base_.has_query()) {
                text += '?';
                text += base_.encoded_query();
            }
            return true;
        }
    } else {
        text = origin_;
        const std::string_view path = body.substr(0, path_end);
        if (path.front() == '/') {
            append_normalized_path(text, path);
        } else {
            // RFC 3986 §5.2.3: the base's directory (canonical: no dot segment, nothing to decode) and the
            // reference's path.
            merged_.assign(directory_.substr(origin_.size()));
            merged_ += path;
            append_normalized_path(text, merged_);
        }
    }
    if (question != std::string_view::npos) {
        text += '?';
        append_normalized_query(text, body.substr(question + 1));
    }
    return true;
}

boost::system::result<urls::url> reference_resolver::resolve(std::string_view reference) const {
    if (resolve_simple(reference, text_)) {
        // Built canonical: this parse does not fail, but it is Boost.URL's, and costs more than the rest.
        if (auto parsed = urls::parse_uri(text_))
            return urls::url(*parsed);
    }
    return normalize_reference(base_, reference, encoding_);
}

boost::system::result<std::string> reference_resolver::resolve_text(std::string_view reference) const {
    std::string text;
    if (resolve_simple(reference, text))
        return text;
    auto url = normalize_reference(base_, reference, encoding_);
    if (!url)
        return url.error();
    return std::string(url->buffer());
}

namespace {

// "localhost:8080" and "127.0.0.1:8000/x" are a host and a port, "mailto:a@b.c" and "javascript:x" a scheme
// and what follows it: a port is all digits up to the end or the path. A dot in the name before ':' makes it
// a host too ("example.com:8x" is a bad port, not a scheme).
bool is_host_and_port_prefix(std::string_view text, std::size_t colon) noexcept {
    if (text.substr(0, colon).find('.') != std::string_view::npos) {
        return true;
    }
    const std::string_view rest = text.substr(colon + 1);
    const auto digits_end = rest.find_first_not_of("0123456789");
    return digits_end != 0 && (digits_end == std::string_view::npos || rest[digits_end] == '/' ||
                               rest[digits_end] == '?' || rest[digits_end] == '#');
}

// A root is typed by a person: a space, a control character or one of these in its host means it is not a
// URL at all ("not a url"), although the lenient clean_reference would percent-encode it into a host.
bool host_has_forbidden_characters(std::string_view text) noexcept {
    const auto authority = find_authority(text);
    if (!authority) {
        return false;
    }
    std::string_view host = text.substr(authority->begin, authority->end - authority->begin);
    if (const auto at = host.rfind('@'); at != std::string_view::npos) {
        host.remove_prefix(at + 1);
    }
    for (char c : host) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte == 0x7f ||
            std::string_view("<>^|\"{}`\\").find(c) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

boost::system::result<urls::url> parse_root(std::string_view root) {
    std::string text(trim_c0_controls_and_spaces(root));
    if (text.empty()) {
        return make_error_code(error::invalid_url);
    }
    const auto colon = scheme_end(text);
    const bool has_scheme_and_authority = colon && text.substr(*colon + 1, 2) == "//";
    if (colon && !has_scheme_and_authority && !is_host_and_port_prefix(text, *colon)) {
        // "mailto:a@b.c" would otherwise become http://b.c/ with "mailto:a" as its user.
        const std::string scheme = detail::ascii::to_lower(std::string_view(text).substr(0, *colon));
        return make_error_code(scheme == "http" || scheme == "https" ? error::invalid_url
                                                                     : error::unsupported_scheme);
    }
    if (text.starts_with("//")) {
        text.insert(0, "http:");
    } else if (!has_scheme_and_authority) {
        // "localhost:8080" also lands here: without "//" the part before ':' is a host, not a scheme.
        text.insert(0, "http://");
    }
    if (host_has_forbidden_characters(text)) {
        return make_error_code(error::invalid_url);
    }
    const std::string cleaned = clean_reference(text); // must outlive the url_view parsed from it
    const auto parsed = urls::parse_uri(cleaned);
    if (!parsed) {
        return make_error_code(error::invalid_url);
    }
    return normalize(*parsed);
}

} // namespace asiocrawl
