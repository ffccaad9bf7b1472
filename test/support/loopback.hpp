// Helpers shared by the tests that use real sockets on 127.0.0.1.
#pragma once

#include <asiocrawl_demo/http_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/field.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace asiocrawl::test {

using demo::http_request;
using demo::http_response;

/// Runs the context until it runs out of work. The bound only turns a hang into a failure; no test asserts
/// on how long anything took.
inline void run_bounded(boost::asio::io_context& ctx, std::chrono::seconds limit = std::chrono::seconds{60}) {
    ctx.run_for(limit);
    ASSERT_TRUE(ctx.stopped()) << "the io_context still had work after " << limit.count() << " s: a hang";
}

inline http_response make_response(int status, std::string body = {},
                                   std::string content_type = "text/html; charset=utf-8") {
    http_response res{static_cast<boost::beast::http::status>(status), 11};
    if (!content_type.empty())
        res.set(boost::beast::http::field::content_type, content_type);
    res.body() = std::move(body);
    return res;
}

inline http_response redirect_to(int status, std::string location) {
    auto res = make_response(status, {}, {});
    res.set(boost::beast::http::field::location, location);
    return res;
}

/// A port on 127.0.0.1 where nothing listens (bound, then released).
inline unsigned short unused_port(boost::asio::io_context& ctx) {
    boost::asio::ip::tcp::acceptor probe{ctx, {boost::asio::ip::make_address("127.0.0.1"), 0}};
    return probe.local_endpoint().port();
}

inline boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
    boost::asio::steady_timer timer{co_await boost::asio::this_coro::executor, d};
    co_await timer.async_wait(boost::asio::use_awaitable);
}

} // namespace asiocrawl::test
