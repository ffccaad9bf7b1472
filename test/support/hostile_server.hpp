// A TCP server on 127.0.0.1 whose every answer is a coroutine writing whatever bytes it likes, as slowly as
// it likes: stalls, trickles, endless bodies, resets, lies. For the hostile-input tests.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace asiocrawl::test {

/// A page of links, one <a href> per entry.
inline std::string links_to(const std::vector<std::string>& hrefs) {
    std::string html = "<html><body>";
    for (const auto& h : hrefs)
        html += "<a href=\"" + h + "\">x</a>\n";
    return html + "</body></html>";
}

/// The head of a 200 text/html answer with `fields` (each ending in CRLF) added, up to its blank line.
inline std::string head_fields(const std::string& fields) {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + fields + "\r\n";
}

class hostile_server {
public:
    struct shared;

    /// One request, and the connection to answer it on.
    class exchange {
    public:
        exchange(std::shared_ptr<shared> server, std::shared_ptr<boost::asio::ip::tcp::socket> socket,
                 std::string head)
            : server_(std::move(server))
            , socket_(std::move(socket))
            , head_(std::move(head)) {}

        /// The request head as received (request line and fields).
        const std::string& head() const { return head_; }
        /// The request target ("/path?query").
        std::string target() const {
            const auto first = head_.find(' ');
            const auto second = head_.find(' ', first + 1);
            return head_.substr(first + 1, second - first - 1);
        }
        /// False once the client has gone or the server stopped.
        boost::asio::awaitable<bool> write(std::string bytes) {
            auto [ec, n] = co_await boost::asio::async_write(*socket_, boost::asio::buffer(bytes), tuple);
            (void)n;
            co_return !ec && !server_->stopping;
        }
        /// Waits, or returns false early when the server stops.
        boost::asio::awaitable<bool> pause(std::chrono::milliseconds d) {
            auto timer = std::make_shared<boost::asio::steady_timer>(socket_->get_executor(), d);
            server_->timers.insert(timer);
            co_await timer->async_wait(tuple);
            server_->timers.erase(timer);
            co_return !server_->stopping;
        }
        /// Holds the connection open, silent, until the server stops.
        boost::asio::awaitable<void> stall() {
            // No co_await inside loop conditions here: g++ 12 miscompiles some of them (SIGILL at run time).
            for (;;) {
                const bool running = co_await pause(std::chrono::milliseconds{3'600'000});
                if (!running)
                    co_return;
            }
        }
        /// Writes `bytes` every `interval` (0: as fast as the client reads) until the client goes or the
        /// server stops; at most `times` times.
        boost::asio::awaitable<void> repeat(std::string bytes, std::chrono::milliseconds interval,
                                            std::size_t times = static_cast<std::size_t>(-1)) {
            for (std::size_t i = 0; i < times; ++i) {
                const bool sent = co_await write(bytes);
                if (!sent)
                    co_return;
                if (interval.count() > 0) {
                    const bool running = co_await pause(interval);
                    if (!running)
                        co_return;
                }
            }
        }
        /// Ends the connection with a TCP reset instead of a clean close.
        void reset() {
            boost::system::error_code ignored;
            socket_->set_option(boost::asio::socket_base::linger(true, 0), ignored);
            socket_->close(ignored);
        }
        /// After the answer, wait for another request on this connection (closed otherwise).
        bool keep_open = false;

    private:
        std::shared_ptr<shared> server_;
        std::shared_ptr<boost::asio::ip::tcp::socket> socket_;
        std::string head_;
    };

    using handler = std::function<boost::asio::awaitable<void>(exchange&)>;

    struct shared {
        shared(boost::asio::any_io_executor ex, handler fallback)
            : acceptor(ex, {boost::asio::ip::make_address("127.0.0.1"), 0})
            , port(acceptor.local_endpoint().port())
            , fallback(std::move(fallback)) {}
        boost::asio::ip::tcp::acceptor acceptor;
        unsigned short port; // kept: the acceptor forgets it once closed
        std::map<std::string, handler> routes;
        handler fallback;
        std::set<std::shared_ptr<boost::asio::steady_timer>> timers;
        std::vector<std::weak_ptr<boost::asio::ip::tcp::socket>> sockets;
        std::vector<std::string> requests; // targets, in arrival order
        std::vector<std::string> heads;
        std::size_t connections = 0;
        bool stopping = false;
    };

    /// Unknown targets go to `fallback` (default: a 404).
    explicit hostile_server(boost::asio::any_io_executor executor, handler fallback = not_found)
        : state_(std::make_shared<shared>(executor, std::move(fallback))) {
        boost::asio::co_spawn(executor, accept_loop(state_), boost::asio::detached);
    }
    ~hostile_server() { stop(); }
    hostile_server(const hostile_server&) = delete;
    hostile_server& operator=(const hostile_server&) = delete;

    void route(const std::string& target, handler h) { state_->routes[target] = std::move(h); }
    /// Answers every target without a route of its own.
    void fallback(handler h) { state_->fallback = std::move(h); }
    /// A complete, well-formed answer.
    void page(const std::string& target, std::string body, std::string content_type = "text/html") {
        route(target,
              [bytes = response(200, body, content_type)](exchange& ex) -> boost::asio::awaitable<void> {
                  co_await ex.write(bytes);
              });
    }

    unsigned short port() const { return state_->port; }
    std::string origin() const { return "http://127.0.0.1:" + std::to_string(port()); }
    std::string url(const std::string& target) const { return origin() + target; }
    const std::vector<std::string>& requests() const { return state_->requests; }
    const std::vector<std::string>& heads() const { return state_->heads; }
    std::size_t connections() const { return state_->connections; }

    /// Closes the listener and every connection, and ends every pause and stall.
    void stop() {
        state_->stopping = true;
        boost::system::error_code ignored;
        state_->acceptor.close(ignored);
        for (auto& weak : state_->sockets)
            if (auto socket = weak.lock())
                socket->close(ignored);
        for (const auto& timer : state_->timers)
            timer->cancel();
    }

    static std::string response(int status, const std::string& body,
                                const std::string& content_type = "text/html",
                                const std::string& extra_fields = {}) {
        return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + content_type +
               "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n" +
               extra_fields + "\r\n" + body;
    }

    static boost::asio::awaitable<void> not_found(exchange& ex) { co_await ex.write(response(404, "no")); }

private:
    static constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

    static boost::asio::awaitable<void> accept_loop(std::shared_ptr<shared> s) {
        for (;;) {
            auto [ec, socket] = co_await s->acceptor.async_accept(tuple);
            if (ec || s->stopping)
                co_return;
            ++s->connections;
            auto shared_socket = std::make_shared<boost::asio::ip::tcp::socket>(std::move(socket));
            s->sockets.push_back(shared_socket);
            boost::asio::co_spawn(s->acceptor.get_executor(), serve(s, shared_socket), boost::asio::detached);
        }
    }

    static boost::asio::awaitable<void> serve(std::shared_ptr<shared> s,
                                              std::shared_ptr<boost::asio::ip::tcp::socket> socket) {
        boost::asio::streambuf buffer(64 * 1024);
        for (;;) {
            auto [ec, n] = co_await boost::asio::async_read_until(*socket, buffer, "\r\n\r\n", tuple);
            if (ec || s->stopping)
                co_return;
            std::string head(boost::asio::buffers_begin(buffer.data()),
                             boost::asio::buffers_begin(buffer.data()) + static_cast<std::ptrdiff_t>(n));
            buffer.consume(n);
            exchange ex(s, socket, std::move(head));
            s->requests.push_back(ex.target());
            s->heads.push_back(ex.head());
            auto route = s->routes.find(ex.target());
            const handler& h = route != s->routes.end() ? route->second : s->fallback;
            co_await h(ex);
            if (!ex.keep_open || s->stopping || !socket->is_open())
                break;
        }
        boost::system::error_code ignored;
        socket->shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
        socket->close(ignored);
    }

    std::shared_ptr<shared> state_;
};

} // namespace asiocrawl::test
