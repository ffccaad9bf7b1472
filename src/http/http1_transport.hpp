// HTTP/1.1 (and https over it) behind the transport seam: one request at a time on a connection, kept alive
// in the pool between requests, never pipelined. The parts are files of their own: tls_stream (the socket and
// its TLS session), socket_waits (deadlines), tls_handshake, connection_pool, proxy_tunnel, request_writer,
// response_reader; this file joins them into an attempt. Names are resolved by dns_resolver (c-ares on this
// executor). A proxy, when one applies, is connected to instead of the URL's host: an https URL then goes
// through a CONNECT tunnel and TLS is verified end to end against the URL's host; an http URL is requested in
// absolute form.
#pragma once

#include "http/connection_pool.hpp"
#include "http/cookie_jar.hpp"
#include "http/dns_resolver.hpp"
#include "http/proxy_tunnel.hpp"
#include "http/rate_limiter.hpp"
#include "http/request_writer.hpp"
#include "http/response_reader.hpp"
#include "http/socket_waits.hpp"
#include "http/tls_handshake.hpp"
#include "http/transport.hpp"

#include <asiocrawl/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

class http1_transport final : public transport {
public:
    /// `max_idle_per_origin` bounds the pool. Throws as fetcher's constructor says.
    http1_transport(boost::asio::any_io_executor executor, fetch_config config,
                    std::size_t max_idle_per_origin);

    boost::asio::awaitable<void> fetch_into(std::string_view url, fetch_options options,
                                            std::unique_ptr<fetch_result>& out) override {
        return fetch_on(nullptr, url, options, out); // no frame of its own
    }
    void close_idle() override;
    std::vector<std::string> finish() override;
    const fetcher_stats& stats() const noexcept override { return stats_; }
    fetcher_stats& counters() noexcept { return stats_; }
    const dns_stats& dns() const noexcept override { return resolver_.stats(); }
    std::size_t cookies() const noexcept override { return jar_ ? jar_->size() : 0; }

    // For the HTTP/2 transport (src/http/http2_transport.hpp), which opens connections here and gives back
    // those that did not negotiate h2.

    /// A new connection for `url` (resolve, connect, proxy tunnel, TLS offering `alpn`), within
    /// connect_timeout; nullptr and `out` says why on failure.
    boost::asio::awaitable<std::unique_ptr<connection>>
    open_connection(std::string_view url, std::unique_ptr<fetch_result>& out, std::string_view alpn) {
        return connect(url, out, alpn);
    }
    /// fetch_into, on `fresh` (a connection just opened by open_connection, which negotiated HTTP/1.1) when
    /// not null, else on a pooled or new one.
    boost::asio::awaitable<void> fetch_on(std::unique_ptr<connection> fresh, std::string_view url,
                                          fetch_options options, std::unique_ptr<fetch_result>& out);
    const fetch_config& config() const noexcept { return config_; }
    const request_writer& writer() const noexcept { return writer_; }
    const response_reader& reader() const noexcept { return reader_; }
    const proxy_routes& proxies() const noexcept { return proxies_; }
    /// fetch_config::limit_rate's bucket, shared with HTTP/2's reads; null without a limit.
    rate_limiter* limiter() noexcept { return limiter_ ? &*limiter_ : nullptr; }

private:
    using clock_type = std::chrono::steady_clock;

    boost::asio::awaitable<boost::system::error_code>
    endpoints_for(const request_target& t, const proxy_endpoint* via, clock_type::time_point deadline,
                  std::vector<boost::asio::ip::tcp::endpoint>& endpoints);
    boost::asio::awaitable<std::unique_ptr<connection>>
    connect(std::string_view url, std::unique_ptr<fetch_result>& out, std::string_view alpn = alpn_http11);
    boost::asio::awaitable<boost::system::error_code> send(connection& c, std::string_view url,
                                                           const std::string& origin,
                                                           const fetch_options& options,
                                                           std::unique_ptr<fetch_result>& out);
    boost::asio::awaitable<void> throttle(connection& c, reading& r);
    void load_cookies();
    std::vector<std::string> save_cookies() const;

    // Declared in the order they are needed: the writer takes the jar, the reader the jar and the limiter;
    // the pool outlives the waits on its connections.
    boost::asio::any_io_executor executor_;
    fetch_config config_;
    fetcher_stats stats_;
    /// fetch_config::limit_rate, shared by every connection.
    std::optional<rate_limiter> limiter_;
    std::optional<cookie_jar> jar_;
    tls_client tls_;
    dns_resolver resolver_;
    request_writer writer_;
    proxy_routes proxies_;
    response_reader reader_;
    connection_pool pool_;
    socket_waits waits_;
};

} // namespace asiocrawl::detail
