// A small HTTP/1.1 server on 127.0.0.1 for the demo site and the integration tests. It runs on an executor
// the caller owns (usually the same io_context as the crawler under test), and can misbehave on purpose: a
// handler may delay, hang, drop the connection or answer normally. It records what it was asked.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl::demo {

using http_request = boost::beast::http::request<boost::beast::http::string_body>;
using http_response = boost::beast::http::response<boost::beast::http::string_body>;

/// Answers one request. Return a response to send it (the server sets Content-Length and keep-alive from the
/// request unless the handler set them); return nullopt to close the connection without answering. A handler
/// may co_await timers to delay; to hang forever, co_await http_server::wait_stopped().
using request_handler =
    std::function<boost::asio::awaitable<std::optional<http_response>>(const http_request&)>;

/// One request as the server saw it.
struct logged_request {
    std::string method;
    std::string target;     ///< as sent: "/a/b?q"
    std::string host;       ///< the Host header
    std::size_t connection; ///< 1-based serial number of the TCP connection it arrived on
};

/// Single-threaded: call every member on the thread running `executor`. A connection with no complete request
/// for 60 s is closed. A handler that throws gets a 500 answer with "Connection: close"; a handler still
/// running when stop() is called is cancelled (its pending operation completes with operation_aborted).
class http_server {
public:
    /// Binds 127.0.0.1:`port` (0: an ephemeral port; SO_REUSEADDR set) and starts accepting on `executor`.
    /// Throws boost::system::system_error when the port cannot be bound.
    http_server(boost::asio::any_io_executor executor, request_handler handler, unsigned short port = 0);
    /// The same, speaking HTTPS: every connection starts with a TLS handshake using `tls` (a server context
    /// with its certificate and key loaded), which must outlive the server. A failed handshake closes the
    /// connection; it still counts in connections().
    http_server(boost::asio::any_io_executor executor, request_handler handler,
                boost::asio::ssl::context& tls, unsigned short port = 0);
    /// Stops (see stop()).
    ~http_server();
    http_server(const http_server&) = delete;
    http_server& operator=(const http_server&) = delete;

    unsigned short port() const noexcept;
    /// "http://127.0.0.1:<port>", or "https://..." for a TLS server.
    std::string origin() const;

    /// Closes the acceptor and every connection, and wakes every handler waiting in wait_stopped(), so that
    /// the executor runs out of work. Idempotent.
    void stop();

    /// Completes when stop() is called: for handlers that must never answer.
    boost::asio::awaitable<void> wait_stopped();

    /// Requests read so far (a request is counted when its head and body have been read).
    std::size_t requests() const noexcept;
    /// Requests being handled right now (read, response not yet fully written).
    std::size_t in_flight() const noexcept;
    /// The largest in_flight() ever observed.
    std::size_t peak_in_flight() const noexcept;
    /// TCP connections accepted so far.
    std::size_t connections() const noexcept;
    /// Every request, in arrival order.
    const std::vector<logged_request>& log() const noexcept;

private:
    http_server(boost::asio::any_io_executor executor, request_handler handler, unsigned short port,
                boost::asio::ssl::context* tls);
    struct state;
    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::demo
