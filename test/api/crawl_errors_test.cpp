// The error model of crawler::async_run, in process: each cause of a failed crawl completes the operation
// with its own value of asiocrawl's error category and a report whose failure names it; a second run and a
// hook set late are refused; what the CLI reads from its environment (standard input) comes in the config.
// The state directory's causes (mismatch, unusable, damaged, locked) are in store/durable_crawl_test.cpp;
// the CLI's exit statuses for them in cli/*_test.cpp.
#include <asiocrawl/crawler.hpp>

#include "support/loopback.hpp"
#include "support/temp_dir.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl_demo/site.hpp>

#include <boost/asio/post.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

namespace {

struct crawl_errors : ::testing::Test {
    asio::io_context ctx;
    demo::site site = demo::generate_site({.pages = 20, .seed = 3});
    demo::http_server server{ctx.get_executor(), demo::serve_site(site)};
    crawler_config config;

    crawl_errors() {
        config.roots = {server.origin() + "/"};
        config.max_tasks = 2;
    }

    struct outcome {
        int calls = 0;
        boost::system::error_code ec;
        report r;
    };

    /// Runs `c` to its completion, stopping the server then.
    outcome run(crawler& c) {
        outcome out;
        c.async_run([&](boost::system::error_code ec, report r) {
            ++out.calls;
            out.ec = ec;
            out.r = std::move(r);
            server.stop();
        });
        run_bounded(ctx);
        return out;
    }
};

TEST_F(crawl_errors, a_crawl_that_ran_to_its_end_completes_with_no_code_and_no_failure) {
    crawler c{ctx.get_executor(), config};
    const auto out = run(c);
    EXPECT_EQ(out.calls, 1);
    EXPECT_FALSE(out.ec) << out.ec.message() << ": " << out.r.failure;
    EXPECT_EQ(out.r.failure, "");
    EXPECT_EQ(out.r.done, site.expected_requests.size());
}

TEST_F(crawl_errors, a_second_run_completes_with_already_started_and_the_first_is_untouched) {
    crawler c{ctx.get_executor(), config};
    std::optional<boost::system::error_code> first_ec, second_ec;
    report first;
    c.async_run([&](boost::system::error_code ec, report r) {
        first_ec = ec;
        first = std::move(r);
        server.stop();
    });
    c.async_run([&](boost::system::error_code ec, report) { second_ec = ec; });
    run_bounded(ctx);
    ASSERT_TRUE(second_ec);
    EXPECT_EQ(*second_ec, asio::error::already_started);
    ASSERT_TRUE(first_ec);
    EXPECT_FALSE(*first_ec) << first.failure;
    EXPECT_EQ(first.done, site.expected_requests.size());
}

TEST_F(crawl_errors, a_hook_set_after_async_run_is_refused) {
    crawler c{ctx.get_executor(), config};
    c.async_run([&](boost::system::error_code, report) { server.stop(); });
    EXPECT_THROW(c.set_record_sink([](const record&) {}), std::logic_error);
    EXPECT_THROW(c.set_logger({}), std::logic_error);
    EXPECT_THROW(c.set_body_sink([](const record&, std::string_view) {}), std::logic_error);
    EXPECT_THROW(c.set_exchange_sink([](const http_exchange&) {}), std::logic_error);
    EXPECT_THROW(c.set_backpressure([] { return false; }), std::logic_error);
    EXPECT_THROW(c.set_output_flush([](bool, crawler::output_flush_done) {}), std::logic_error);
    run_bounded(ctx);
}

TEST_F(crawl_errors, an_output_that_cannot_be_flushed_is_output_failed) {
    temp_dir dir{"crawl-errors-flush"};
    config.state.dir = (dir.path / "state").string();
    crawler c{ctx.get_executor(), config};
    c.set_output_flush([](bool, crawler::output_flush_done done) { done("disk full, say", {}); });
    const auto out = run(c);
    EXPECT_EQ(out.ec, error::output_failed) << out.ec.message();
    EXPECT_EQ(out.ec.category(), error_category());
    EXPECT_THAT(out.r.failure, HasSubstr("an output could not be written (disk full, say)"));
    EXPECT_LT(out.r.done, site.expected_requests.size()) << "the crawl stopped at the first commit";
}

TEST_F(crawl_errors, a_redis_where_nothing_listens_is_redis_unreachable) {
    config.state.redis = "redis://127.0.0.1:" + std::to_string(unused_port(ctx)) + "/0";
    config.state.redis_timeout = 100ms;
    config.state.instance = "crawl-errors-test";
    crawler c{ctx.get_executor(), config};
    const auto out = run(c);
    EXPECT_EQ(out.ec, error::redis_unreachable) << out.ec.message() << ": " << out.r.failure;
    EXPECT_THAT(out.r.failure, HasSubstr("giving up after state.redis_timeout"));
    EXPECT_EQ(server.requests(), 0u) << "nothing fetched without the shared frontier";
}

TEST_F(crawl_errors, a_bad_redis_url_is_invalid_config) {
    config.state.redis = "redis://127.0.0.1:notaport/0";
    crawler c{ctx.get_executor(), config};
    const auto out = run(c);
    EXPECT_EQ(out.ec, error::invalid_config) << out.ec.message() << ": " << out.r.failure;
    EXPECT_THAT(out.r.failure, HasSubstr("state.redis: "));
}

TEST_F(crawl_errors, seeds_come_from_an_open_descriptor_that_input_file_only_names) {
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    const std::string seeds = "# the site's root, through a pipe\n" + server.origin() + "/\n";
    ASSERT_EQ(::write(ends[1], seeds.data(), seeds.size()), static_cast<ssize_t>(seeds.size()));
    ::close(ends[1]);
    config.roots.clear();
    config.input_file = "-"; // a name: with input_fd set, never standard input nor a file
    config.input_fd = ends[0];
    {
        crawler c{ctx.get_executor(), config};
        const auto out = run(c);
        EXPECT_FALSE(out.ec) << out.r.failure;
        EXPECT_EQ(out.r.done, site.expected_requests.size());
    }
    EXPECT_NE(::fcntl(ends[0], F_GETFD), -1) << "the descriptor is the caller's to close";
    ::close(ends[0]);
}

TEST(crawl_error_codes, name_themselves_and_are_told_apart_from_record_errors) {
    std::set<std::string, std::less<>> kinds;
    for (const error e :
         {error::invalid_config, error::state_mismatch, error::state_locked, error::state_unusable,
          error::store_damaged, error::redis_refused, error::output_exists, error::output_unavailable,
          error::store_write_failed, error::redis_unreachable, error::redis_lost, error::output_failed}) {
        const boost::system::error_code ec = e;
        EXPECT_EQ(ec.category(), error_category());
        EXPECT_NE(ec.message(), "unknown asiocrawl error") << static_cast<int>(e);
        EXPECT_TRUE(kinds.insert(std::string(error_kind(ec))).second) << error_kind(ec);
    }
    EXPECT_EQ(static_cast<int>(error::invalid_config), static_cast<int>(error::type_rejected) + 1)
        << "record errors are stored in durable state: new values go after them";
}

TEST(crawl_error_codes, a_crawl_error_carries_its_code_and_its_detail) {
    const crawl_error e{error::state_locked, "state directory /x: is in use by another crawl (pid 7)"};
    EXPECT_EQ(e.code(), error::state_locked);
    EXPECT_EQ(e.detail(), "state directory /x: is in use by another crawl (pid 7)");
    EXPECT_THAT(e.what(), HasSubstr(e.detail()));
}

} // namespace
