// A TCP server on 127.0.0.1 that answers each request with exact bytes, for replies no HTTP library would
// produce: interim responses, garbage, truncated messages.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <functional>
#include <memory>
#include <string>

namespace asiocrawl::test {

class raw_server {
public:
    /// `reply(n)` gives the bytes written after the n-th request head (0-based); the connection closes after.
    raw_server(boost::asio::any_io_executor executor, std::function<std::string(std::size_t)> reply)
        : state_(std::make_shared<state>(executor, std::move(reply))) {
        boost::asio::co_spawn(executor, accept_loop(state_), boost::asio::detached);
    }
    ~raw_server() { stop(); }

    unsigned short port() const { return state_->acceptor.local_endpoint().port(); }
    std::string origin() const { return "http://127.0.0.1:" + std::to_string(port()); }
    std::size_t requests() const { return state_->requests; }
    void stop() {
        boost::system::error_code ignored;
        state_->acceptor.close(ignored);
    }

private:
    struct state {
        state(boost::asio::any_io_executor ex, std::function<std::string(std::size_t)> r)
            : acceptor(ex, {boost::asio::ip::make_address("127.0.0.1"), 0})
            , reply(std::move(r)) {}
        boost::asio::ip::tcp::acceptor acceptor;
        std::function<std::string(std::size_t)> reply;
        std::size_t requests = 0;
    };

    static boost::asio::awaitable<void> accept_loop(std::shared_ptr<state> s) {
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        for (;;) {
            auto [ec, socket] = co_await s->acceptor.async_accept(tuple);
            if (ec)
                co_return;
            boost::asio::streambuf head;
            auto [read_ec, n] = co_await boost::asio::async_read_until(socket, head, "\r\n\r\n", tuple);
            if (read_ec)
                continue;
            const std::string bytes = s->reply(s->requests++);
            co_await boost::asio::async_write(socket, boost::asio::buffer(bytes), tuple);
            socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
        }
    }

    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::test
