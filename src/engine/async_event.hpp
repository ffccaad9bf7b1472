// The engine's one event type: a coroutine waits until another part of the crawl says "something changed".
// It carries no value and no condition: a waiter re-checks its own condition after every wake-up.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace asiocrawl::detail {

/// notify() wakes every coroutine waiting in wait(); a notify() with nobody waiting is kept, and the next
/// wait() returns at once (a notification is never lost between a waiter's check and its wait). Built on a
/// steady_timer that never expires: notify() cancels its waits. Single-threaded: every call on the
/// executor's thread (another thread posts to it first). A wait() is cancellable (per-operation
/// cancellation of the awaiting coroutine, e.g. the loser of `event.wait() || timer`): it then returns.
class async_event {
public:
    explicit async_event(const boost::asio::any_io_executor& executor)
        : timer_(executor, boost::asio::steady_timer::time_point::max()) {}

    boost::asio::awaitable<void> wait() {
        if (pending_) {
            pending_ = false;
            co_return;
        }
        ++waiting_;
        co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        --waiting_;
    }

    void notify() {
        if (waiting_ == 0) {
            pending_ = true;
            return;
        }
        timer_.cancel();
    }

    /// Coroutines in wait() now.
    std::size_t waiting() const noexcept { return waiting_; }

private:
    boost::asio::steady_timer timer_;
    std::size_t waiting_ = 0;
    bool pending_ = false;
};

} // namespace asiocrawl::detail
