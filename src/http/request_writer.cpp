#include "http/request_writer.hpp"

#include "url/url_host.hpp"
#include "util/ascii.hpp"

#include <asiocrawl/version.hpp>

#include <boost/url/parse.hpp>

#include <chrono>
#include <stdexcept>

namespace asiocrawl::detail {

bool sendable_validator(std::string_view value) noexcept {
    if (value.empty() || value.size() > max_validator_bytes)
        return false;
    for (const char c : value) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && c != '\t') || byte == 0x7f)
            return false;
    }
    return true;
}

std::string_view cookie_path(boost::urls::url_view url) noexcept {
    const std::string_view path = url.encoded_path();
    return path.empty() ? std::string_view("/") : path;
}

request_writer::request_writer(const fetch_config& config, const cookie_jar* jar)
    : user_agent_(without_controls(config.user_agent.empty() ? default_user_agent(config.contact_url)
                                                             : config.user_agent))
    , jar_(jar) {
    bool own_agent = true, own_accept = true;
    std::string extra;
    for (const auto& text : config.headers) {
        auto parsed = parse_header_option(text);
        if (!parsed.field)
            throw std::invalid_argument("fetch.headers: " + parsed.problem);
        const auto& [name, value] = *parsed.field;
        if (ascii::iequals(name, "user-agent"))
            own_agent = false;
        if (ascii::iequals(name, "accept"))
            own_accept = false;
        if (ascii::iequals(name, "if-none-match"))
            user_if_none_match_ = true;
        if (ascii::iequals(name, "if-modified-since"))
            user_if_modified_since_ = true;
        if (ascii::iequals(name, "cookie")) {
            user_cookie_ += (user_cookie_.empty() ? "" : "; ") + value;
            continue;
        }
        if (ascii::iequals(name, "accept-encoding"))
            continue; // decoding is ours: fetch.compression decides what we ask for
        extra.append(name).append(": ").append(value).append("\r\n");
    }
    if (own_agent)
        fixed_fields_.append("User-Agent: ").append(user_agent_).append("\r\n");
    if (own_accept)
        fixed_fields_.append("Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\n");
    fixed_fields_.append("Accept-Encoding: ")
        .append(config.compression ? "gzip, deflate, br, zstd" : "identity");
    fixed_fields_.append("\r\n").append(extra);
    for (const auto& [origin, userinfo] : config.credentials) {
        auto key = origin_key(origin);
        if (!key)
            throw std::invalid_argument("fetch.credentials: \"" + origin + "\" is not an http(s) origin");
        authorization_by_origin_[*key] = basic_authorization(userinfo);
    }
}

std::string request_writer::request(std::string_view url_text, const std::string& origin,
                                    const proxy_endpoint* http_proxy,
                                    std::pair<std::size_t, std::size_t>& proxy_fields,
                                    conditional_fields conditional) const {
    const boost::urls::url_view url = boost::urls::parse_uri(url_text).value();
    const std::string host_and_port = host_for_wire(url.encoded_host_and_port());
    const std::string_view target = url.encoded_target(); // path and query, without the fragment
    std::string r;
    r.reserve(256 + url.buffer().size() + fixed_fields_.size());
    r.append("GET ");
    if (http_proxy)
        r.append(url.scheme()).append("://").append(host_and_port); // absolute form (RFC 9112 3.2.2)
    if (url.encoded_path().empty())
        r.append("/");
    r.append(target);
    r.append(" HTTP/1.1\r\nHost: ").append(host_and_port).append("\r\n").append(fixed_fields_);
    r.append(conditional.extra_fields);
    if (!user_if_none_match_ && sendable_validator(conditional.if_none_match))
        r.append("If-None-Match: ").append(conditional.if_none_match).append("\r\n");
    if (!user_if_modified_since_ && sendable_validator(conditional.if_modified_since))
        r.append("If-Modified-Since: ").append(conditional.if_modified_since).append("\r\n");
    if (auto it = authorization_by_origin_.find(origin); it != authorization_by_origin_.end())
        r.append("Authorization: ").append(it->second).append("\r\n");
    std::string cookies = user_cookie_;
    if (jar_) {
        const std::string host = host_for_wire(url.encoded_host_address());
        const std::string jar_cookies =
            jar_->cookie_header({url.scheme(), host, cookie_path(url)}, std::chrono::system_clock::now());
        if (!jar_cookies.empty())
            cookies += (cookies.empty() ? "" : "; ") + jar_cookies;
    }
    if (!cookies.empty())
        r.append("Cookie: ").append(cookies).append("\r\n");
    proxy_fields = {r.size(), 0};
    if (http_proxy && !http_proxy->authorization.empty()) {
        r.append("Proxy-Authorization: ").append(http_proxy->authorization).append("\r\n");
        proxy_fields.second = r.size() - proxy_fields.first;
    }
    r.append("\r\n"); // HTTP/1.1 keeps the connection alive unless told otherwise
    return r;
}

} // namespace asiocrawl::detail
