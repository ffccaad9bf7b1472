// Deadlines for waits on sockets. Every wait a connection makes (connect, handshake, write, the answer) is an
// async_wait on its socket itself, not through a stream with timers of its own; the deadlines of those waits
// (connect_timeout, request_timeout) are kept here, soonest first (O(log n) to add or remove), under one
// timer. A passed deadline closes the socket, and the wait completes with connection::timed_out set.
#pragma once

#include "http/tls_stream.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/intrusive/set.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <string_view>

namespace asiocrawl::detail {

/// Operations awaited directly: unlike use_awaitable, no coroutine frame of their own.
constexpr auto tuple_deferred = boost::asio::as_tuple(boost::asio::deferred);

/// Plain operator new: Asio treats std::allocator as "use my per-thread cache of recycled blocks".
template <class T>
struct exact_allocator {
    using value_type = T;
    exact_allocator() noexcept = default;
    template <class U>
    exact_allocator(const exact_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T))); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p); }
    friend bool operator==(const exact_allocator&, const exact_allocator&) noexcept { return true; }
};

/// An operation awaited like `op(tuple_deferred)`, whose state is allocated at its exact size rather than
/// from Asio's per-thread cache of recycled blocks: a recycled block is whatever an earlier operation needed,
/// and the operations that every fetch of a burst holds at once (a connect, the wait for an answer) would
/// then keep that much each. `start(handler)` starts the operation.
template <class Signature, class Start>
auto exactly_allocated(Start start) {
    return boost::asio::async_initiate<const decltype(tuple_deferred)&, Signature>(
        [start](auto handler) mutable {
            start(boost::asio::bind_allocator(exact_allocator<void>(), std::move(handler)));
        },
        tuple_deferred);
}

class socket_waits {
public:
    using clock_type = std::chrono::steady_clock;

    explicit socket_waits(const boost::asio::any_io_executor& executor);
    socket_waits(const socket_waits&) = delete;
    socket_waits& operator=(const socket_waits&) = delete;

    /// `c` starts a wait that ends at c.deadline.
    void watch(connection& c);
    /// The wait is over. With none left the timer stops, so that an idle transport keeps no work pending.
    void unwatch(connection& c);

    /// Waits until `c`'s socket is ready for `what`, by c.deadline (beast::error::timeout after it).
    boost::asio::awaitable<boost::system::error_code>
    wait_ready(connection& c, boost::asio::ip::tcp::socket::wait_type what);

    /// Writes all of `bytes` within c.deadline.
    boost::asio::awaitable<boost::system::error_code> write_all(connection& c, std::string_view bytes);

private:
    struct earlier_deadline {
        bool operator()(const connection& a, const connection& b) const noexcept {
            return a.deadline < b.deadline;
        }
    };
    /// Connections waiting on their socket (connecting, shaking hands, waiting for or reading an answer),
    /// soonest deadline first.
    using deadline_set = boost::intrusive::multiset<
        connection,
        boost::intrusive::member_hook<connection, decltype(connection::waiting_link),
                                      &connection::waiting_link>,
        boost::intrusive::compare<earlier_deadline>, boost::intrusive::constant_time_size<false>>;

    void arm_timer(clock_type::time_point at);
    void expire_waits();

    deadline_set waiting_;
    boost::asio::steady_timer timer_;
    clock_type::time_point timer_at_ = clock_type::time_point::max();
    std::shared_ptr<char> alive_ = std::make_shared<char>(); // the timer's handler may outlive us
};

} // namespace asiocrawl::detail
