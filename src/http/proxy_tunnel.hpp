// Proxies: which one a URL goes through (fetch.proxy, http_proxy, https_proxy, no_proxy; never for
// host_overrides or loopback hosts), and the CONNECT tunnel an https URL takes through it. An http URL
// through a proxy needs no tunnel: it is requested in absolute form (request_writer).
#pragma once

#include "http/connection_pool.hpp"
#include "http/fetch_result.hpp"
#include "http/fetch_settings.hpp"
#include "http/socket_waits.hpp"
#include "http/tls_stream.hpp"

#include <asiocrawl/config.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>

namespace asiocrawl::detail {

class proxy_routes {
public:
    /// Throws std::invalid_argument when a proxy setting does not parse.
    explicit proxy_routes(const fetch_config& config);

    /// The proxy `t` goes through, or null: none configured, a host_overrides host, one in no_proxy, or a
    /// loopback host (a proxy's own loopback is not ours).
    const proxy_endpoint* route_for(const request_target& t) const;

private:
    const fetch_config& config_;
    std::optional<proxy_endpoint> http_via_, https_via_;
};

/// Opens a CONNECT tunnel to `t` through the proxy `c` is connected to, within c.deadline. On failure, false
/// and `out` says why (the proxy's credentials are never part of it).
boost::asio::awaitable<bool> open_tunnel(connection& c, request_target t, const proxy_endpoint& via,
                                         const std::string& user_agent, socket_waits& waits,
                                         std::unique_ptr<fetch_result>& out);

} // namespace asiocrawl::detail
