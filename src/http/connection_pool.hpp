// Where connections come from and go back to: the idle pool keyed by origin (scheme://host:port), the rules
// for taking one back (a quiet connection still inside its reuse window) and for pooling one (our
// idle_timeout, shortened by the server's Keep-Alive: timeout=N, at most max_idle_per_origin per origin), and
// the opening of sockets when every descriptor of the process is in use (an idle connection is closed, or the
// connect waits for one of ours to end). Protocol-free: a connection goes back only when its protocol says it
// may.
#pragma once

#include "http/tls_stream.hpp"
#include "http/transport.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail {

/// Where a connection goes, from the URL: the host as on the wire (percent-decoded, IPv6 without brackets).
struct request_target {
    bool https = false;
    std::string host;
    std::string port;
};

/// The connection target of an http(s) URL; nullopt when it does not parse or has no host. The URL is parsed
/// here (Boost.URL, without allocating), so that no coroutine frame holds a url_view across its waits.
std::optional<request_target> target_of(std::string_view url);

/// The pool key (scheme://host:port, the host as in the URL) of an http or https URL; empty for anything
/// else.
std::string pool_key(std::string_view url);

class connection_pool {
public:
    using clock_type = std::chrono::steady_clock;

    /// `stats` receives idle_connections_dropped and descriptor_waits.
    connection_pool(boost::asio::any_io_executor executor, clock_type::duration idle_timeout,
                    std::size_t max_idle_per_origin, fetcher_stats& stats);
    connection_pool(const connection_pool&) = delete;
    connection_pool& operator=(const connection_pool&) = delete;

    /// A new connection, counted among those that exist until it is destroyed.
    std::unique_ptr<connection> make_connection() { return std::make_unique<connection>(executor_, live_); }

    /// A pooled connection that is still fresh enough to try and quiet (connection::is_quiet), or nullptr.
    std::unique_ptr<connection> take(const std::string& origin_key);

    /// Pools a connection after a cleanly framed keep-alive response, for at most our idle_timeout, and
    /// less when the server said it keeps idle connections for less (RFC 9112 9.3 leaves that to Keep-Alive:
    /// a connection the server is about to close would fail the next request). A server's `timeout=N` is
    /// shortened by a second (by half below two), so that the server is not closing it as we send.
    void give_back(const std::string& origin_key, std::unique_ptr<connection> c,
                   std::optional<std::chrono::seconds> server_keeps_idle);

    /// Closes every idle connection.
    void close_all();

    /// Opens `c`'s socket. Every descriptor of the process in use (EMFILE, ENFILE) is our own limit, not the
    /// server's failure, and passes: an idle pooled connection is closed to free one, or the attempt waits
    /// for a connection of ours to end. That wait is not the server's: `deadline` moves with it. Only when
    /// no other connection of ours exists, so that none will free a descriptor (they are held elsewhere in
    /// the process), does it give up after `connect_timeout`, with an error worth another try.
    boost::asio::awaitable<boost::system::error_code> open_socket(connection& c,
                                                                  const boost::asio::ip::tcp& protocol,
                                                                  clock_type::time_point& deadline,
                                                                  clock_type::duration connect_timeout);

private:
    /// Closes one idle pooled connection, to free its descriptor; false when none is pooled.
    bool drop_one();

    boost::asio::any_io_executor executor_;
    clock_type::duration idle_timeout_;
    std::size_t max_idle_per_origin_;
    fetcher_stats& stats_;
    /// Connections that exist, pooled or in use (each holds a descriptor once open). Declared before the
    /// pool, whose connections count themselves out when it is destroyed.
    std::size_t live_ = 0;
    std::unordered_map<std::string, std::vector<std::unique_ptr<connection>>> idle_;
};

} // namespace asiocrawl::detail
