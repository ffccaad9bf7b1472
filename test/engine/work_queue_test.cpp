#include "engine/work_queue.hpp"

#include "support/loopback.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
using asiocrawl::detail::work_queue;
using asiocrawl::test::run_bounded;
using namespace std::chrono_literals;

namespace {

/// Spawns a coroutine that sets `joined` once q.join() completes.
void join_in_background(asio::io_context& ctx, work_queue<int>& q, bool& joined) {
    asio::co_spawn(
        ctx,
        [&q, &joined]() -> asio::awaitable<void> {
            co_await q.join();
            joined = true;
        },
        asio::detached);
}

} // namespace

TEST(work_queue, put_held_then_get_is_fifo) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    std::vector<int> got;
    for (int i = 0; i < 5; ++i) {
        EXPECT_TRUE(q.hold());
        q.put_held(i);
    }
    EXPECT_EQ(q.size(), 5u);
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            for (int i = 0; i < 5; ++i) {
                auto item = co_await q.get();
                got.push_back(item.value());
                q.task_done();
            }
        },
        asio::detached);
    run_bounded(ctx);
    EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(q.unfinished(), 0u);
}

TEST(work_queue, get_waits_for_a_later_put_held) {
    asio::io_context ctx;
    work_queue<std::string> q{ctx.get_executor()};
    std::optional<std::string> got;
    asio::co_spawn(
        ctx, [&]() -> asio::awaitable<void> { got = co_await q.get(); }, asio::detached);
    ctx.poll();
    EXPECT_FALSE(got.has_value()) << "get() must wait while the queue is empty";
    q.hold();
    q.put_held("late");
    run_bounded(ctx);
    EXPECT_EQ(got, "late");
    EXPECT_EQ(q.unfinished(), 1u) << "taken but not yet done";
}

TEST(work_queue, join_on_an_empty_queue_completes_at_once) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    bool joined = false;
    join_in_background(ctx, q, joined);
    run_bounded(ctx);
    EXPECT_TRUE(joined);
}

TEST(work_queue, join_waits_for_task_done_not_for_get) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    q.hold();
    q.put_held(1);
    bool joined = false;
    join_in_background(ctx, q, joined);
    std::optional<int> item;
    asio::co_spawn(
        ctx, [&]() -> asio::awaitable<void> { item = co_await q.get(); }, asio::detached);
    ctx.poll();
    EXPECT_TRUE(item.has_value());
    EXPECT_FALSE(joined) << "an item taken but not done is still unfinished";
    q.task_done();
    run_bounded(ctx);
    EXPECT_TRUE(joined);
}

TEST(work_queue, task_done_without_hold_is_a_logic_error) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    EXPECT_THROW(q.task_done(), std::logic_error);
}

// The crawler's situation: every worker is also a producer. With a bounded queue that made put_held() wait,
// all workers enqueuing at once would block each other forever; here hold() and put_held() never suspend.
TEST(work_queue, all_workers_producing_at_once_do_not_deadlock) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    constexpr int workers = 8;
    constexpr int fanout = 50; // each root item produces this many children, each child produces none
    int processed = 0;
    for (int i = 0; i < workers; ++i) {
        q.hold();
        q.put_held(1);
    }
    auto worker = [&]() -> asio::awaitable<void> {
        while (auto item = co_await q.get()) {
            if (*item == 1)
                for (int c = 0; c < fanout; ++c) {
                    q.hold();
                    q.put_held(0);
                }
            ++processed;
            q.task_done();
        }
    };
    bool joined = false;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            co_await q.join();
            joined = true;
            q.close();
        },
        asio::detached);
    for (int i = 0; i < workers; ++i)
        asio::co_spawn(ctx, worker, asio::detached);
    run_bounded(ctx);
    EXPECT_TRUE(joined);
    EXPECT_EQ(processed, workers + workers * fanout);
}

TEST(work_queue, handoff_to_waiting_workers_keeps_every_item) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    std::vector<int> got;
    auto worker = [&]() -> asio::awaitable<void> {
        while (auto item = co_await q.get()) {
            got.push_back(*item);
            q.task_done();
        }
    };
    for (int i = 0; i < 3; ++i)
        asio::co_spawn(ctx, worker, asio::detached);
    ctx.poll(); // all three now wait in the channel
    for (int i = 0; i < 10; ++i) {
        q.hold();
        q.put_held(i); // the first three go straight to the waiters, the rest queue behind them
    }
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            co_await q.join();
            q.close();
        },
        asio::detached);
    run_bounded(ctx);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(work_queue, close_releases_idle_workers_and_joiners) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    int got_item = 0;
    int released = 0;
    for (int i = 0; i < 4; ++i)
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                auto item = co_await q.get();
                ++(item ? got_item : released);
            },
            asio::detached);
    q.hold();
    q.put_held(7);
    bool joined = false;
    join_in_background(ctx, q, joined);
    ctx.poll(); // one worker took 7 (and never marks it done); three wait; join waits for the 7
    EXPECT_EQ(got_item, 1);
    EXPECT_EQ(released, 0);
    EXPECT_FALSE(joined);
    q.close();
    run_bounded(ctx);
    EXPECT_EQ(released, 3);
    EXPECT_TRUE(joined);
    EXPECT_FALSE(q.hold()) << "a closed queue refuses new items";
    EXPECT_EQ(q.unfinished(), 1u) << "the taken item is still unfinished: the crawl's todo";
}

TEST(work_queue, close_drops_queued_items_but_counts_them) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    q.hold();
    q.put_held(1);
    q.hold();
    q.put_held(2);
    q.close();
    std::optional<int> item{42};
    asio::co_spawn(
        ctx, [&]() -> asio::awaitable<void> { item = co_await q.get(); }, asio::detached);
    run_bounded(ctx);
    EXPECT_FALSE(item.has_value());
    EXPECT_EQ(q.size(), 0u);
    EXPECT_EQ(q.unfinished(), 2u);
}

TEST(work_queue_hold, held_items_keep_join_waiting_until_released_or_done) {
    asio::io_context ctx;
    work_queue<int> queue{ctx.get_executor()};
    bool joined = false;
    std::vector<int> got;
    ASSERT_TRUE(queue.hold());
    ASSERT_TRUE(queue.hold());
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            co_await queue.join();
            joined = true;
        },
        asio::detached);
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            auto item = co_await queue.get();
            got.push_back(*item);
            queue.task_done();
        },
        asio::detached);
    ctx.poll();
    ctx.restart();
    EXPECT_FALSE(joined) << "two held items are unfinished";
    queue.put_held(7);
    ctx.poll();
    ctx.restart();
    EXPECT_EQ(got, std::vector<int>{7});
    EXPECT_FALSE(joined) << "one held item remains";
    queue.release();
    ctx.poll();
    EXPECT_TRUE(joined);
    EXPECT_EQ(queue.unfinished(), 0u);
}

TEST(work_queue_join, every_joiner_completes) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    ASSERT_TRUE(q.hold());
    bool first = false;
    bool second = false;
    join_in_background(ctx, q, first);
    join_in_background(ctx, q, second);
    ctx.poll();
    ctx.restart();
    EXPECT_FALSE(first);
    EXPECT_FALSE(second);
    q.release();
    run_bounded(ctx);
    EXPECT_TRUE(first);
    EXPECT_TRUE(second);
}

// The count reached zero with nobody joining, then rose again: that earlier zero must not end a later join.
TEST(work_queue_join, an_earlier_zero_does_not_end_a_later_join) {
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    ASSERT_TRUE(q.hold());
    q.release(); // zero, nobody joining
    ASSERT_TRUE(q.hold());
    bool joined = false;
    join_in_background(ctx, q, joined);
    ctx.poll();
    ctx.restart();
    EXPECT_FALSE(joined) << "one item is held again";
    q.release();
    run_bounded(ctx);
    EXPECT_TRUE(joined);
}

// A join that loses a race (`join() || timer`) is cancelled and ends; the queue and a later join still work.
TEST(work_queue_join, a_cancelled_join_ends_and_a_later_one_still_completes) {
    using namespace asio::experimental::awaitable_operators;
    asio::io_context ctx;
    work_queue<int> q{ctx.get_executor()};
    ASSERT_TRUE(q.hold());
    std::optional<std::size_t> winner;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            asio::steady_timer timer{ctx, 1ms};
            auto result = co_await (q.join() || timer.async_wait(asio::use_awaitable));
            winner = result.index();
        },
        asio::detached);
    run_bounded(ctx);
    EXPECT_EQ(winner, std::optional<std::size_t>{1}) << "the timer wins: one item is still held";
    EXPECT_EQ(q.unfinished(), 1u);
    ctx.restart();
    bool joined = false;
    join_in_background(ctx, q, joined);
    ctx.poll();
    ctx.restart();
    EXPECT_FALSE(joined);
    q.release();
    run_bounded(ctx);
    EXPECT_TRUE(joined);
}
