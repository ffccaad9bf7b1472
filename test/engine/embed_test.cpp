// The embedding contract of crawler::async_run: one completion signature, void(error_code, report),
// delivered through any Asio completion token. Each test crawls a generated site served on loopback and
// checks that the report handed to the token is the crawl that really happened (the server's log), not just
// that something completed. use_awaitable is covered in crawler_test.
#include <asiocrawl/crawler.hpp>

#include "support/loopback.hpp"

#include <asiocrawl_demo/site.hpp>

#include <boost/asio/deferred.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/url/parse.hpp>

#include <gmock/gmock.h>

#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;

namespace {

struct embed_fixture : ::testing::Test {
    asio::io_context ctx;
    demo::site site = demo::generate_site({.pages = 30, .seed = 7});
    demo::http_server server{ctx.get_executor(), demo::serve_site(site)};
    crawler_config config;

    embed_fixture() {
        config.roots = {server.origin() + "/"};
        config.max_tasks = 4;
    }

    /// The report's records name exactly the pages the server was asked for (robots.txt aside: whether it
    /// makes a record is not this test's business), and that is the site's ground truth.
    void expect_report_matches_the_crawl(const report& r) const {
        std::set<std::string> recorded;
        for (const auto& rec : r.records) {
            auto parsed = boost::urls::parse_uri(rec.url);
            ASSERT_TRUE(parsed) << rec.url;
            if (parsed->encoded_target() != "/robots.txt")
                recorded.insert(std::string(parsed->encoded_target()));
        }
        std::set<std::string> served;
        for (const auto& logged : server.log())
            if (logged.target != "/robots.txt")
                served.insert(logged.target);
        EXPECT_EQ(recorded, served);
        EXPECT_EQ(recorded, site.expected_requests);
        EXPECT_EQ(r.done, r.records.size());
        EXPECT_EQ(r.todo, 0u);
    }
};

TEST_F(embed_fixture, deferred_starts_nothing_until_the_operation_is_launched) {
    crawler c{ctx.get_executor(), config};
    auto operation = c.async_run(asio::deferred);
    ctx.poll(); // the server accepts, but nobody has asked for anything yet
    EXPECT_EQ(server.requests(), 0u);

    std::optional<report> result;
    std::move(operation)([&](boost::system::error_code ec, report r) {
        EXPECT_FALSE(ec) << r.failure;
        result = std::move(r);
        server.stop();
    });
    run_bounded(ctx);
    ASSERT_TRUE(result);
    expect_report_matches_the_crawl(*result);
}

TEST_F(embed_fixture, a_plain_callback_receives_the_report_once) {
    crawler c{ctx.get_executor(), config};
    int calls = 0;
    std::optional<report> result;
    c.async_run([&](boost::system::error_code ec, report r) {
        ++calls;
        EXPECT_FALSE(ec) << r.failure;
        result = std::move(r);
        server.stop();
    });
    run_bounded(ctx);
    EXPECT_EQ(calls, 1);
    ASSERT_TRUE(result);
    expect_report_matches_the_crawl(*result);
}

TEST_F(embed_fixture, use_future_with_the_io_context_on_another_thread) {
    crawler c{ctx.get_executor(), config};
    std::future<report> future = c.async_run(asio::use_future);
    std::thread io_thread{[this] { ctx.run(); }};

    // The bound turns a hang into a failure; it asserts nothing about speed.
    const bool ready = future.wait_for(60s) == std::future_status::ready;
    if (!ready)
        ctx.stop();
    else
        asio::post(ctx, [this] { server.stop(); }); // the server belongs to the io thread
    io_thread.join();
    ASSERT_TRUE(ready) << "the crawl did not complete within 60 s";
    EXPECT_TRUE(ctx.stopped()) << "work was left on the io_context after the crawl";
    expect_report_matches_the_crawl(future.get());
}

} // namespace
