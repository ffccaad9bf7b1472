// The bytes of an HTTP/1.1 GET: the request line (origin form, or absolute form through an http proxy), Host,
// the fields fixed for the crawl (User-Agent, Accept, Accept-Encoding, fetch.headers), a re-crawl's
// validators (If-None-Match, If-Modified-Since), the origin's Basic credentials, cookies (a Cookie given in
// fetch.headers, then the jar's), and the proxy's credentials.
#pragma once

#include "http/cookie_jar.hpp"
#include "http/fetch_settings.hpp"

#include <asiocrawl/config.hpp>

#include <boost/url/url_view.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace asiocrawl::detail {

/// The validators of a conditional request (RFC 9110 13.1.2, 13.1.3): an earlier answer's ETag and
/// Last-Modified, as it sent them. Empty: not sent.
struct conditional_fields {
    std::string_view if_none_match;
    std::string_view if_modified_since;
    /// More header fields for this request, each "Name: value\r\n" (a per-host rule's headers, validated).
    std::string_view extra_fields;
};

/// Longest validator sent back (bytes). An ETag is typically under 100 bytes and an HTTP date is 29; a value
/// over this (from a previous run's records, which nothing bounds) is not sent, and the request is a plain
/// GET.
constexpr std::size_t max_validator_bytes = 4096;

/// True when `value` can go on the wire as a field value: not empty, at most max_validator_bytes, and no
/// control character but HTAB (a CR, LF or NUL would end the field or the head early: request smuggling).
bool sendable_validator(std::string_view value) noexcept;

class request_writer {
public:
    /// Throws std::invalid_argument when a header or credential setting is invalid. `jar` (may be null)
    /// must outlive the writer.
    request_writer(const fetch_config& config, const cookie_jar* jar);

    /// The User-Agent sent (fetch.user_agent, or the default one), without control characters.
    const std::string& user_agent() const noexcept { return user_agent_; }

    /// The request for `url` (an http(s) URL with a pool key: it parses), whose pool key is `origin`.
    /// `http_proxy`: the proxy an http URL goes through, or null. `proxy_fields` receives where the
    /// Proxy-Authorization field sits in it (offset, length), so that a captured copy leaves it out.
    /// `conditional`: the validators to send, each only when sendable_validator() and not already set by a
    /// fetch.headers field of the same name (the user's setting wins).
    std::string request(std::string_view url, const std::string& origin, const proxy_endpoint* http_proxy,
                        std::pair<std::size_t, std::size_t>& proxy_fields,
                        conditional_fields conditional = {}) const;

private:
    std::string user_agent_;
    std::string fixed_fields_; // User-Agent, Accept, Accept-Encoding and --header fields, each ending in CRLF
    std::string user_cookie_;  // a Cookie given with --header, sent before the jar's cookies
    bool user_if_none_match_ = false;     // fetch.headers sets If-None-Match
    bool user_if_modified_since_ = false; // fetch.headers sets If-Modified-Since
    std::unordered_map<std::string, std::string> authorization_by_origin_; // pool key -> "Basic ..."
    const cookie_jar* jar_;
};

/// The path the cookie jar matches on: the URL's encoded path, "/" when empty.
std::string_view cookie_path(boost::urls::url_view url) noexcept;

} // namespace asiocrawl::detail
