#include "http/proxy_tunnel.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/error.hpp>

#include <algorithm>
#include <stdexcept>

namespace asiocrawl::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

namespace {

/// Largest answer to CONNECT a proxy may send (its head; a tunnel answer has no body).
constexpr std::size_t max_tunnel_head = 16 * 1024;

std::optional<proxy_endpoint> proxy_setting(const std::string& value, std::string_view key) {
    if (value.empty())
        return std::nullopt;
    std::string why;
    auto proxy = parse_proxy(value, &why);
    if (!proxy)
        throw std::invalid_argument(std::string(key) + ": " + why);
    return proxy;
}

bool is_loopback_host(const std::string& host) {
    error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec)
        return host == "localhost" || host.ends_with(".localhost");
    return address.is_loopback() ||
           (address.is_v6() && address.to_v6().is_v4_mapped() &&
            asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).is_loopback());
}

} // namespace

proxy_routes::proxy_routes(const fetch_config& config)
    : config_(config) {
    auto all = proxy_setting(config.proxy, "fetch.proxy");
    http_via_ = proxy_setting(config.http_proxy, "fetch.http_proxy");
    https_via_ = proxy_setting(config.https_proxy, "fetch.https_proxy");
    if (!http_via_)
        http_via_ = all;
    if (!https_via_)
        https_via_ = all;
}

const proxy_endpoint* proxy_routes::route_for(const request_target& t) const {
    const auto& via = t.https ? https_via_ : http_via_;
    if (!via || config_.host_overrides.contains(t.host) || bypasses_proxy(config_.no_proxy, t.host, t.port) ||
        is_loopback_host(t.host))
        return nullptr;
    return &*via;
}

asio::awaitable<bool> open_tunnel(connection& c, request_target t, const proxy_endpoint& via,
                                  const std::string& user_agent, socket_waits& waits,
                                  std::unique_ptr<fetch_result>& out) {
    const std::string authority =
        t.host.find(':') != std::string::npos ? "[" + t.host + "]:" + t.port : t.host + ":" + t.port;
    std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (!via.authorization.empty())
        request += "Proxy-Authorization: " + via.authorization + "\r\n";
    request += "User-Agent: " + user_agent + "\r\n\r\n";
    error_code ec = co_await waits.write_all(c, request);
    std::string head;
    while (!ec && head.find("\r\n\r\n") == std::string::npos) {
        if (head.size() > max_tunnel_head) {
            out = failed_fetch(error::proxy_failed,
                               "the answer of proxy " + via.display + " to CONNECT is too long");
            co_return false;
        }
        ec = co_await waits.wait_ready(c, tcp::socket::wait_read);
        if (ec)
            break;
        char chunk[512];
        // One byte at a time past what a status line needs would be slow; reading more is safe because a
        // TLS server says nothing before our ClientHello.
        const std::size_t n = c.socket.read_some(asio::buffer(chunk), ec);
        if (ec == asio::error::would_block || ec == asio::error::try_again) {
            ec = {};
            continue;
        }
        head.append(chunk, n);
    }
    if (ec) {
        out = failed_fetch(ec == boost::beast::error::timeout ? error_code(error::connect_timeout) : ec,
                           "while opening a tunnel through proxy " + via.display);
        co_return false;
    }
    const auto end_of_head = head.find("\r\n\r\n") + 4;
    const std::string status_line = head.substr(0, head.find("\r\n"));
    const bool is_http = status_line.starts_with("HTTP/1.") && status_line.size() >= 12;
    const bool ok = is_http && status_line[9] == '2';
    if (!ok || end_of_head != head.size()) {
        out = failed_fetch(error::proxy_failed, "proxy " + via.display + " answered CONNECT " + authority +
                                                    " with \"" +
                                                    without_controls(status_line.substr(0, 120)) + "\"");
        co_return false;
    }
    co_return true;
}

} // namespace asiocrawl::detail
