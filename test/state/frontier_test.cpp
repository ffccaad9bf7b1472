#include "state/frontier.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

using namespace asiocrawl::detail;
using namespace std::chrono_literals;

namespace {

using frontier = host_frontier<int>;
const frontier::time_point t0{std::chrono::hours(1)};

// Hosts by name in the tests, by number (from 0, in order of first use in each test) in the frontier.
std::vector<std::string> names;
std::unordered_map<std::string, host_id> numbers;
host_id id(const std::string& name) {
    const auto [it, inserted] = numbers.try_emplace(name, static_cast<host_id>(names.size()));
    if (inserted)
        names.push_back(name);
    return it->second;
}

class host_frontier_test : public ::testing::Test {
protected:
    void SetUp() override {
        names.clear();
        numbers.clear();
    }
};

/// Pops everything eligible at `now`, in order. The slots are kept in `held` (declared after the frontier, so
/// destroyed first): only the test's own finished() calls free a host.
std::vector<std::pair<std::string, int>> pop_all(frontier& f, std::vector<frontier::slot>& held,
                                                 frontier::time_point now) {
    std::vector<std::pair<std::string, int>> out;
    while (auto next = f.pop(now)) {
        out.emplace_back(names.at(next->host), next->item);
        held.push_back(std::move(next->taken));
    }
    return out;
}

} // namespace

TEST_F(host_frontier_test, hands_out_at_most_max_per_host_until_one_finishes) {
    frontier f{2, 0ms};
    std::vector<frontier::slot> held;
    for (int i = 0; i < 5; ++i)
        f.push(id("a"), i, t0);
    auto first = pop_all(f, held, t0);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].second, 0);
    EXPECT_EQ(first[1].second, 1);
    EXPECT_EQ(f.active(id("a")), 2u);
    EXPECT_EQ(f.waiting(), 3u);
    EXPECT_FALSE(f.next_wakeup(t0)) << "only finished() can free a slot";
    f.finished(id("a"), t0);
    auto second = pop_all(f, held, t0);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].second, 2);
}

TEST_F(host_frontier_test, a_busy_host_does_not_hold_back_other_hosts) {
    frontier f{1, 0ms};
    std::vector<frontier::slot> held;
    f.push(id("slow"), 1, t0);
    f.push(id("slow"), 2, t0);
    f.push(id("slow"), 3, t0);
    f.push(id("fast"), 10, t0);
    f.push(id("fast"), 11, t0);
    auto out = pop_all(f, held, t0);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], (std::pair<std::string, int>{"slow", 1}));
    EXPECT_EQ(out[1], (std::pair<std::string, int>{"fast", 10}));
    f.finished(id("fast"), t0);
    out = pop_all(f, held, t0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], (std::pair<std::string, int>{"fast", 11}));
}

TEST_F(host_frontier_test, hosts_take_turns) {
    frontier f{10, 0ms};
    std::vector<frontier::slot> held;
    for (int i = 0; i < 3; ++i) {
        f.push(id("a"), i, t0);
        f.push(id("b"), 100 + i, t0);
    }
    std::vector<std::string> order;
    for (auto& [host, item] : pop_all(f, held, t0))
        order.push_back(host);
    EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "a", "b", "a", "b"}));
}

TEST_F(host_frontier_test, the_delay_spaces_request_starts) {
    frontier f{4, 100ms};
    std::vector<frontier::slot> held;
    for (int i = 0; i < 3; ++i)
        f.push(id("a"), i, t0);
    auto out = pop_all(f, held, t0);
    ASSERT_EQ(out.size(), 1u) << "with a delay, one request at a time until it starts";
    f.started(id("a"), t0 + 5ms);
    EXPECT_TRUE(pop_all(f, held, t0 + 50ms).empty());
    EXPECT_EQ(f.next_wakeup(t0 + 50ms), t0 + 105ms);
    EXPECT_TRUE(pop_all(f, held, t0 + 104ms).empty());
    out = pop_all(f, held, t0 + 105ms);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second, 1);
    EXPECT_EQ(f.active(id("a")), 2u) << "the first one has not finished: the delay is between starts";
}

TEST_F(host_frontier_test, set_delay_applies_to_a_known_host) {
    frontier f{4, 0ms};
    std::vector<frontier::slot> held;
    f.set_delay(id("a"), 1s, t0);
    f.push(id("a"), 1, t0);
    f.push(id("a"), 2, t0);
    ASSERT_EQ(pop_all(f, held, t0).size(), 1u);
    f.started(id("a"), t0);
    f.finished(id("a"), t0 + 10ms);
    EXPECT_TRUE(pop_all(f, held, t0 + 999ms).empty());
    EXPECT_EQ(pop_all(f, held, t0 + 1s).size(), 1u);
}

TEST_F(host_frontier_test, delayed_items_wait_for_their_time_in_order) {
    frontier f{4, 0ms};
    std::vector<frontier::slot> held;
    f.push_later(id("a"), 2, t0 + 200ms);
    f.push_later(id("a"), 1, t0 + 100ms);
    f.push_later(id("b"), 3, t0 + 100ms);
    EXPECT_EQ(f.waiting(), 3u);
    EXPECT_TRUE(pop_all(f, held, t0).empty());
    EXPECT_EQ(f.next_wakeup(t0), t0 + 100ms);
    auto out = pop_all(f, held, t0 + 150ms);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].second, 1);
    EXPECT_EQ(out[1].second, 3);
    out = pop_all(f, held, t0 + 200ms);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second, 2);
    EXPECT_EQ(f.waiting(), 0u);
}

TEST_F(host_frontier_test, clear_drops_every_waiting_item) {
    frontier f{1, 10ms};
    std::vector<frontier::slot> held;
    f.push(id("a"), 1, t0);
    f.push(id("a"), 2, t0);
    f.push_later(id("b"), 3, t0 + 1s);
    ASSERT_EQ(pop_all(f, held, t0).size(), 1u);
    EXPECT_EQ(f.clear(), 2u);
    EXPECT_EQ(f.waiting(), 0u);
    EXPECT_FALSE(f.pop(t0 + 1h));
}

TEST_F(host_frontier_test, many_hosts_cost_no_scan) {
    // 10,000 hosts each with one slot busy: popping must still find the one eligible host.
    frontier f{1, 0ms};
    std::vector<frontier::slot> held;
    for (int i = 0; i < 10'000; ++i) {
        f.push(id("h" + std::to_string(i)), i, t0);
        f.push(id("h" + std::to_string(i)), -i, t0);
    }
    EXPECT_EQ(pop_all(f, held, t0).size(), 10'000u);
    f.finished(id("h4242"), t0);
    auto out = pop_all(f, held, t0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], (std::pair<std::string, int>{"h4242", -4242}));
    EXPECT_EQ(f.hosts(), 10'000u);
}

TEST_F(host_frontier_test, a_paused_host_hands_out_nothing_not_even_urgent_items_until_resumed) {
    frontier f{4, 0ms};
    std::vector<frontier::slot> held;
    f.pause(id("a"));
    for (int i = 0; i < 3; ++i)
        f.push(id("a"), i, t0);
    f.push_urgent(id("a"), 9, t0);
    f.push(id("b"), 5, t0);
    EXPECT_TRUE(f.paused(id("a")));
    EXPECT_EQ(pop_all(f, held, t0), (std::vector<std::pair<std::string, int>>{{"b", 5}}));
    EXPECT_EQ(f.held(id("a")), 4u);
    f.resume(id("a"), t0);
    EXPECT_FALSE(f.paused(id("a")));
    const auto after = pop_all(f, held, t0);
    ASSERT_EQ(after.size(), 4u);
    EXPECT_EQ(after[0].second, 9); // the urgent one first
}

TEST_F(host_frontier_test, a_hosts_own_max_per_host_replaces_the_frontiers) {
    frontier f{4, 0ms};
    std::vector<frontier::slot> held;
    f.set_max_per_host(id("a"), 1, t0);
    for (int i = 0; i < 3; ++i) {
        f.push(id("a"), i, t0);
        f.push(id("b"), i, t0);
    }
    EXPECT_EQ(f.max_per_host(id("a")), 1u);
    EXPECT_EQ(f.max_per_host(id("b")), 4u);
    const auto first = pop_all(f, held, t0);
    EXPECT_EQ(std::count_if(first.begin(), first.end(), [](const auto& p) { return p.first == "a"; }), 1);
    EXPECT_EQ(std::count_if(first.begin(), first.end(), [](const auto& p) { return p.first == "b"; }), 3);
}

TEST_F(host_frontier_test, waiting_items_are_listed_a_page_at_a_time) {
    frontier f{1, 0ms};
    f.push_urgent(id("a"), 100, t0);
    for (int i = 0; i < 5; ++i)
        f.push(id("a"), i, t0);
    std::vector<int> page;
    f.for_each_waiting(id("a"), 0, 3, [&](int item) { page.push_back(item); });
    EXPECT_EQ(page, (std::vector<int>{100, 0, 1}));
    page.clear();
    f.for_each_waiting(id("a"), 4, 10, [&](int item) { page.push_back(item); });
    EXPECT_EQ(page, (std::vector<int>{3, 4}));
    page.clear();
    f.for_each_waiting(id("a"), 6, 10, [&](int item) { page.push_back(item); });
    EXPECT_TRUE(page.empty());
    EXPECT_EQ(f.held(id("a")), 6u);
    EXPECT_EQ(f.held(id("nobody")), 0u);
}
