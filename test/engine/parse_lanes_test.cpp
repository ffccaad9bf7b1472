// The parse threads' hand-off (engine/parse_lanes.hpp): every page comes back to its own coroutine, on the
// crawl thread, with what resolve_links gives on this thread, or with its exception.
#include "engine/parse_lanes.hpp"

#include "support/loopback.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/url/parse.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using asiocrawl::detail::link_options;
using asiocrawl::detail::parse_lanes;
using asiocrawl::detail::resolved_links;

namespace {

std::string page_body(int i) {
    std::string body = "<html><head><title>p</title></head><body>";
    for (int k = 0; k < 20; ++k)
        body += "<a href=\"../d" + std::to_string((i + k) % 7) + "/p" + std::to_string(i * 31 + k) +
                ".html\">x</a> ";
    body += "<a href='/q?x=" + std::to_string(i) + "#f'>q</a></body></html>";
    return body;
}

std::string page_url(int i) {
    return "http://example.test/s" + std::to_string(i % 5) + "/page" + std::to_string(i);
}

} // namespace

TEST(ParseLanes, EveryPageComesBackToItsCoroutineOnTheCrawlThread) {
    asio::io_context ctx;
    parse_lanes lanes(2, ctx.get_executor());
    constexpr int pages = 200;
    std::vector<std::string> urls;
    for (int i = 0; i < pages; ++i)
        urls.push_back(page_url(i));
    const std::thread::id crawl_thread = std::this_thread::get_id();
    int finished = 0;
    int wrong_thread = 0;
    std::vector<std::vector<std::string>> got(pages);
    for (int i = 0; i < pages; ++i) {
        asio::co_spawn(
            ctx,
            [&, i]() -> asio::awaitable<void> {
                // Not link_options{} in the co_await expression: g++ 12 mishandles a braced temporary there
                // (docs: TOOLCHAIN.md), and freed its string's in-place buffer.
                const link_options options;
                auto links = co_await lanes.resolve(urls[static_cast<std::size_t>(i)], page_body(i), options);
                if (std::this_thread::get_id() != crawl_thread)
                    ++wrong_thread;
                EXPECT_EQ(links.body, page_body(i)) << "the body comes back";
                got[static_cast<std::size_t>(i)] = links.urls;
                lanes.give_back(std::move(links.urls));
                ++finished;
            },
            asio::detached);
    }
    asiocrawl::test::run_bounded(ctx);
    EXPECT_EQ(finished, pages);
    EXPECT_EQ(wrong_thread, 0);
    for (int i = 0; i < pages; ++i) {
        SCOPED_TRACE(i);
        const auto inline_links = asiocrawl::detail::resolve_links(
            boost::urls::parse_uri(page_url(i)).value(), page_body(i), link_options{});
        ASSERT_EQ(inline_links.urls.size(), 21u);
        EXPECT_EQ(got[static_cast<std::size_t>(i)], inline_links.urls);
    }
    lanes.join();
    lanes.join(); // idempotent; the destructor joins again
}

TEST(ParseLanes, AFailedPageRethrowsInItsCoroutineAndOthersGoOn) {
    asio::io_context ctx;
    parse_lanes lanes(1, ctx.get_executor());
    bool threw = false;
    std::size_t good_links = 0;
    const std::string bad = "not a url";
    const std::string good = page_url(1);
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            const link_options options;
            try {
                (void)co_await lanes.resolve(bad, page_body(0), options);
            } catch (const std::exception&) {
                threw = true;
            }
            good_links = (co_await lanes.resolve(good, page_body(1), options)).urls.size();
        },
        asio::detached);
    asiocrawl::test::run_bounded(ctx);
    EXPECT_TRUE(threw);
    EXPECT_EQ(good_links, 21u);
}

namespace {

using asiocrawl::detail::offload_gauge;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

/// `windows` windows of `busy` (the thread's CPU time over the wall time) fed to `gauge` from `wall`, `cpu`.
void feed(offload_gauge& gauge, nanoseconds& wall, nanoseconds& cpu, double busy, int windows) {
    for (int i = 0; i < windows; ++i) {
        wall += offload_gauge::window;
        cpu +=
            nanoseconds(static_cast<std::int64_t>(busy * static_cast<double>(offload_gauge::window.count())));
        ASSERT_TRUE(gauge.window_over(wall));
        gauge.sample(wall, cpu);
    }
}

/// Of `pages` pages, how many take() hands over.
int handed_over(offload_gauge& gauge, int pages) {
    int n = 0;
    for (int i = 0; i < pages; ++i)
        n += gauge.take() ? 1 : 0;
    return n;
}

} // namespace

TEST(OffloadGauge, PagesGoToTheParseThreadsOnlyWhileTheCrawlThreadRunsMostOfTheTime) {
    offload_gauge gauge;
    nanoseconds wall{milliseconds(1000)};
    nanoseconds cpu{milliseconds(300)};
    EXPECT_TRUE(gauge.window_over(wall)) << "no window yet";
    gauge.sample(wall, cpu);
    EXPECT_FALSE(gauge.window_over(wall + offload_gauge::window / 2));
    EXPECT_EQ(handed_over(gauge, 100), 0) << "it starts with every page parsed by the crawl thread";

    // A crawl thread that waits half the time (for the server, or for a core): nothing is handed over.
    feed(gauge, wall, cpu, 0.5, 10);
    EXPECT_EQ(gauge.level(), 0);
    EXPECT_EQ(handed_over(gauge, 100), 0);

    // Busy all the time: a quarter more of the pages each window, up to all of them.
    feed(gauge, wall, cpu, 1.0, 1);
    EXPECT_EQ(handed_over(gauge, 100), 25);
    feed(gauge, wall, cpu, 0.85, 1);
    EXPECT_EQ(handed_over(gauge, 100), 50);
    feed(gauge, wall, cpu, 1.0, 10);
    EXPECT_EQ(gauge.level(), offload_gauge::steps);
    EXPECT_EQ(handed_over(gauge, 100), 100);

    // Between the two marks the share holds; below the lower one it shrinks a step a window.
    feed(gauge, wall, cpu, 0.7, 5);
    EXPECT_EQ(handed_over(gauge, 100), 100);
    feed(gauge, wall, cpu, 0.5, 1);
    EXPECT_EQ(handed_over(gauge, 100), 75);
    feed(gauge, wall, cpu, 0.2, 10);
    EXPECT_EQ(gauge.level(), 0);
    EXPECT_EQ(handed_over(gauge, 100), 0);

    // Another thread's clock, far ahead of this one's: after restart() its first sample only begins a window.
    gauge.restart();
    wall += offload_gauge::window;
    EXPECT_TRUE(gauge.window_over(wall));
    gauge.sample(wall, cpu + milliseconds(1000));
    EXPECT_EQ(gauge.level(), 0);
}
