#include "http/cookie_jar.hpp"

#include "util/ascii.hpp"

#include <libpsl.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <mutex>
#include <tuple>

#include <arpa/inet.h>

namespace asiocrawl::detail {
namespace {

using clock_type = std::chrono::system_clock;

/// The public suffix list, loaded once per process (the newest of libpsl's built-in list and the system's).
const psl_ctx_t* public_suffixes() {
    static const psl_ctx_t* context = [] {
        const psl_ctx_t* latest = psl_latest(nullptr);
        return latest ? latest : psl_builtin();
    }();
    return context;
}

/// Seconds since 1970 as a time point, clamped to what system_clock holds (libstdc++ counts nanoseconds in 64
/// bits: up to 2262). RFC 6265 5.2.1 allows a later date to become the last representable one.
clock_type::time_point from_unix_seconds(long long seconds) {
    constexpr long long last = 7'258'118'400; // 2200-01-01
    return clock_type::from_time_t(static_cast<std::time_t>(std::clamp(seconds, 0LL, last)));
}

/// RFC 6265bis: no cookie outlives 400 days from now, whatever its Expires or Max-Age.
constexpr auto longest_life = std::chrono::hours(400 * 24);

bool older(const cookie& a, const cookie& b) {
    return std::tie(a.created, a.created_order) < std::tie(b.created, b.created_order);
}

std::string_view trim_spaces(std::string_view s) {
    return ascii::trim(s, " \t");
}

bool is_ip_address(std::string_view host) {
    const std::string text(host);
    unsigned char buffer[16];
    return inet_pton(AF_INET, text.c_str(), buffer) == 1 || inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

/// RFC 6265 5.1.4 default-path: the request path up to its last '/', or "/".
std::string default_path(std::string_view request_path) {
    if (request_path.empty() || request_path.front() != '/')
        return "/";
    const auto last = request_path.rfind('/');
    if (last == 0)
        return "/";
    return std::string(request_path.substr(0, last));
}

// ---- RFC 6265 5.1.1 cookie-date ----

bool is_date_delimiter(char c) {
    const auto b = static_cast<unsigned char>(c);
    return b == 0x09 || (b >= 0x20 && b <= 0x2f) || (b >= 0x3b && b <= 0x40) || (b >= 0x5b && b <= 0x60) ||
           (b >= 0x7b && b <= 0x7e);
}

/// 1 to `max_digits` digits at the start of `token`, optionally followed by non-digits; -1 otherwise.
int leading_number(std::string_view token, std::size_t min_digits, std::size_t max_digits,
                   std::size_t* used = nullptr) {
    std::size_t n = 0;
    while (n < token.size() && ascii::is_digit(token[n]))
        ++n;
    if (n < min_digits || n > max_digits)
        return -1;
    int value = 0;
    std::from_chars(token.data(), token.data() + n, value);
    if (used)
        *used = n;
    return value;
}

bool parse_time(std::string_view token, int& h, int& m, int& s) {
    // hms-time = time-field ":" time-field ":" time-field, each 1 or 2 digits, then anything non-digit.
    int parts[3];
    std::size_t at = 0;
    for (int i = 0; i < 3; ++i) {
        std::size_t used = 0;
        parts[i] = leading_number(token.substr(at), 1, 2, &used);
        if (parts[i] < 0)
            return false;
        at += used;
        if (i < 2) {
            if (at >= token.size() || token[at] != ':')
                return false;
            ++at;
        }
    }
    h = parts[0];
    m = parts[1];
    s = parts[2];
    return true;
}

int month_of(std::string_view token) {
    static constexpr std::string_view months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                  "jul", "aug", "sep", "oct", "nov", "dec"};
    if (token.size() < 3)
        return -1;
    for (int i = 0; i < 12; ++i)
        if (ascii::iequals(token.substr(0, 3), months[i]))
            return i + 1;
    return -1;
}

} // namespace

std::optional<clock_type::time_point> parse_cookie_date(std::string_view text) {
    bool found_time = false, found_day = false, found_month = false, found_year = false;
    int hour = 0, minute = 0, second = 0, day = 0, month = 0, year = 0;
    std::size_t at = 0;
    while (at < text.size()) {
        while (at < text.size() && is_date_delimiter(text[at]))
            ++at;
        std::size_t end = at;
        while (end < text.size() && !is_date_delimiter(text[end]))
            ++end;
        const auto token = text.substr(at, end - at);
        at = end;
        if (token.empty())
            continue;
        if (!found_time && parse_time(token, hour, minute, second)) {
            found_time = true;
        } else if (!found_day && leading_number(token, 1, 2) >= 0) {
            day = leading_number(token, 1, 2);
            found_day = true;
        } else if (!found_month && month_of(token) > 0) {
            month = month_of(token);
            found_month = true;
        } else if (!found_year && leading_number(token, 2, 4) >= 0) {
            year = leading_number(token, 2, 4);
            found_year = true;
        }
    }
    if (found_year && year >= 70 && year <= 99)
        year += 1900;
    else if (found_year && year >= 0 && year <= 69)
        year += 2000;
    if (!found_time || !found_day || !found_month || !found_year || day < 1 || day > 31 || year < 1601 ||
        hour > 23 || minute > 59 || second > 59)
        return std::nullopt;
    std::tm t{};
    t.tm_year = year - 1900;
    t.tm_mon = month - 1;
    t.tm_mday = day;
    t.tm_hour = hour;
    t.tm_min = minute;
    t.tm_sec = second;
    const std::time_t seconds = timegm(&t);
    // timegm normalizes "Feb 31" into March: such a date does not exist.
    if (t.tm_mday != day)
        return std::nullopt;
    return from_unix_seconds(static_cast<long long>(seconds));
}

bool domain_matches(std::string_view host, std::string_view domain) noexcept {
    if (host == domain)
        return true;
    return host.size() > domain.size() && host.ends_with(domain) &&
           host[host.size() - domain.size() - 1] == '.' && !is_ip_address(host);
}

bool path_matches(std::string_view request_path, std::string_view cookie_path) noexcept {
    if (request_path == cookie_path)
        return true;
    if (!request_path.starts_with(cookie_path))
        return false;
    return cookie_path.ends_with('/') || request_path[cookie_path.size()] == '/';
}

cookie_jar::cookie_jar() {
    public_suffixes();
}

bool cookie_jar::set_cookie(const cookie_target& from, std::string_view value, time_point now) {
    // RFC 6265 5.2: the name-value pair up to the first ';', then attributes.
    const auto semicolon = value.find(';');
    const auto pair = value.substr(0, semicolon);
    const auto equals = pair.find('=');
    if (equals == std::string_view::npos)
        return false;
    cookie c;
    c.name = std::string(trim_spaces(pair.substr(0, equals)));
    c.value = std::string(trim_spaces(pair.substr(equals + 1)));
    if (c.name.empty() || c.name.size() + c.value.size() > max_cookie_bytes)
        return false;
    for (char ch : c.name + c.value)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
            return false; // a control character could split the Cookie header we send back
    std::optional<time_point> expires;
    std::optional<time_point> max_age;
    std::optional<std::string> domain_attribute;
    std::optional<std::string> path_attribute;
    std::string_view attributes =
        semicolon == std::string_view::npos ? std::string_view{} : value.substr(semicolon + 1);
    while (!attributes.empty()) {
        const auto next = attributes.find(';');
        const auto item = attributes.substr(0, next);
        attributes = next == std::string_view::npos ? std::string_view{} : attributes.substr(next + 1);
        const auto eq = item.find('=');
        const auto name = trim_spaces(item.substr(0, eq));
        const auto attribute_value =
            eq == std::string_view::npos ? std::string_view{} : trim_spaces(item.substr(eq + 1));
        if (ascii::iequals(name, "expires")) {
            if (auto date = parse_cookie_date(attribute_value))
                expires = *date;
        } else if (ascii::iequals(name, "max-age")) {
            if (attribute_value.empty() ||
                !(ascii::is_digit(attribute_value[0]) || attribute_value[0] == '-'))
                continue;
            long long seconds = 0;
            const auto* end = attribute_value.data() + attribute_value.size();
            const auto [ptr, ec] = std::from_chars(attribute_value.data(), end, seconds);
            if (ptr != end)
                continue;
            constexpr long long cap = std::chrono::duration_cast<std::chrono::seconds>(longest_life).count();
            if (ec == std::errc::result_out_of_range)
                seconds = attribute_value[0] == '-' ? -1 : cap;
            else if (ec != std::errc{})
                continue;
            max_age = seconds <= 0 ? time_point::min() : now + std::chrono::seconds(std::min(seconds, cap));
        } else if (ascii::iequals(name, "domain")) {
            if (attribute_value.empty())
                continue;
            auto domain = ascii::to_lower(attribute_value);
            if (domain.front() == '.')
                domain.erase(0, 1);
            domain_attribute = std::move(domain);
        } else if (ascii::iequals(name, "path")) {
            const bool has_control = std::any_of(attribute_value.begin(), attribute_value.end(), [](char ch) {
                return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
            });
            if (attribute_value.empty() || attribute_value.front() != '/' || has_control)
                path_attribute.reset();
            else
                path_attribute = std::string(attribute_value);
        } else if (ascii::iequals(name, "secure")) {
            c.secure = true;
        } else if (ascii::iequals(name, "httponly")) {
            c.http_only = true;
        }
    }
    // RFC 6265 5.3.
    if (max_age)
        c.expires = *max_age;
    else if (expires)
        c.expires = std::min(*expires, now + longest_life);
    const std::string host = ascii::to_lower(from.host);
    if (domain_attribute && !domain_attribute->empty()) {
        if (psl_is_public_suffix2(public_suffixes(), domain_attribute->c_str(),
                                  PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE)) {
            if (*domain_attribute != host)
                return false; // a cookie for every site under a public suffix
            domain_attribute.reset();
        }
    }
    if (domain_attribute && !domain_attribute->empty()) {
        if (!domain_matches(host, *domain_attribute))
            return false;
        c.host_only = false;
        c.domain = *domain_attribute;
    } else {
        c.host_only = true;
        c.domain = host;
    }
    c.path = path_attribute ? *path_attribute : default_path(from.path);
    // RFC 6265bis: only a secure origin may set a Secure cookie.
    const bool secure_origin = ascii::iequals(from.scheme, "https");
    if (c.secure && !secure_origin)
        return false;
    // RFC 6265bis 4.1.3, as browsers enforce it (names compared case-insensitively): a "__Secure-" cookie
    // must be Secure, a "__Host-" cookie also host-only with path "/", so that no other host or path forged
    // it.
    const auto has_prefix = [&](std::string_view prefix) {
        return c.name.size() >= prefix.size() &&
               ascii::iequals(std::string_view(c.name).substr(0, prefix.size()), prefix);
    };
    if ((has_prefix("__Secure-") || has_prefix("__Host-")) && !c.secure)
        return false;
    if (has_prefix("__Host-") && (!c.host_only || c.path != "/"))
        return false;
    if (!secure_origin && shadows_a_secure_cookie(c))
        return false;
    store(std::move(c), now);
    return true;
}

bool cookie_jar::shadows_a_secure_cookie(const cookie& c) const {
    // RFC 6265bis 5.7 step 16 ("leave secure cookies alone"): an insecure origin may not set a cookie whose
    // name, domain and path would overwrite or shadow a Secure one.
    for (const auto& [domain, cookies] : by_domain_) {
        if (!domain_matches(domain, c.domain) && !domain_matches(c.domain, domain))
            continue;
        for (const auto& old : cookies)
            if (old.secure && old.name == c.name && path_matches(c.path, old.path))
                return true;
    }
    return false;
}

void cookie_jar::store(cookie c, time_point now) {
    auto& list = by_domain_[c.domain];
    const auto same = std::find_if(list.begin(), list.end(), [&](const cookie& old) {
        return old.name == c.name && old.path == c.path && old.host_only == c.host_only;
    });
    c.created = now;
    c.created_order = ++created_;
    if (same != list.end()) {
        c.created = same->created;
        c.created_order = same->created_order;
        list.erase(same);
        --count_;
    }
    if (c.expires && *c.expires <= now) {
        if (list.empty())
            by_domain_.erase(c.domain);
        return; // an expiry in the past deletes the cookie
    }
    if (list.size() >= max_per_domain) {
        const auto oldest = std::min_element(list.begin(), list.end(),
                                             [](const cookie& a, const cookie& b) { return older(a, b); });
        list.erase(oldest);
        --count_;
    }
    if (count_ >= max_cookies) {
        // The oldest cookie of the crawl goes: a server setting thousands must not grow the jar without end.
        cookie* oldest = nullptr;
        std::string oldest_domain;
        for (auto& [domain, cookies] : by_domain_)
            for (auto& candidate : cookies)
                if (!oldest || older(candidate, *oldest)) {
                    oldest = &candidate;
                    oldest_domain = domain;
                }
        if (oldest) {
            auto& owner = by_domain_[oldest_domain];
            owner.erase(owner.begin() + (oldest - owner.data()));
            --count_;
            if (owner.empty() && oldest_domain != c.domain)
                by_domain_.erase(oldest_domain);
        }
    }
    by_domain_[c.domain].push_back(std::move(c));
    ++count_;
}

std::string cookie_jar::cookie_header(const cookie_target& to, time_point now) const {
    if (count_ == 0)
        return {};
    const std::string host = ascii::to_lower(to.host);
    const std::string_view path = to.path.empty() ? std::string_view("/") : to.path;
    const bool secure = ascii::iequals(to.scheme, "https");
    std::vector<const cookie*> matching;
    // The domains a host can match: itself and each parent.
    std::string_view candidate = host;
    for (;;) {
        if (auto it = by_domain_.find(std::string(candidate)); it != by_domain_.end()) {
            for (const auto& c : it->second) {
                if (c.host_only ? c.domain != host : !domain_matches(host, c.domain))
                    continue;
                if (!path_matches(path, c.path) || (c.secure && !secure) || (c.expires && *c.expires <= now))
                    continue;
                matching.push_back(&c);
            }
        }
        const auto dot = candidate.find('.');
        if (dot == std::string_view::npos || is_ip_address(host))
            break;
        candidate.remove_prefix(dot + 1);
    }
    std::stable_sort(matching.begin(), matching.end(), [](const cookie* a, const cookie* b) {
        if (a->path.size() != b->path.size())
            return a->path.size() > b->path.size();
        return older(*a, *b);
    });
    std::string header;
    for (const auto* c : matching) {
        if (!header.empty())
            header += "; ";
        header += c->name;
        header += '=';
        header += c->value;
    }
    return header;
}

namespace {

std::vector<std::string_view> split_tabs(std::string_view line) {
    std::vector<std::string_view> fields;
    for (;;) {
        const auto tab = line.find('\t');
        fields.push_back(line.substr(0, tab));
        if (tab == std::string_view::npos)
            return fields;
        line.remove_prefix(tab + 1);
    }
}

} // namespace

std::size_t cookie_jar::load_netscape(std::string_view text, time_point now) {
    std::size_t taken = 0;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
        if (line.ends_with('\r'))
            line.remove_suffix(1);
        bool http_only = false;
        if (line.starts_with("#HttpOnly_")) {
            http_only = true;
            line.remove_prefix(10);
        } else if (line.empty() || line.front() == '#') {
            continue;
        }
        const auto fields = split_tabs(line);
        if (fields.size() != 7)
            continue;
        cookie c;
        c.http_only = http_only;
        std::string domain = ascii::to_lower(fields[0]);
        const bool leading_dot = !domain.empty() && domain.front() == '.';
        if (leading_dot)
            domain.erase(0, 1);
        if (domain.empty())
            continue;
        c.domain = std::move(domain);
        c.host_only = !(leading_dot || ascii::iequals(fields[1], "TRUE"));
        c.path = fields[2].empty() ? "/" : std::string(fields[2]);
        c.secure = ascii::iequals(fields[3], "TRUE");
        long long expiry = 0;
        const auto [ptr, ec] = std::from_chars(fields[4].data(), fields[4].data() + fields[4].size(), expiry);
        if (ec != std::errc{} || ptr != fields[4].data() + fields[4].size())
            continue;
        if (expiry > 0)
            c.expires = from_unix_seconds(expiry);
        c.name = std::string(fields[5]);
        c.value = std::string(fields[6]);
        if (c.name.empty() || c.name.size() + c.value.size() > max_cookie_bytes ||
            (c.expires && *c.expires <= now))
            continue;
        // One microsecond apart: the file's order stands for creation order (RFC 6265 5.4 sorts by it).
        store(std::move(c), now + std::chrono::microseconds(taken));
        ++taken;
    }
    return taken;
}

std::string cookie_jar::to_netscape(time_point now) const {
    std::string out = "# Netscape HTTP Cookie File\n# Written by asiocrawl at the end of a crawl.\n\n";
    for (const auto& [domain, cookies] : by_domain_) {
        for (const auto& c : cookies) {
            if (c.expires && *c.expires <= now)
                continue;
            if (c.http_only)
                out += "#HttpOnly_";
            out += c.host_only ? c.domain : "." + c.domain;
            out += c.host_only ? "\tFALSE\t" : "\tTRUE\t";
            out += c.path;
            out += c.secure ? "\tTRUE\t" : "\tFALSE\t";
            out += c.expires ? std::to_string(clock_type::to_time_t(*c.expires)) : "0";
            out += '\t';
            out += c.name;
            out += '\t';
            out += c.value;
            out += '\n';
        }
    }
    return out;
}

std::size_t cookie_jar::size() const noexcept {
    return count_;
}

std::vector<cookie> cookie_jar::all() const {
    std::vector<cookie> out;
    for (const auto& [domain, cookies] : by_domain_)
        out.insert(out.end(), cookies.begin(), cookies.end());
    return out;
}

} // namespace asiocrawl::detail
