#include "http/fetch_settings.hpp"

#include "url/url_host.hpp"
#include "util/ascii.hpp"

#include "url/percent.hpp"
#include "url/url.hpp"

#include <boost/url/parse.hpp>

#include <algorithm>
#include <array>
#include <charconv>

#include <arpa/inet.h>
#include <openssl/evp.h>

namespace asiocrawl::detail {
namespace {

bool is_token_char(char c) noexcept {
    return ascii::is_alpha(c) || ascii::is_digit(c) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool has_control_character(std::string_view text) noexcept {
    for (char c : text)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
            return true;
    return false;
}

/// Standard base64 with padding (RFC 4648 4), as Basic credentials are written (RFC 7617 2).
std::string base64(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    const int written =
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                        reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(written)); // EVP_EncodeBlock wrote a NUL after the text
    return out;
}

/// Bytes of an IPv4 or IPv6 address; nullopt for anything else.
std::optional<std::vector<unsigned char>> address_bytes(std::string_view text) {
    const std::string s(text);
    std::array<unsigned char, 16> buffer{};
    if (inet_pton(AF_INET, s.c_str(), buffer.data()) == 1)
        return std::vector<unsigned char>(buffer.begin(), buffer.begin() + 4);
    if (inet_pton(AF_INET6, s.c_str(), buffer.data()) == 1)
        return std::vector<unsigned char>(buffer.begin(), buffer.end());
    return std::nullopt;
}

bool in_block(const std::vector<unsigned char>& address, std::string_view cidr) {
    const auto slash = cidr.find('/');
    const auto network = address_bytes(cidr.substr(0, slash));
    if (!network || network->size() != address.size())
        return false;
    unsigned bits = static_cast<unsigned>(address.size() * 8);
    if (slash != std::string_view::npos) {
        const auto digits = cidr.substr(slash + 1);
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
        if (ec != std::errc{} || ptr != digits.data() + digits.size() || bits > address.size() * 8)
            return false;
    }
    for (unsigned i = 0; i < bits; ++i) {
        const unsigned mask = 0x80u >> (i % 8);
        if ((address[i / 8] & mask) != ((*network)[i / 8] & mask))
            return false;
    }
    return true;
}

std::string_view value_of(const std::vector<std::string>& environment, std::string_view name) {
    for (const auto& entry : environment)
        if (entry.size() > name.size() && entry[name.size()] == '=' &&
            std::string_view(entry).starts_with(name))
            return std::string_view(entry).substr(name.size() + 1);
    return {};
}

} // namespace

parsed_header parse_header_option(std::string_view text) {
    parsed_header out;
    const auto colon = text.find(':');
    const auto name = colon == std::string_view::npos ? text : text.substr(0, colon);
    if (colon == std::string_view::npos || name.empty() ||
        !std::all_of(name.begin(), name.end(), is_token_char)) {
        // Built by appending: g++ 12 -O3 warns falsely (-Wrestrict) on "\"" + string and on assigning "\"".
        std::string problem(1, '"');
        problem.append(text).append("\" is not a header field \"Name: value\"");
        out.problem = std::move(problem);
        return out;
    }
    const auto value = ascii::trim(text.substr(colon + 1), " \t");
    if (has_control_character(value)) {
        out.problem = "the value of " + std::string(name) + " holds control characters";
        return out;
    }
    static constexpr std::array<std::string_view, 11> refused{"host",
                                                              "content-length",
                                                              "authorization",
                                                              "proxy-authorization",
                                                              "connection",
                                                              "keep-alive",
                                                              "te",
                                                              "trailer",
                                                              "transfer-encoding",
                                                              "upgrade",
                                                              "proxy-connection"};
    for (auto r : refused) {
        if (!ascii::iequals(name, r))
            continue;
        if (r == "host")
            out.problem = "Host cannot be set: it is the URL's host";
        else if (r == "authorization" || r == "proxy-authorization")
            out.problem = std::string(name) +
                          " cannot be set for every host: use fetch.credentials (per origin) or credentials "
                          "in the proxy URL";
        else
            out.problem = std::string(name) + " is managed by the fetcher (a hop-by-hop or framing field)";
        return out;
    }
    out.field = header_field{std::string(name), std::string(value)};
    return out;
}

std::string without_controls(std::string value) {
    std::erase_if(value, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    return value;
}

std::optional<std::string> origin_key(std::string_view url) {
    const std::string cleaned = clean_reference(url); // a raw IDN as typed
    const auto parsed = boost::urls::parse_uri(cleaned);
    if (!parsed || !parsed->has_authority())
        return std::nullopt;
    // Normalized as the crawl's URLs are (IDNA, IPv4 forms, default port), then written with its port.
    const auto canonical = normalize(*parsed);
    if (!canonical)
        return std::nullopt;
    const std::string scheme(canonical->scheme());
    std::string port(canonical->port());
    if (port.empty())
        port = scheme == "https" ? "443" : "80";
    return scheme + "://" + std::string(canonical->encoded_host_address()) + ":" + port;
}

std::string basic_authorization(std::string_view user_colon_password) {
    return "Basic " + base64(user_colon_password);
}

std::map<std::string, std::string> credentials_in_roots(const std::vector<std::string>& roots) {
    std::map<std::string, std::string> found;
    for (const auto& root : roots) {
        std::string text(ascii::trim(root, " \t\r\n"));
        if (text.find('@') == std::string::npos)
            continue;
        // As parse_root() reads a root: "user:pw@example.com" and "//user@example.com" are http URLs.
        if (text.starts_with("//"))
            text.insert(0, "http:");
        else if (text.find("://") == std::string::npos)
            text.insert(0, "http://");
        const auto parsed = boost::urls::parse_uri(text);
        if (!parsed || !parsed->has_userinfo())
            continue;
        auto origin = origin_key(text);
        if (!origin)
            continue;
        std::string userinfo = percent_decode(parsed->encoded_user());
        userinfo += ':';
        userinfo += percent_decode(parsed->encoded_password());
        found.emplace(std::move(*origin), std::move(userinfo));
    }
    return found;
}

crawler_config with_root_credentials(crawler_config config) {
    for (auto& found : credentials_in_roots(config.roots)) {
        const std::string& origin = found.first; // not a structured binding: clang 14 cannot capture one
        const bool configured =
            std::any_of(config.fetch.credentials.begin(), config.fetch.credentials.end(),
                        [&](const auto& entry) { return origin_key(entry.first) == origin; });
        if (!configured)
            config.fetch.credentials.emplace(origin, std::move(found.second));
    }
    return config;
}

std::optional<proxy_endpoint> parse_proxy(std::string_view text, std::string* problem) {
    auto fail = [&](std::string why) -> std::optional<proxy_endpoint> {
        if (problem)
            *problem = std::move(why);
        return std::nullopt;
    };
    std::string url(ascii::trim(text, " \t"));
    if (url.find("://") == std::string::npos)
        url.insert(0, "http://");
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed || !parsed->has_authority() || parsed->encoded_host().empty())
        return fail("not a proxy URL http://[user:password@]host[:port]");
    if (!ascii::iequals(parsed->scheme(), "http"))
        return fail("only http:// proxies are supported (https URLs go through them in a CONNECT tunnel)");
    const auto path = parsed->encoded_path();
    if (!(path.empty() || path == "/") || parsed->has_query() || parsed->has_fragment())
        return fail("a proxy URL has no path or query");
    proxy_endpoint proxy;
    if (parsed->host_type() == boost::urls::host_type::ipv6) {
        proxy.host = ipv6_text(parsed->host_ipv6_address().to_bytes());
    } else {
        auto host = canonical_host_name(parsed->encoded_host());
        if (!host)
            return fail("the proxy's host is not a valid name");
        proxy.host = *host;
    }
    proxy.port = parsed->has_port() && !parsed->port().empty() ? std::string(parsed->port()) : "80";
    unsigned port_number = 0;
    const auto [ptr, ec] =
        std::from_chars(proxy.port.data(), proxy.port.data() + proxy.port.size(), port_number);
    if (ec != std::errc{} || ptr != proxy.port.data() + proxy.port.size() || port_number == 0 ||
        port_number > 65535)
        return fail("the proxy's port is not a number from 1 to 65535");
    if (parsed->has_userinfo()) {
        std::string userinfo = percent_decode(parsed->encoded_user());
        userinfo += ':';
        userinfo += percent_decode(parsed->encoded_password());
        proxy.authorization = basic_authorization(userinfo);
    }
    const bool v6 = proxy.host.find(':') != std::string::npos;
    proxy.display = "http://" + (v6 ? "[" + proxy.host + "]" : proxy.host) + ":" + proxy.port;
    return proxy;
}

bool bypasses_proxy(const std::vector<std::string>& no_proxy, std::string_view host, std::string_view port) {
    const auto address = address_bytes(host);
    for (const auto& raw : no_proxy) {
        std::string_view entry = ascii::trim(raw, " \t");
        if (entry.empty())
            continue;
        if (entry == "*")
            return true;
        if (address) {
            if (in_block(*address, ascii::trim(entry, "[]")))
                return true;
            continue;
        }
        // "name:port" restricts the entry to that port.
        std::string_view name = entry;
        if (const auto colon = entry.rfind(':');
            colon != std::string_view::npos && entry.find(':') == colon && !entry.starts_with('[')) {
            if (entry.substr(colon + 1) != port)
                continue;
            name = entry.substr(0, colon);
        }
        if (name.starts_with("*."))
            name.remove_prefix(1);
        if (name.starts_with('.'))
            name.remove_prefix(1);
        const std::string lower = ascii::to_lower(name);
        if (host == lower || (host.size() > lower.size() && host.ends_with(lower) &&
                              host[host.size() - lower.size() - 1] == '.'))
            return true;
    }
    return false;
}

std::vector<std::string> apply_proxy_environment(fetch_config& fetch,
                                                 const std::vector<std::string>& environment,
                                                 bool proxies_configured, bool no_proxy_configured) {
    std::vector<std::string> used;
    auto take = [&](std::string& field, std::initializer_list<std::string_view> names) {
        for (auto name : names) {
            const auto value = value_of(environment, name);
            if (!value.empty()) {
                field = std::string(value);
                used.emplace_back(name);
                return;
            }
        }
    };
    if (!proxies_configured) {
        take(fetch.http_proxy, {"http_proxy"});
        take(fetch.https_proxy, {"https_proxy", "HTTPS_PROXY"});
        take(fetch.proxy, {"all_proxy", "ALL_PROXY"});
    }
    if (!no_proxy_configured) {
        std::string list;
        take(list, {"no_proxy", "NO_PROXY"});
        std::size_t at = 0;
        while (at < list.size()) {
            const auto comma = std::min(list.find(',', at), list.size());
            const auto item = ascii::trim(std::string_view(list).substr(at, comma - at), " \t");
            if (!item.empty())
                fetch.no_proxy.emplace_back(item);
            at = comma + 1;
        }
    }
    return used;
}

std::vector<std::string> fetch_settings_problems(const fetch_config& fetch) {
    std::vector<std::string> problems;
    for (const auto& header : fetch.headers) {
        const auto parsed = parse_header_option(header);
        if (!parsed.field)
            problems.push_back("fetch.headers: " + parsed.problem);
    }
    for (const auto& [origin, userinfo] : fetch.credentials) {
        if (!origin_key(origin))
            problems.push_back("fetch.credentials: \"" + origin +
                               "\" is not an http(s) origin such as https://example.com");
        if (userinfo.find(':') == std::string::npos)
            problems.push_back("fetch.credentials[\"" + origin + "\"] must be \"user:password\"");
        if (has_control_character(userinfo))
            problems.push_back("fetch.credentials[\"" + origin + "\"] holds control characters");
    }
    for (const auto& [key, value] :
         {std::pair<std::string_view, const std::string*>{"fetch.proxy", &fetch.proxy},
          {"fetch.http_proxy", &fetch.http_proxy},
          {"fetch.https_proxy", &fetch.https_proxy}}) {
        std::string why;
        if (!value->empty() && !parse_proxy(*value, &why))
            problems.push_back(std::string(key) + ": " + why); // the value may hold a password: not repeated
    }
    if (fetch.dns.min_ttl.count() < 0 || fetch.dns.max_ttl.count() < 0 || fetch.dns.negative_ttl.count() < 0)
        problems.emplace_back("fetch.dns TTLs must not be negative");
    if (fetch.dns.min_ttl > fetch.dns.max_ttl)
        problems.emplace_back("fetch.dns.min_ttl must not exceed fetch.dns.max_ttl");
    for (const auto& server : fetch.dns.servers) {
        std::string_view host = server;
        if (host.starts_with('[')) {
            host = host.substr(1, host.find(']') == std::string_view::npos ? 0 : host.find(']') - 1);
        } else if (std::count(host.begin(), host.end(), ':') == 1) {
            host = host.substr(0, host.find(':'));
        }
        if (!address_bytes(host))
            problems.push_back("fetch.dns.servers: \"" + server +
                               "\" is not an IP address with an optional port");
    }
    return problems;
}

std::optional<std::string> descriptor_shortfall(std::size_t max_tasks, std::size_t own, std::uint64_t soft,
                                                std::uint64_t hard) {
    const std::uint64_t needed = static_cast<std::uint64_t>(max_tasks) + own;
    if (needed <= soft)
        return std::nullopt;
    std::string text = "max_tasks " + std::to_string(max_tasks) + " and about " + std::to_string(own) +
                       " descriptors of the crawler's own need " + std::to_string(needed) +
                       ", over the limit of " + std::to_string(soft) + " open files";
    if (hard > soft)
        text += " (it can be raised to " + std::to_string(hard) + ": ulimit -n " + std::to_string(hard) + ")";
    else
        text += " (ulimit -n; the hard limit is " + std::to_string(hard) + ")";
    const std::uint64_t fits = soft > own ? soft - own : 0;
    text += ": connections will wait for free descriptors, so at most about " + std::to_string(fits) +
            " fetches run at once; lower max_tasks or raise the limit";
    return text;
}

} // namespace asiocrawl::detail
