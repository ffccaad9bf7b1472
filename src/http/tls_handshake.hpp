// The client side of TLS for a connected socket: the context (TLS 1.2 at least, the system's roots loaded
// with the first handshake, tls.ca_file, or no verification with tls.insecure), the turns that bound
// handshakes in progress (tls.max_handshakes), and the handshake itself: SNI and verification against the
// host the URL names, whatever address (override, proxy tunnel) the socket reached, with words for the log
// when it fails.
#pragma once

#include "http/fetch_result.hpp"
#include "http/socket_waits.hpp"
#include "http/tls_stream.hpp"

#include <asiocrawl/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace asiocrawl::detail {

/// ALPN offers (RFC 7301 wire format): HTTP/1.1 alone (fetch.http2: off, and every HTTP/1.1 connection the
/// HTTP/1.1 transport opens itself), h2 first (auto), h2 alone (only).
constexpr std::string_view alpn_http11{"\x08http/1.1", 9};
constexpr std::string_view alpn_h2_http11{"\x02h2\x08http/1.1", 12};
constexpr std::string_view alpn_h2{"\x02h2", 3};

class tls_client {
public:
    using clock_type = std::chrono::steady_clock;

    /// Throws boost::system::system_error when tls.ca_file cannot be loaded.
    tls_client(boost::asio::any_io_executor executor, const tls_config& config);
    tls_client(const tls_client&) = delete;
    tls_client& operator=(const tls_client&) = delete;

    /// The TLS handshake on `c`'s connected socket, within c.deadline (a turn included), verifying `host` (as
    /// on the wire), offering the protocols `alpn` (RFC 7301 wire format: length-prefixed names; the
    /// alpn_* constants). c.h2 says whether the server chose "h2". On failure, false, the socket closed, and
    /// `out` says why.
    boost::asio::awaitable<bool> handshake(connection& c, std::string host, socket_waits& waits,
                                           std::unique_ptr<fetch_result>& out, std::string_view alpn);

private:
    /// A connection waiting for a handshake turn: its timer (in its own frame) ends at its deadline, or when
    /// a turn is handed to it.
    struct handshake_waiter {
        boost::asio::steady_timer* timer;
        bool granted = false;
    };

    /// Holds a handshake turn for as long as it lives; hands it to the next waiter, in order of arrival.
    struct handshake_turn {
        tls_client* owner = nullptr;
        handshake_turn() = default;
        explicit handshake_turn(tls_client& c)
            : owner(&c) {}
        handshake_turn(handshake_turn&& other) noexcept
            : owner(std::exchange(other.owner, nullptr)) {}
        handshake_turn& operator=(handshake_turn&&) = delete;
        ~handshake_turn();
    };

    /// A turn to shake hands by `deadline`; none (owner null) when the deadline passed or the wait was
    /// cancelled first.
    boost::asio::awaitable<handshake_turn> take_turn(clock_type::time_point deadline);

    /// The TLS context, with the system's trust store loaded once it is needed. A store that cannot be read
    /// leaves only tls.ca_file to trust: certificates then fail verification, as they should.
    SSL_CTX* trusted_roots();

    /// Why a handshake failed, in our terms, with words for the log.
    std::pair<boost::system::error_code, std::string> classify_failure(connection& c, int ssl_error,
                                                                       const std::string& host) const;

    boost::asio::any_io_executor executor_;
    tls_config config_;
    boost::asio::ssl::context context_;
    bool system_roots_loaded_ = false;
    std::size_t in_progress_ = 0;
    std::list<handshake_waiter*> queue_;
};

} // namespace asiocrawl::detail
