#include "http/socket_waits.hpp"

#include <boost/beast/core/error.hpp>

namespace asiocrawl::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

socket_waits::socket_waits(const asio::any_io_executor& executor)
    : timer_(executor) {}

void socket_waits::watch(connection& c) {
    c.timed_out = false;
    waiting_.insert(c);
    if (c.deadline < timer_at_)
        arm_timer(c.deadline);
}

void socket_waits::unwatch(connection& c) {
    c.waiting_link.unlink();
    if (waiting_.empty() && timer_at_ != clock_type::time_point::max()) {
        timer_at_ = clock_type::time_point::max();
        timer_.cancel();
    }
}

void socket_waits::arm_timer(clock_type::time_point at) {
    timer_at_ = at;
    timer_.expires_at(at); // a wait armed for a later time completes with operation_aborted
    timer_.async_wait([this, alive = std::weak_ptr<char>(alive_)](error_code ec) {
        if (!ec && !alive.expired())
            expire_waits();
    });
}

/// Ends the waits whose deadline has passed: the socket is closed, and the wait completes with timed_out set.
/// An OpenSSL session over that descriptor is not used again.
void socket_waits::expire_waits() {
    timer_at_ = clock_type::time_point::max();
    const auto now = clock_type::now();
    while (!waiting_.empty() && waiting_.begin()->deadline <= now) {
        auto& c = *waiting_.begin();
        waiting_.erase(waiting_.begin());
        c.timed_out = true;
        error_code ignored;
        c.socket.close(ignored);
    }
    if (!waiting_.empty())
        arm_timer(waiting_.begin()->deadline);
}

asio::awaitable<error_code> socket_waits::wait_ready(connection& c, tcp::socket::wait_type what) {
    c.release_tls_buffers();
    watch(c);
    auto [ec] = co_await exactly_allocated<void(error_code)>(
        [&c, what](auto handler) { c.socket.async_wait(what, std::move(handler)); });
    unwatch(c);
    if (c.timed_out)
        ec = boost::beast::error::timeout;
    co_return ec;
}

asio::awaitable<error_code> socket_waits::write_all(connection& c, std::string_view bytes) {
    while (!bytes.empty()) {
        error_code ec;
        bool wants_read = false;
        const std::size_t n = c.write_now(asio::buffer(bytes.data(), bytes.size()), ec, wants_read);
        if (ec)
            co_return ec;
        bytes.remove_prefix(n);
        if (n == 0) {
            if (const error_code wait_ec =
                    co_await wait_ready(c, wants_read ? tcp::socket::wait_read : tcp::socket::wait_write))
                co_return wait_ec;
        }
    }
    co_return error_code{};
}

} // namespace asiocrawl::detail
