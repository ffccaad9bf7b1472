// The sans-io side of what a request carries besides its URL: extra header fields, Basic credentials per
// origin (from the config or a root URL's userinfo), the proxy a URL goes through (proxy URLs, no_proxy
// matching, the http_proxy/https_proxy/no_proxy environment), and the checks of those settings.
#pragma once

#include <asiocrawl/config.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

struct header_field {
    std::string name;
    std::string value;
};

/// "Name: value" as given to --header / fetch.headers. An error message (naming the field) when the name
/// is not an HTTP token, the value holds control characters, or the field is one we must not let a user set:
/// Host (the URL decides), Content-Length, Authorization and Proxy-Authorization (credentials are per origin:
/// fetch.credentials), and hop-by-hop fields.
struct parsed_header {
    std::optional<header_field> field;
    std::string problem;
};
parsed_header parse_header_option(std::string_view text);

/// `value` without control characters (tabs included): a configured header value, or words a server sent
/// that go to a record or the log, cannot then inject lines.
std::string without_controls(std::string value);

/// The origin of an http(s) URL or origin string as the fetcher keys its pool: "scheme://host:port" with the
/// URL normalized (scheme and host lowercased, an IDN in punycode), the port always written and an IPv6
/// host without brackets ("https://example.com" -> "https://example.com:443"). nullopt when it is not an
/// http(s) URL with a host.
std::optional<std::string> origin_key(std::string_view url);

/// The value of an Authorization (or Proxy-Authorization) field for "user:password": "Basic <base64>".
std::string basic_authorization(std::string_view user_colon_password);

/// The Basic credentials written in root URLs ("https://user:pw@example.com/"): origin key ->
/// "user:password", percent-decoded. Roots without userinfo, or that do not parse, add nothing.
std::map<std::string, std::string> credentials_in_roots(const std::vector<std::string>& roots);

/// `config` with the credentials of its roots added to fetch.credentials (an entry already there for the
/// same origin wins). The crawler calls this before parse_root() drops the userinfo of its roots.
crawler_config with_root_credentials(crawler_config config);

/// A proxy as the fetcher connects to it.
struct proxy_endpoint {
    std::string host; ///< as on the wire (IPv6 without brackets)
    std::string port;
    /// "Basic ..." for Proxy-Authorization, or empty. Never logged.
    std::string authorization;
    /// "http://host:port", without credentials: what logs may show.
    std::string display;
};

/// "http://[user:password@]host[:port][/]", or "host:port" (http assumed). nullopt (and `problem` set) for
/// anything else, an https:// proxy included.
std::optional<proxy_endpoint> parse_proxy(std::string_view text, std::string* problem = nullptr);

/// True when `host` (wire form, lowercase) must be reached directly under `no_proxy`: an entry equal to the
/// host or to one of its parent domains (a leading "." or "*." is ignored), "host:port" for that port only,
/// an IP address or CIDR block containing an IP host, or "*".
bool bypasses_proxy(const std::vector<std::string>& no_proxy, std::string_view host, std::string_view port);

/// The proxy variables of `environment` (NAME=VALUE strings), as curl reads them, into `fetch`: http_proxy
/// (lowercase only: HTTP_PROXY may come from a request header under CGI), https_proxy or HTTPS_PROXY,
/// all_proxy or ALL_PROXY, no_proxy or NO_PROXY (comma-separated). The proxies are taken only when
/// `proxies_configured` is false (no proxy key was set by the file, ASIOCRAWL_* variables or flags), no_proxy
/// only when `no_proxy_configured` is false. Returns the names of the variables used.
std::vector<std::string> apply_proxy_environment(fetch_config& fetch,
                                                 const std::vector<std::string>& environment,
                                                 bool proxies_configured, bool no_proxy_configured);

/// Problems with the settings of this file's concern, each naming its key: headers, credentials, proxies,
/// DNS servers and TTLs. Empty when all is well. Called by validate().
std::vector<std::string> fetch_settings_problems(const fetch_config& fetch);

/// Descriptors a crawl needs besides one per worker's connection: standard streams, output files and their
/// writers, the DNS resolver's sockets, a metrics listener, a Redis connection; a state dir adds RocksDB's
/// files (state_store opens at most 64 tables at once, plus its log and manifest).
constexpr std::size_t own_descriptors = 32;
constexpr std::size_t state_dir_descriptors = 80;

/// A warning when `max_tasks` connections and the crawler's own descriptors (`own`) do not fit under the
/// limit on open files (`soft`, with `hard` the most it can be raised to); nullopt when they fit. Running
/// out is not fatal (a connect then waits for a free descriptor), but the crawl runs narrower than asked.
std::optional<std::string> descriptor_shortfall(std::size_t max_tasks, std::size_t own, std::uint64_t soft,
                                                std::uint64_t hard);

} // namespace asiocrawl::detail
