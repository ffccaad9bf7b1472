#include "engine/lease_pacing.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

using asiocrawl::detail::lease_pacing;
using namespace std::chrono_literals;

TEST(lease_pacing, asks_for_every_worker_plus_a_quarter_less_what_is_held) {
    const lease_pacing pacing(8);
    EXPECT_EQ(pacing.next(0, 0).room, 10u);
    EXPECT_EQ(pacing.next(4, 0).room, 6u);
    EXPECT_EQ(pacing.next(10, 0).room, 0u);
    EXPECT_EQ(pacing.next(25, 0).room, 0u) << "never a negative room";
    EXPECT_EQ(lease_pacing(1).next(0, 0).room, 2u) << "at least one more than the workers";
}

TEST(lease_pacing, a_url_awaiting_its_commit_leaves_its_worker_idle) {
    const lease_pacing pacing(8);
    EXPECT_EQ(pacing.next(0, 0).idle, 8u);
    EXPECT_EQ(pacing.next(8, 0).idle, 0u);
    EXPECT_EQ(pacing.next(8, 3).idle, 3u);
    EXPECT_EQ(pacing.next(12, 0).idle, 0u) << "more held than workers: none idle";
    EXPECT_EQ(pacing.next(2, 5).idle, 8u) << "awaiting commit never counts below zero held";
}

TEST(lease_pacing, the_crawl_wide_zero_ends_the_loop) {
    lease_pacing pacing(4);
    const auto ask = pacing.next(0, 0);
    EXPECT_EQ(pacing.after(ask, 0, 0, -1).what, lease_pacing::then::finished);
    EXPECT_EQ(pacing.after(ask, ask.room, 0, -1).what, lease_pacing::then::finished)
        << "zero after this lease: done, even with a full answer";
}

TEST(lease_pacing, a_full_answer_asks_again_at_once) {
    lease_pacing pacing(4);
    const auto ask = pacing.next(0, 0);
    EXPECT_EQ(pacing.after(ask, ask.room, 10, -1).what, lease_pacing::then::ask_again);
    const auto none = pacing.next(100, 0);
    ASSERT_EQ(none.room, 0u);
    EXPECT_EQ(pacing.after(none, 0, 10, -1).what, lease_pacing::then::wait) << "no room is not a full answer";
}

TEST(lease_pacing, idle_workers_poll_soon_then_back_off_while_nothing_comes) {
    lease_pacing pacing(4);
    const auto idle = pacing.next(0, 0);
    std::vector<std::chrono::milliseconds> waits;
    for (int i = 0; i < 6; ++i) {
        const auto step = pacing.after(idle, 0, 10, -1);
        ASSERT_EQ(step.what, lease_pacing::then::wait);
        waits.push_back(step.wait);
    }
    EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{2ms, 4ms, 8ms, 16ms, 20ms, 20ms}));
    // Something came: back to the shortest poll.
    EXPECT_EQ(pacing.after(idle, 1, 10, -1).wait, 20ms) << "this wait was set by the empty answers before";
    EXPECT_EQ(pacing.after(idle, 0, 10, -1).wait, 2ms);
}

TEST(lease_pacing, a_host_delay_shortens_the_idle_wait_but_never_below_the_minimum) {
    lease_pacing pacing(4);
    const auto idle = pacing.next(0, 0);
    pacing.after(idle, 0, 10, -1);
    pacing.after(idle, 0, 10, -1); // the poll is now 8 ms
    EXPECT_EQ(pacing.after(idle, 0, 10, 5).wait, 5ms);
    EXPECT_EQ(pacing.after(idle, 0, 10, 0).wait, 2ms);
}

TEST(lease_pacing, busy_workers_wait_the_longest_for_a_poke) {
    lease_pacing pacing(4);
    const auto busy = pacing.next(4, 0);
    ASSERT_EQ(busy.idle, 0u);
    const auto step = pacing.after(busy, 0, 10, 0);
    EXPECT_EQ(step.what, lease_pacing::then::wait);
    EXPECT_EQ(step.wait, 20ms) << "a host ready now but held for an idle worker must not make it spin";
}
