// The crawl's seen set (src/state/fingerprint_set.hpp): exact for distinct fingerprints through every
// growth, whatever order they come in, at a bounded size per URL.
#include "state/fingerprint_set.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <unordered_set>

using asiocrawl::detail::fingerprint_set;
using asiocrawl::detail::url_fingerprint;

TEST(fingerprint_set, agrees_with_a_reference_set_through_growth) {
    fingerprint_set set;
    std::unordered_set<std::string> reference;
    std::mt19937 random{42};
    for (int i = 0; i < 200'000; ++i) {
        const std::string url = "http://host" + std::to_string(random() % 50) + ".test/p/" +
                                std::to_string(random() % 150'000) + (random() % 3 == 0 ? "?a=1" : "");
        EXPECT_EQ(set.insert(url_fingerprint(url, 7)), reference.insert(url).second) << url;
    }
    EXPECT_EQ(set.size(), reference.size());
    for (const auto& url : reference)
        ASSERT_TRUE(set.contains(url_fingerprint(url, 7))) << url;
    EXPECT_FALSE(set.contains(url_fingerprint("http://host1.test/p/999999", 7)));
}

TEST(fingerprint_set, the_seed_changes_every_fingerprint) {
    // A resumed crawl must hash with its own seed; another seed is another set.
    int equal = 0;
    for (int i = 0; i < 1000; ++i) {
        const std::string url = "http://a.test/" + std::to_string(i);
        equal += url_fingerprint(url, 1) == url_fingerprint(url, 2);
    }
    EXPECT_EQ(equal, 0);
    EXPECT_EQ(url_fingerprint("http://a.test/", 1), url_fingerprint("http://a.test/", 1));
}

TEST(fingerprint_set, sorted_and_clustered_input_like_a_resume) {
    // A resume reads fingerprints back in key order; consecutive and sorted values must spread, not pile up.
    fingerprint_set set;
    set.reserve(100'000);
    for (std::uint64_t fp = 1; fp <= 100'000; ++fp)
        ASSERT_TRUE(set.insert(fp));
    for (std::uint64_t fp = 1; fp <= 100'000; ++fp)
        ASSERT_FALSE(set.insert(fp));
    for (std::uint64_t i = 0; i < 50'000; ++i)
        ASSERT_TRUE(set.insert((i + 1) << 40 | 0xffff)) << i;
    EXPECT_EQ(set.size(), 150'000u);
    EXPECT_TRUE(set.contains(1));
    EXPECT_FALSE(set.contains(100'001));
}

TEST(fingerprint_set, costs_at_most_16_bytes_a_url_at_every_size) {
    // Not a timing: a size, deterministic for a given input (the table is 53% to 80% full between growths).
    fingerprint_set set;
    for (std::uint64_t i = 1; i <= 300'000; ++i) {
        set.insert(url_fingerprint("http://127.0.0.1:8080/page" + std::to_string(i), 3));
        if (i % 1000 == 0) {
            ASSERT_LE(static_cast<double>(set.memory_bytes()) / static_cast<double>(set.size()), 16.0) << i;
        }
    }
}

TEST(fingerprint_set, erases_and_agrees_with_a_reference_set_at_every_step) {
    // A small table (erase never shrinks it) packed to 80%, so that runs wrap around its end: every erase
    // must leave every other fingerprint findable, and an erased one gone.
    fingerprint_set set;
    std::unordered_set<std::uint64_t> reference;
    std::mt19937_64 random{7};
    for (int i = 0; i < 60'000; ++i) {
        const std::uint64_t fp = 2 + random() % 2'000; // few values (not 0, stored as 1): they meet often
        if (random() % 2 == 0)
            EXPECT_EQ(set.insert(fp), reference.insert(fp).second) << fp;
        else
            EXPECT_EQ(set.erase(fp), reference.erase(fp) == 1) << fp;
        ASSERT_EQ(set.size(), reference.size());
        if (i % 997 == 0) {
            for (std::uint64_t v = 2; v < 2'002; ++v)
                ASSERT_EQ(set.contains(v), reference.contains(v)) << v << " after step " << i;
        }
    }
    for (const auto fp : std::unordered_set<std::uint64_t>(reference))
        ASSERT_TRUE(set.erase(fp)) << fp;
    EXPECT_EQ(set.size(), 0u);
    EXPECT_FALSE(set.erase(1));
}
