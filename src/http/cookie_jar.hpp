// An RFC 6265 cookie jar for one crawl: Set-Cookie parsing (with the RFC's date algorithm), domain and path
// matching, Secure, HttpOnly (stored; a crawler is not a script), Expires and Max-Age, public suffixes
// refused through libpsl. SameSite is ignored: it guards cross-site requests a browser makes on a user's
// behalf, and a crawler has no user. The Netscape cookies.txt format of wget and curl reads and writes it.
// Sans-io: the fetcher hands in what the wire said and the current time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

/// Where a request goes, as far as cookies care: "http"/"https", the host as on the wire (lowercase ASCII,
/// IPv6 without brackets), and the path (encoded, without the query).
struct cookie_target {
    std::string_view scheme;
    std::string_view host;
    std::string_view path;
};

struct cookie {
    std::string name;
    std::string value;
    std::string domain; ///< lowercase, no leading dot
    std::string path;
    /// Unset: a session cookie (kept for the crawl).
    std::optional<std::chrono::system_clock::time_point> expires;
    bool host_only = true;
    bool secure = false;
    bool http_only = false;
    std::chrono::system_clock::time_point created{};
    /// Creation order among cookies created at the same clock reading (RFC 6265 5.4 lists older ones first).
    std::uint64_t created_order = 0;
};

class cookie_jar {
public:
    using time_point = std::chrono::system_clock::time_point;

    /// Bounds against a server that sets cookies without end: per domain (the oldest go first), in all, and
    /// the size of one name plus value (RFC 6265 6.1 asks for at least 50, 3,000 and 4,096).
    static constexpr std::size_t max_per_domain = 50;
    static constexpr std::size_t max_cookies = 3000;
    static constexpr std::size_t max_cookie_bytes = 4096;

    /// Loads the public suffix list (once per process): construct before the crawl, not in the middle.
    cookie_jar();

    /// One Set-Cookie field of a response to `from`. Invalid or refused cookies are ignored, as browsers
    /// do. True when the jar changed.
    bool set_cookie(const cookie_target& from, std::string_view set_cookie_value, time_point now);

    /// The Cookie field value for a request to `to` (RFC 6265 5.4: longer paths first, then older cookies);
    /// empty when no cookie applies.
    std::string cookie_header(const cookie_target& to, time_point now) const;

    /// Adds the cookies of a Netscape cookies.txt text ("#HttpOnly_" lines included; other comments,
    /// blank and malformed lines skipped). Returns how many were taken; expired ones are not.
    std::size_t load_netscape(std::string_view text, time_point now);
    /// The unexpired cookies as a Netscape cookies.txt text; session cookies get expiry 0, as curl writes.
    std::string to_netscape(time_point now) const;

    std::size_t size() const noexcept;
    /// Every cookie, domain by domain (for tests and diagnostics).
    std::vector<cookie> all() const;

private:
    void store(cookie c, time_point now);
    bool shadows_a_secure_cookie(const cookie& c) const;
    std::map<std::string, std::vector<cookie>> by_domain_;
    std::size_t count_ = 0;
    std::uint64_t created_ = 0;
};

/// RFC 6265 5.1.1: the cookie-date algorithm ("Wed, 21 Oct 2015 07:28:00 GMT" and its many variants).
std::optional<std::chrono::system_clock::time_point> parse_cookie_date(std::string_view text);

/// RFC 6265 5.1.3 domain-match: `host` is `domain`, or ends with "." + domain and is not an IP address.
bool domain_matches(std::string_view host, std::string_view domain) noexcept;

/// RFC 6265 5.1.4 path-match.
bool path_matches(std::string_view request_path, std::string_view cookie_path) noexcept;

} // namespace asiocrawl::detail
