// The bytes of an HTTP/1.1 GET: the request line (origin form, or absolute form through an http proxy), Host,
// the fields fixed for the crawl (User-Agent, Accept, Accept-Encoding, fetch.headers), the origin's Basic
// credentials, cookies (a Cookie given in fetch.headers, then the jar's), and the proxy's credentials.
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
    std::string request(std::string_view url, const std::string& origin, const proxy_endpoint* http_proxy,
                        std::pair<std::size_t, std::size_t>& proxy_fields) const;

private:
    std::string user_agent_;
    std::string fixed_fields_; // User-Agent, Accept, Accept-Encoding and --header fields, each ending in CRLF
    std::string user_cookie_;  // a Cookie given with --header, sent before the jar's cookies
    std::unordered_map<std::string, std::string> authorization_by_origin_; // pool key -> "Basic ..."
    const cookie_jar* jar_;
};

/// The path the cookie jar matches on: the URL's encoded path, "/" when empty.
std::string_view cookie_path(boost::urls::url_view url) noexcept;

} // namespace asiocrawl::detail
