#include "policy/revisit_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using asiocrawl::decode_revisit_entry;
using asiocrawl::encode_revisit_entry;
using asiocrawl::revisit_change;
using asiocrawl::revisit_entry;
using asiocrawl::revisit_schedule;
using asiocrawl::revisit_settings;
using asiocrawl::sitemap_changefreq;
using asiocrawl::sitemap_hints;
using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

// The manual clock starts here.
const sys_seconds start{sys_days{2026y / November / 27} + 12h};

// Visits the page each time it is due, `visits` times; `changed(fetch_number, previous_fetch, now)` says what
// each visit after the first finds. Returns the entries in order (the first is the first visit's).
template <class Changed>
std::vector<revisit_entry> run(const revisit_schedule& schedule, int visits, Changed changed) {
    std::vector<revisit_entry> entries;
    std::optional<revisit_entry> entry;
    sys_seconds now = start;
    for (int i = 0; i < visits; ++i) {
        const auto change =
            entry ? (changed(i, entry->fetched, now) ? revisit_change::changed : revisit_change::unchanged)
                  : revisit_change::added;
        entry = schedule.next_visit(entry, change, {}, now);
        entries.push_back(*entry);
        now = entry->due;
    }
    return entries;
}

TEST(revisit_settings, defaults_are_valid) {
    EXPECT_TRUE(asiocrawl::validate(revisit_settings{}).empty());
    const revisit_settings defaults;
    EXPECT_EQ(defaults.min, 1h);
    EXPECT_EQ(defaults.max, days(30));
    EXPECT_EQ(defaults.initial, days(1));
}

TEST(revisit_settings, invalid_settings_are_named) {
    struct bad_case {
        revisit_settings settings;
        std::vector<std::string> keys;
        std::string first_message;
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const bad_case cases[] = {
        {{.min = 0s}, {"revisit.min"}, "revisit.min must be at least 1 second"},
        {{.min = -5s}, {"revisit.min"}, "revisit.min must be at least 1 second"},
        {{.min = days(2), .max = days(1)},
         {"revisit.max"},
         "revisit.max must not be shorter than revisit.min"},
        {{.max = days(3651)}, {"revisit.max"}, "revisit.max must not be longer than 3650 days"},
        {{.grow = 1.0}, {"revisit.grow"}, "revisit.grow must be above 1 and at most 2"},
        {{.grow = 2.5}, {"revisit.grow"}, "revisit.grow must be above 1 and at most 2"},
        {{.grow = nan}, {"revisit.grow"}, "revisit.grow must be above 1 and at most 2"},
        {{.shrink = 1.0}, {"revisit.shrink"}, "revisit.shrink must be at least 0.5 and below 1"},
        {{.shrink = 0.4}, {"revisit.shrink"}, "revisit.shrink must be at least 0.5 and below 1"},
        {{.shrink = nan}, {"revisit.shrink"}, "revisit.shrink must be at least 0.5 and below 1"},
        {{.min = 0s, .grow = 3, .shrink = 0},
         {"revisit.min", "revisit.grow", "revisit.shrink"},
         "revisit.min must be at least 1 second"},
    };
    for (const auto& c : cases) {
        const auto problems = asiocrawl::validate(c.settings);
        std::vector<std::string> keys;
        for (const auto& problem : problems)
            keys.push_back(problem.key);
        EXPECT_EQ(keys, c.keys) << c.first_message;
        ASSERT_FALSE(problems.empty());
        EXPECT_EQ(problems.front().message, c.first_message);
        try {
            revisit_schedule schedule(c.settings);
            ADD_FAILURE() << "accepted: " << c.first_message;
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()), c.first_message);
        }
    }
    // The edges of the ranges are accepted.
    EXPECT_TRUE(
        asiocrawl::validate(revisit_settings{.min = 1s, .max = 1s, .grow = 2, .shrink = 0.5}).empty());
    EXPECT_TRUE(asiocrawl::validate(revisit_settings{.max = days(3650)}).empty());
}

TEST(revisit_schedule, first_visit_starts_at_initial_clamped) {
    const revisit_schedule schedule({});
    for (const auto change : {revisit_change::added, revisit_change::changed, revisit_change::unchanged}) {
        const auto entry = schedule.next_visit(std::nullopt, change, {}, start);
        EXPECT_EQ(entry, (revisit_entry{days(1), start, start + days(1), 0}));
    }
    const revisit_schedule short_max({.max = 2h});
    EXPECT_EQ(short_max.next_visit(std::nullopt, revisit_change::added, {}, start).interval, 2h);
    const revisit_schedule long_min({.min = days(3)});
    EXPECT_EQ(long_min.next_visit(std::nullopt, revisit_change::added, {}, start).interval, days(3));
}

TEST(revisit_schedule, a_page_that_changes_at_every_visit_converges_to_min) {
    const revisit_schedule schedule({});
    const auto entries = run(schedule, 30, [](int, sys_seconds, sys_seconds) { return true; });
    // 1 day × 0.8^k falls below 1 hour at k = 15 (0.8^14 × 86400 s = 3,799 s).
    for (std::size_t i = 1; i < entries.size(); ++i) {
        if (i < 15)
            EXPECT_GT(entries[i].interval, 1h) << i;
        else
            EXPECT_EQ(entries[i].interval, 1h) << i;
        EXPECT_LE(entries[i].interval, entries[i - 1].interval) << i;
        EXPECT_EQ(entries[i].due, entries[i].fetched + entries[i].interval);
        EXPECT_EQ(entries[i].fetched, entries[i - 1].due);
    }
    EXPECT_EQ(entries[1].interval, seconds(69'120)); // 86,400 × 0.8
}

TEST(revisit_schedule, a_page_that_never_changes_grows_to_max) {
    const revisit_schedule schedule({});
    const auto entries = run(schedule, 30, [](int, sys_seconds, sys_seconds) { return false; });
    // 1 day × 1.25^k passes 30 days at k = 16 (1.25^15 = 28.4).
    for (std::size_t i = 1; i < entries.size(); ++i) {
        if (i < 16)
            EXPECT_LT(entries[i].interval, days(30)) << i;
        else
            EXPECT_EQ(entries[i].interval, days(30)) << i;
        EXPECT_GE(entries[i].interval, entries[i - 1].interval) << i;
    }
    EXPECT_EQ(entries[1].interval, seconds(108'000)); // 86,400 × 1.25
}

TEST(revisit_schedule, alternating_answers_settle_between_the_bounds) {
    const revisit_schedule schedule({});
    const auto entries = run(schedule, 200, [](int i, sys_seconds, sys_seconds) { return i % 2 == 1; });
    // × 0.8 then × 1.25: back where it was, every second visit.
    for (std::size_t i = 1; i < entries.size(); ++i)
        EXPECT_EQ(entries[i].interval, i % 2 == 1 ? seconds(69'120) : days(1)) << i;

    // Nutch's rates (× 1.4, × 0.8) climb 12% per pair: the same page ends pinned at max (max × 0.8 after a
    // change, max again after the next visit). Why grow = 1 / shrink.
    const revisit_schedule nutch({.grow = 1.4, .shrink = 0.8});
    const auto climbing = run(nutch, 200, [](int i, sys_seconds, sys_seconds) { return i % 2 == 1; });
    EXPECT_EQ(climbing[198].interval, days(30));
    EXPECT_EQ(climbing[199].interval, seconds(days(30)) * 4 / 5);
}

TEST(revisit_schedule, a_page_changing_every_three_days_is_visited_about_twice_between_changes) {
    // The page changes at start + k × 3 days; a visit finds it changed when a change fell since the last one.
    constexpr seconds period = days(3);
    const revisit_schedule schedule({});
    const auto changed = [&](int, sys_seconds previous, sys_seconds now) {
        return (now - start) / period != (previous - start) / period;
    };
    const auto entries = run(schedule, 400, changed);
    // Past the first visits, the interval stays near half the period (0.42 to 0.65 of it, 0.50 on average).
    seconds shortest = days(30);
    seconds longest = 0s;
    int found_changed = 0;
    for (std::size_t i = 50; i < entries.size(); ++i) {
        shortest = std::min(shortest, entries[i].interval);
        longest = std::max(longest, entries[i].interval);
        found_changed += changed(0, entries[i - 1].fetched, entries[i].fetched) ? 1 : 0;
    }
    EXPECT_GE(shortest, period / 3);
    EXPECT_LE(longest, period * 3 / 4);
    // About half the visits find a change (175 of 350).
    const auto visits = static_cast<int>(entries.size()) - 50;
    EXPECT_GT(found_changed, visits * 2 / 5);
    EXPECT_LT(found_changed, visits * 3 / 5);
}

TEST(revisit_schedule, changefreq_seeds_a_new_page) {
    const revisit_schedule schedule({});
    struct changefreq_case {
        sitemap_changefreq changefreq;
        seconds interval;
    };
    const changefreq_case cases[] = {
        {sitemap_changefreq::always, 1h},        {sitemap_changefreq::hourly, 1h},
        {sitemap_changefreq::daily, days(1)},    {sitemap_changefreq::weekly, days(7)},
        {sitemap_changefreq::monthly, days(30)}, {sitemap_changefreq::yearly, days(30)},
        {sitemap_changefreq::never, days(30)},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(schedule.interval_for(c.changefreq), c.interval);
        const auto entry = schedule.next_visit(std::nullopt, revisit_change::added,
                                               {.lastmod = std::nullopt, .changefreq = c.changefreq}, start);
        EXPECT_EQ(entry.interval, c.interval);
        EXPECT_EQ(entry.due, start + c.interval);
    }
    // Clamped into [min, max].
    const revisit_schedule narrow({.min = 2h, .max = days(400)});
    EXPECT_EQ(narrow.interval_for(sitemap_changefreq::always), 2h);
    EXPECT_EQ(narrow.interval_for(sitemap_changefreq::hourly), 2h);
    EXPECT_EQ(narrow.interval_for(sitemap_changefreq::yearly), days(365));
    EXPECT_EQ(narrow.interval_for(sitemap_changefreq::never), days(400));

    // A page with an entry follows what its visits find, not the hint.
    const auto first = schedule.next_visit(std::nullopt, revisit_change::added, {}, start);
    const auto second =
        schedule.next_visit(first, revisit_change::unchanged,
                            {.lastmod = std::nullopt, .changefreq = sitemap_changefreq::hourly}, first.due);
    EXPECT_EQ(second.interval, seconds(108'000));
}

TEST(revisit_schedule, a_later_lastmod_makes_the_page_due_but_not_before_min) {
    const revisit_schedule schedule({});
    const revisit_entry entry{days(10), start, start + days(10), 0};
    struct lastmod_case {
        std::optional<sys_seconds> lastmod;
        sys_seconds now;
        sys_seconds due;
    };
    const lastmod_case cases[] = {
        {std::nullopt, start + days(2), start + days(10)},           // no hint
        {start - days(1), start + days(2), start + days(10)},        // changed before our visit
        {start, start + days(2), start + days(10)},                  // at our visit: we have it
        {start + days(1), start + days(2), start + days(2)},         // changed since: due now
        {start + 1s, start + 10min, start + 1h},                     // but not sooner than min
        {start + days(2) + 23h, start + days(2), start + days(2)},   // a little ahead: a zone slip
        {start + days(3) + 1s, start + days(2), start + days(10)},   // more than a day ahead: wrong
        {start + days(11), start + days(11) + 1s, start + days(10)}, // already due: kept
    };
    for (const auto& c : cases) {
        const auto next =
            schedule.with_sitemap_hints(entry, {.lastmod = c.lastmod, .changefreq = std::nullopt}, c.now);
        EXPECT_EQ(next.due, c.due) << (c.now - start).count();
        EXPECT_EQ(next.interval, entry.interval);
        EXPECT_EQ(next.fetched, entry.fetched);
    }
}

TEST(revisit_schedule, gone_waits_max) {
    const revisit_schedule schedule({});
    const revisit_entry entry{2h, start, start + 2h, 3};
    const auto gone = schedule.next_visit(entry, revisit_change::gone, {}, start + 2h);
    EXPECT_EQ(gone, (revisit_entry{days(30), start + 2h, start + 2h + days(30), 0}));
    EXPECT_EQ(schedule.next_visit(std::nullopt, revisit_change::gone, {}, start).interval, days(30));
    // It comes back: the next visit shrinks from max.
    const auto back = schedule.next_visit(gone, revisit_change::changed, {}, gone.due);
    EXPECT_EQ(back.interval, days(24));
}

TEST(revisit_schedule, failures_back_off_within_the_interval_and_keep_it) {
    const revisit_schedule schedule({});
    std::optional<revisit_entry> entry = revisit_entry{days(3), start, start + days(3), 0};
    sys_seconds now = entry->due;
    const seconds waits[] = {1h, 2h, 4h, 8h, 16h, 32h, 64h, days(3), days(3)};
    for (const auto wait : waits) {
        entry = schedule.next_visit(entry, revisit_change::failed, {}, now);
        EXPECT_EQ(entry->interval, days(3));
        EXPECT_EQ(entry->due, now + wait);
        now = entry->due;
    }
    EXPECT_EQ(entry->failures, 9u);
    // An answer resets the count and adapts the kept interval.
    entry = schedule.next_visit(entry, revisit_change::unchanged, {}, now);
    EXPECT_EQ(entry->failures, 0u);
    EXPECT_EQ(entry->interval, seconds(days(3)) * 5 / 4);
    // The first visit failing: the first interval, retried after min.
    const auto first = schedule.next_visit(std::nullopt, revisit_change::failed, {}, start);
    EXPECT_EQ(first, (revisit_entry{days(1), start, start + 1h, 1}));
    // The count saturates; the wait stays capped.
    const revisit_entry many{days(1), start, start + days(1), std::numeric_limits<std::uint32_t>::max()};
    const auto more = schedule.next_visit(many, revisit_change::failed, {}, start);
    EXPECT_EQ(more.failures, std::numeric_limits<std::uint32_t>::max());
    EXPECT_EQ(more.due, start + days(1));
}

TEST(revisit_schedule, entries_from_other_settings_are_clamped) {
    const revisit_schedule schedule({.min = 2h, .max = days(2)});
    const revisit_entry wide{days(20), start, start + days(20), 0};
    EXPECT_EQ(schedule.next_visit(wide, revisit_change::unchanged, {}, start).interval, days(2));
    EXPECT_EQ(schedule.next_visit(wide, revisit_change::changed, {}, start).interval,
              seconds(days(2)) * 4 / 5);
    const revisit_entry narrow{1min, start, start + 1min, 0};
    EXPECT_EQ(schedule.next_visit(narrow, revisit_change::changed, {}, start).interval, 2h);
    // A one-second minimum still moves: rounding never holds the interval in place.
    const revisit_schedule tiny({.min = 1s, .max = 1h});
    const revisit_entry one{1s, start, start + 1s, 0};
    EXPECT_EQ(tiny.next_visit(one, revisit_change::unchanged, {}, start).interval, 2s);
    EXPECT_EQ(tiny.next_visit(one, revisit_change::changed, {}, start).interval, 1s);
}

TEST(revisit_entry_bytes, round_trip) {
    const revisit_entry entries[] = {
        {1h, start, start + 1h, 0},
        {days(30), start, start + days(30), 0},
        {days(3), start, start + 4h, 3},
        {days(3650), start, start + days(3650), std::numeric_limits<std::uint32_t>::max()},
        {1s, sys_seconds{}, sys_seconds{}, 0},
        {1h, sys_seconds{sys_days{1969y / July / 20}}, sys_seconds{sys_days{1969y / July / 21}}, 1},
    };
    for (const auto& entry : entries) {
        const auto bytes = encode_revisit_entry(entry);
        EXPECT_EQ(decode_revisit_entry(bytes), entry) << bytes.size();
    }
    // Compact: with today's dates, 4 + 5 + 4 + 1 bytes at most for intervals up to 30 days.
    EXPECT_EQ(encode_revisit_entry(entries[1]).size(), 14u);
    EXPECT_EQ(encode_revisit_entry({1h, start, start + 1h, 0}).size(), 10u);
}

TEST(revisit_entry_bytes, anything_else_is_refused) {
    const auto good = encode_revisit_entry({days(3), start, start + 4h, 3});
    for (std::size_t size = 0; size < good.size(); ++size)
        EXPECT_EQ(decode_revisit_entry(good.substr(0, size)), std::nullopt) << size;
    EXPECT_EQ(decode_revisit_entry(good + '\0'), std::nullopt);
    const auto varint = [](std::uint64_t v) {
        std::string out;
        while (v >= 0x80) {
            out.push_back(static_cast<char>((v & 0x7f) | 0x80));
            v >>= 7;
        }
        out.push_back(static_cast<char>(v));
        return out;
    };
    const std::uint64_t limit = 3650ull * 86400;
    const std::uint64_t now = static_cast<std::uint64_t>(start.time_since_epoch().count()) * 2; // zigzag
    EXPECT_NE(decode_revisit_entry(varint(limit) + varint(now) + varint(limit) + varint(0)), std::nullopt);
    EXPECT_EQ(decode_revisit_entry(varint(limit + 1) + varint(now) + varint(0) + varint(0)), std::nullopt);
    EXPECT_EQ(decode_revisit_entry(varint(1) + varint(now) + varint(limit + 1) + varint(0)), std::nullopt);
    EXPECT_EQ(decode_revisit_entry(varint(1) + varint(now) + varint(0) + varint(1ull << 32)), std::nullopt);
    EXPECT_EQ(decode_revisit_entry(varint(1) + varint((1ull << 41) + 2) + varint(0) + varint(0)),
              std::nullopt);
    EXPECT_EQ(decode_revisit_entry(varint(1) + varint((1ull << 41) + 1) + varint(0) + varint(0)),
              std::nullopt);
    EXPECT_EQ(decode_revisit_entry(std::string(10, '\xff') + varint(now) + varint(0) + varint(0)),
              std::nullopt);
}

} // namespace
