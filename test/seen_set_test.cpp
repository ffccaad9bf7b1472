#include "seen_set.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_set>

using asiocrawl::detail::seen_set;

TEST(seen_set, inserts_once_and_finds_what_it_holds) {
    seen_set set;
    EXPECT_FALSE(set.contains("http://a.test/"));
    EXPECT_TRUE(set.insert("http://a.test/"));
    EXPECT_FALSE(set.insert("http://a.test/"));
    EXPECT_TRUE(set.contains("http://a.test/"));
    EXPECT_EQ(set.size(), 1u);
}

TEST(seen_set, the_origin_is_part_of_the_key) {
    seen_set set;
    const char* urls[] = {
        "http://a.test/x", "https://a.test/x", "http://a.test:8080/x",
        "http://b.test/x", "http://a.test/x?", "http://a.test/x?q",
        "http://a.test",   "not a url",        "",
        "http://a.test/X",
    };
    for (const char* u : urls)
        EXPECT_TRUE(set.insert(u)) << u;
    for (const char* u : urls) {
        EXPECT_TRUE(set.contains(u)) << u;
        EXPECT_FALSE(set.insert(u)) << u;
    }
    EXPECT_FALSE(set.contains("http://c.test/x")) << "unknown origin";
    EXPECT_FALSE(set.contains("http://a.test/y")) << "known origin, unknown path";
    EXPECT_EQ(set.size(), std::size(urls));
}

TEST(seen_set, agrees_with_a_reference_set_through_growth) {
    seen_set set;
    std::unordered_set<std::string> reference;
    std::mt19937 random{42};
    for (int i = 0; i < 200'000; ++i) {
        const std::string url = "http://host" + std::to_string(random() % 50) + ".test/p/" +
                                std::to_string(random() % 150'000) + (random() % 3 == 0 ? "?a=1" : "");
        EXPECT_EQ(set.insert(url), reference.insert(url).second) << url;
    }
    EXPECT_EQ(set.size(), reference.size());
    for (const auto& url : reference)
        ASSERT_TRUE(set.contains(url)) << url;
    EXPECT_FALSE(set.contains("http://host1.test/p/999999"));
}

TEST(seen_set, long_urls_and_many_origins) {
    seen_set set;
    const std::string long_path(100'000, 'a');
    EXPECT_TRUE(set.insert("http://x.test/" + long_path));
    EXPECT_TRUE(set.contains("http://x.test/" + long_path));
    EXPECT_FALSE(set.contains("http://x.test/" + long_path + "a"));
    for (int i = 0; i < 5000; ++i)
        EXPECT_TRUE(set.insert("http://h" + std::to_string(i) + ".test/"));
    EXPECT_EQ(set.size(), 5001u);
}

TEST(seen_set, costs_little_per_url) {
    // Not a timing: a size, deterministic for a given input.
    seen_set set;
    for (int i = 0; i < 100'000; ++i)
        set.insert("http://127.0.0.1:8080/section" + std::to_string(i % 97) + "/page" + std::to_string(i) +
                   ".html");
    const double per_url = static_cast<double>(set.memory_bytes()) / static_cast<double>(set.size());
    EXPECT_LT(per_url, 64.0) << "tails of ~25 bytes must not cost more than 64 bytes a URL";
}
