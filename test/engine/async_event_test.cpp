#include "engine/async_event.hpp"

#include "support/loopback.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>

namespace asio = boost::asio;
using asiocrawl::detail::async_event;
using asiocrawl::test::run_bounded;
using namespace std::chrono_literals;

namespace {

void wait_in_background(asio::io_context& ctx, async_event& event, int& woken) {
    asio::co_spawn(
        ctx,
        [&event, &woken]() -> asio::awaitable<void> {
            co_await event.wait();
            ++woken;
        },
        asio::detached);
}

} // namespace

TEST(async_event, notify_wakes_every_waiter) {
    asio::io_context ctx;
    async_event event{ctx.get_executor()};
    int woken = 0;
    for (int i = 0; i < 3; ++i)
        wait_in_background(ctx, event, woken);
    ctx.poll();
    ctx.restart();
    EXPECT_EQ(woken, 0) << "nobody notified yet";
    EXPECT_EQ(event.waiting(), 3u);
    event.notify();
    run_bounded(ctx);
    EXPECT_EQ(woken, 3);
    EXPECT_EQ(event.waiting(), 0u);
}

// The committer checks for work, finds none, and waits: a notify() that came after the check and before the
// wait must not be lost.
TEST(async_event, a_notify_with_nobody_waiting_is_kept_for_the_next_wait) {
    asio::io_context ctx;
    async_event event{ctx.get_executor()};
    event.notify();
    int woken = 0;
    wait_in_background(ctx, event, woken);
    run_bounded(ctx);
    EXPECT_EQ(woken, 1);
}

TEST(async_event, a_kept_notify_ends_one_wait_only) {
    asio::io_context ctx;
    async_event event{ctx.get_executor()};
    event.notify();
    event.notify();
    int woken = 0;
    wait_in_background(ctx, event, woken);
    wait_in_background(ctx, event, woken);
    ctx.poll();
    ctx.restart();
    EXPECT_EQ(woken, 1) << "two notifies with nobody waiting are one kept notification";
    EXPECT_EQ(event.waiting(), 1u);
    event.notify();
    run_bounded(ctx);
    EXPECT_EQ(woken, 2);
}

// The frontier pump and the lease loop race a wait against a timer: the timer wins, the wait is cancelled,
// and the event still works for the next waiter.
TEST(async_event, a_wait_that_loses_a_race_is_cancelled_cleanly) {
    using namespace asio::experimental::awaitable_operators;
    asio::io_context ctx;
    async_event event{ctx.get_executor()};
    std::size_t winner = 99;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            asio::steady_timer timer{ctx, 1ms};
            auto result = co_await (event.wait() || timer.async_wait(asio::use_awaitable));
            winner = result.index();
        },
        asio::detached);
    run_bounded(ctx);
    EXPECT_EQ(winner, 1u) << "nobody notified: the timer wins";
    EXPECT_EQ(event.waiting(), 0u) << "the cancelled wait no longer counts";
    ctx.restart();
    int woken = 0;
    wait_in_background(ctx, event, woken);
    ctx.poll();
    ctx.restart();
    EXPECT_EQ(woken, 0) << "no notification was kept by the cancelled wait";
    event.notify();
    run_bounded(ctx);
    EXPECT_EQ(woken, 1);
}
