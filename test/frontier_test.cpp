#include "frontier.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace asiocrawl::detail;
using namespace std::chrono_literals;

namespace {

using frontier = host_frontier<int>;
const frontier::time_point t0{std::chrono::hours(1)};

/// Pops everything eligible at `now`, in order.
std::vector<std::pair<std::string, int>> pop_all(frontier& f, frontier::time_point now) {
    std::vector<std::pair<std::string, int>> out;
    while (auto next = f.pop(now))
        out.push_back(*next);
    return out;
}

} // namespace

TEST(host_frontier, hands_out_at_most_max_per_host_until_one_finishes) {
    frontier f{2, 0ms};
    for (int i = 0; i < 5; ++i)
        f.push("a", i, t0);
    auto first = pop_all(f, t0);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].second, 0);
    EXPECT_EQ(first[1].second, 1);
    EXPECT_EQ(f.active("a"), 2u);
    EXPECT_EQ(f.waiting(), 3u);
    EXPECT_FALSE(f.next_wakeup(t0)) << "only finished() can free a slot";
    f.finished("a", t0);
    auto second = pop_all(f, t0);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].second, 2);
}

TEST(host_frontier, a_busy_host_does_not_hold_back_other_hosts) {
    frontier f{1, 0ms};
    f.push("slow", 1, t0);
    f.push("slow", 2, t0);
    f.push("slow", 3, t0);
    f.push("fast", 10, t0);
    f.push("fast", 11, t0);
    auto out = pop_all(f, t0);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], (std::pair<std::string, int>{"slow", 1}));
    EXPECT_EQ(out[1], (std::pair<std::string, int>{"fast", 10}));
    f.finished("fast", t0);
    out = pop_all(f, t0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], (std::pair<std::string, int>{"fast", 11}));
}

TEST(host_frontier, hosts_take_turns) {
    frontier f{10, 0ms};
    for (int i = 0; i < 3; ++i) {
        f.push("a", i, t0);
        f.push("b", 100 + i, t0);
    }
    std::vector<std::string> order;
    for (auto& [host, item] : pop_all(f, t0))
        order.push_back(host);
    EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "a", "b", "a", "b"}));
}

TEST(host_frontier, the_delay_spaces_request_starts) {
    frontier f{4, 100ms};
    for (int i = 0; i < 3; ++i)
        f.push("a", i, t0);
    auto out = pop_all(f, t0);
    ASSERT_EQ(out.size(), 1u) << "with a delay, one request at a time until it starts";
    f.started("a", t0 + 5ms);
    EXPECT_TRUE(pop_all(f, t0 + 50ms).empty());
    EXPECT_EQ(f.next_wakeup(t0 + 50ms), t0 + 105ms);
    EXPECT_TRUE(pop_all(f, t0 + 104ms).empty());
    out = pop_all(f, t0 + 105ms);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second, 1);
    EXPECT_EQ(f.active("a"), 2u) << "the first one has not finished: the delay is between starts";
}

TEST(host_frontier, set_delay_applies_to_a_known_host) {
    frontier f{4, 0ms};
    f.set_delay("a", 1s, t0);
    f.push("a", 1, t0);
    f.push("a", 2, t0);
    ASSERT_EQ(pop_all(f, t0).size(), 1u);
    f.started("a", t0);
    f.finished("a", t0 + 10ms);
    EXPECT_TRUE(pop_all(f, t0 + 999ms).empty());
    EXPECT_EQ(pop_all(f, t0 + 1s).size(), 1u);
}

TEST(host_frontier, delayed_items_wait_for_their_time_in_order) {
    frontier f{4, 0ms};
    f.push_later("a", 2, t0 + 200ms);
    f.push_later("a", 1, t0 + 100ms);
    f.push_later("b", 3, t0 + 100ms);
    EXPECT_EQ(f.waiting(), 3u);
    EXPECT_TRUE(pop_all(f, t0).empty());
    EXPECT_EQ(f.next_wakeup(t0), t0 + 100ms);
    auto out = pop_all(f, t0 + 150ms);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].second, 1);
    EXPECT_EQ(out[1].second, 3);
    out = pop_all(f, t0 + 200ms);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second, 2);
    EXPECT_EQ(f.waiting(), 0u);
}

TEST(host_frontier, clear_drops_every_waiting_item) {
    frontier f{1, 10ms};
    f.push("a", 1, t0);
    f.push("a", 2, t0);
    f.push_later("b", 3, t0 + 1s);
    ASSERT_EQ(pop_all(f, t0).size(), 1u);
    EXPECT_EQ(f.clear(), 2u);
    EXPECT_EQ(f.waiting(), 0u);
    EXPECT_FALSE(f.pop(t0 + 1h));
}

TEST(host_frontier, many_hosts_cost_no_scan) {
    // 10,000 hosts each with one slot busy: popping must still find the one eligible host.
    frontier f{1, 0ms};
    for (int i = 0; i < 10'000; ++i) {
        f.push("h" + std::to_string(i), i, t0);
        f.push("h" + std::to_string(i), -i, t0);
    }
    EXPECT_EQ(pop_all(f, t0).size(), 10'000u);
    f.finished("h4242", t0);
    auto out = pop_all(f, t0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], (std::pair<std::string, int>{"h4242", -4242}));
    EXPECT_EQ(f.hosts(), 10'000u);
}
