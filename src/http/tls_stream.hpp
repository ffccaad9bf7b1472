// The socket layer under every transport: a TCP socket, with an OpenSSL session over its descriptor for
// https, both driven the same way: non-blocking reads and writes, made when the socket is ready (the waits
// are socket_waits'). Nothing Beast or Asio buffers sits between OpenSSL and the socket, so a TLS connection
// costs OpenSSL's state and no more: with SSL_MODE_RELEASE_BUFFERS its record buffers exist only while bytes
// are in them.
#pragma once

#include "http/fetch_settings.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/intrusive/set_hook.hpp>
#include <boost/system/error_code.hpp>

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace asiocrawl::detail {

struct ssl_free {
    void operator()(SSL* s) const noexcept { SSL_free(s); }
};

/// A keep-alive connection and the read buffer that belongs to it (bytes past one response stay with it). The
/// buffer holds storage only while bytes are being parsed: a connection waiting for an answer, or idle in the
/// pool, has none.
struct connection {
    using clock_type = std::chrono::steady_clock;

    /// `live` counts the connections that exist (each may hold a descriptor).
    connection(const boost::asio::any_io_executor& executor, std::size_t& live)
        : socket(executor)
        , live_count(live) {
        ++live_count;
    }
    ~connection() { --live_count; }
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    boost::asio::ip::tcp::socket socket;
    std::size_t& live_count;
    /// The TLS session over the socket's descriptor, for https.
    std::unique_ptr<SSL, ssl_free> tls;
    boost::beast::flat_buffer buffer;
    /// When a connection idle in the pool is no longer used: our idle_timeout, or sooner when the server
    /// said how long it keeps idle connections (Keep-Alive: timeout=N).
    clock_type::time_point reuse_until{};
    std::string remote_ip;
    /// When the request in progress was sent (wall clock, for archive records).
    std::chrono::system_clock::time_point request_started{};
    /// When the connect, handshake or request in progress times out.
    clock_type::time_point deadline{};
    /// Links the connection into the deadline set of socket_waits while it waits on its socket (unlinks
    /// itself when destroyed).
    boost::intrusive::set_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>
        waiting_link;
    /// The proxy an http request goes through: the request then names the whole URL (absolute form) and
    /// carries the proxy's credentials. Null for direct connections and tunnels.
    const proxy_endpoint* http_proxy = nullptr;
    /// Set when the deadline passed during a wait (the socket is then closed).
    bool timed_out = false;
    /// TLS asked to write before it can read on (a renegotiation or key update).
    bool read_wants_write = false;
    /// The TLS handshake's ALPN chose "h2" (RFC 7301): the connection speaks HTTP/2.
    bool h2 = false;

    /// Starts a TLS session (client side) over the connected socket, through a BIO that sends with
    /// MSG_NOSIGNAL. The handshake is the caller's (tls_client).
    void attach_tls(SSL_CTX* context);

    /// Bytes that have arrived, read without waiting; 0 when there are none yet. `ec` is eof when the peer
    /// has closed.
    std::size_t read_now(boost::asio::mutable_buffer into, boost::system::error_code& ec);

    /// Writes what the socket takes now; 0 when it takes nothing yet. `wants_read`: TLS must read first.
    std::size_t write_now(boost::asio::const_buffer bytes, boost::system::error_code& ec, bool& wants_read);

    /// Decrypted or received bytes OpenSSL holds that the socket will not signal again.
    bool has_pending() const noexcept { return tls && SSL_has_pending(tls.get()) == 1; }

    /// True when nothing has arrived on an idle connection since its last response: no byte, no close. We
    /// never pipeline, so any byte that arrives while a connection idles answers nothing we asked, and would
    /// be read as the next request's response (response queue poisoning). TLS records that carry no data (a
    /// session ticket, a key update) are taken in and are no reason to give the connection up.
    bool is_quiet();

    /// Before a wait: OpenSSL's record buffers go unless they hold bytes. SSL_MODE_RELEASE_BUFFERS alone
    /// keeps the read buffer after a handshake and after records that carry no data (session tickets), and
    /// that is 16 KiB a waiting connection.
    void release_tls_buffers() noexcept {
        if (tls)
            SSL_free_buffers(tls.get());
    }

    /// An OpenSSL result as an error: none when it only has to wait (`wants_write` says for what).
    boost::system::error_code tls_error(int ssl_error, bool& wants_write, bool writing);
};

/// Ends a connection that is in a clean state. A TLS peer gets a close_notify when the socket takes it at
/// once (RFC 8446 6.1 does not ask us to wait for theirs), so closing never delays anything.
void retire(std::unique_ptr<connection> c);

} // namespace asiocrawl::detail
