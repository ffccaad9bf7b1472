// Crawls with a state directory, in process, against a generated site with ground truth: a durable crawl
// requests exactly what a memory-only one does; stopped (gracefully or not) and started again, it goes on
// where it was; a directory that belongs to another crawl, or to nothing, is refused. The kill -9 test with
// the real CLI is resume_kill_test.cpp.
#include <asiocrawl/crawler.hpp>

#include "support/loopback.hpp"
#include "support/temp_dir.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl_demo/site.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <unistd.h>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::test;

namespace {

struct durable_crawl : ::testing::Test {
    demo::site site = demo::generate_site({.pages = 120, .seed = 7});
    temp_dir dir{"durable-crawl"};
    fs::path state_dir = dir.path / "state";
    std::map<std::string, int> requests; // target -> times requested, over every run
    unsigned short port = 0;             // every run serves the site on the same port: the same root

    crawler_config config_for(std::uint16_t port) const {
        crawler_config config;
        config.roots = {"http://127.0.0.1:" + std::to_string(port) + "/"};
        config.max_tasks = 4;
        config.politeness.max_per_host = 4;
        config.state.dir = state_dir.string();
        return config;
    }

    struct run_result {
        std::optional<report> result;
        /// async_run's code, and report::failure: what failed.
        boost::system::error_code failure;
        std::string detail;
        std::vector<record> streamed;
    };

    /// One run of the crawl against a fresh server on the site. `after_records`: stop (or abort) the crawl
    /// once that many records were made. `adjust` changes the config.
    run_result run(std::optional<std::size_t> after_records = std::nullopt, bool abort = false,
                   const std::function<void(crawler_config&)>& adjust = {}) {
        asio::io_context ctx;
        demo::http_server server{ctx.get_executor(), demo::serve_site(site), port};
        port = server.port();
        auto config = config_for(port);
        if (adjust)
            adjust(config);
        crawler c{ctx.get_executor(), config};
        if (std::getenv("DURABLE_DEBUG"))
            c.set_logger({log_level::debug, [](log_level, std::string_view m) {
                              std::fprintf(stderr, "%.*s\n", (int)m.size(), m.data());
                          }});
        run_result out;
        c.set_record_sink([&](const record& r) {
            out.streamed.push_back(r);
            if (after_records && out.streamed.size() == *after_records)
                abort ? c.abort() : c.stop();
        });
        c.async_run([&](boost::system::error_code ec, report r) {
            out.failure = ec;
            out.detail = r.failure;
            if (!ec)
                out.result = std::move(r);
            server.stop();
        });
        run_bounded(ctx);
        for (const auto& r : server.log())
            if (r.target != "/robots.txt")
                ++requests[r.target];
        return out;
    }

    std::set<std::string> requested() const {
        std::set<std::string> out;
        for (const auto& [target, times] : requests)
            out.insert(target);
        return out;
    }
    /// Targets expected but never requested, and requested but not expected.
    std::string difference() const {
        std::string out;
        const auto got = requested();
        for (const auto& t : site.expected_requests)
            if (!got.contains(t))
                out += " missing " + t;
        for (const auto& t : got)
            if (!site.expected_requests.contains(t))
                out += " unexpected " + t;
        return out;
    }
    std::size_t fetched_twice() const {
        std::size_t n = 0;
        for (const auto& [target, times] : requests)
            n += times > 1 ? static_cast<std::size_t>(times - 1) : 0;
        return n;
    }
};

} // namespace

TEST_F(durable_crawl, requests_exactly_what_a_memory_crawl_does) {
    const auto first = run();
    ASSERT_FALSE(first.failure) << first.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_EQ(fetched_twice(), 0u);
    EXPECT_EQ(first.result->todo, 0u);
    EXPECT_EQ(first.result->runs, 1u);
    EXPECT_EQ(first.result->done, site.expected_requests.size());
    EXPECT_TRUE(fs::exists(state_dir / "ASIOCRAWL_STATE"));
}

TEST_F(durable_crawl, stopped_and_started_again_it_fetches_nothing_twice) {
    const auto first = run(40);
    ASSERT_FALSE(first.failure) << first.detail;
    EXPECT_GT(first.result->todo, 0u) << "the first run was stopped before the end";
    const auto second = run();
    ASSERT_FALSE(second.failure) << second.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_EQ(fetched_twice(), 0u) << "a graceful stop finishes and commits what is in flight";
    EXPECT_EQ(second.result->todo, 0u);
    EXPECT_EQ(second.result->runs, 2u);
    EXPECT_EQ(second.result->done, site.expected_requests.size()) << "the report counts the whole crawl";
    EXPECT_EQ(second.result->records.size(), site.expected_requests.size())
        << "the classic report lists the records of both runs";
    EXPECT_EQ(first.streamed.size() + second.streamed.size(), site.expected_requests.size());
}

TEST_F(durable_crawl, aborted_and_started_again_only_what_was_in_flight_is_fetched_twice) {
    const auto first = run(30, true);
    ASSERT_FALSE(first.failure) << first.detail;
    const auto second = run();
    ASSERT_FALSE(second.failure) << second.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_LE(fetched_twice(), 4u) << "at most max_tasks fetches were in flight at the abort";
    EXPECT_EQ(second.result->todo, 0u);
}

TEST_F(durable_crawl, a_finished_crawl_started_again_has_nothing_to_do) {
    ASSERT_FALSE(run().failure);
    requests.clear();
    const auto again = run();
    ASSERT_FALSE(again.failure) << again.detail;
    EXPECT_TRUE(requests.empty()) << "nothing is fetched again";
    EXPECT_TRUE(again.streamed.empty());
    EXPECT_EQ(again.result->done, site.expected_requests.size());
    EXPECT_EQ(again.result->runs, 2u);
}

TEST_F(durable_crawl, waiting_urls_beyond_the_window_come_back_from_disk_in_order) {
    const auto first = run(std::nullopt, false, [](crawler_config& c) {
        c.state.window = 2;
        c.max_tasks = 2;
    });
    ASSERT_FALSE(first.failure) << first.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_EQ(fetched_twice(), 0u);
}

TEST_F(durable_crawl, a_changed_definition_is_refused_and_named) {
    ASSERT_FALSE(run(10).failure);
    const auto changed = run(std::nullopt, false, [](crawler_config& c) { c.exclude = {"\\.pdf$"}; });
    ASSERT_TRUE(changed.failure);
    EXPECT_EQ(changed.failure, error::state_mismatch);
    const auto message = changed.detail;
    EXPECT_NE(message.find("exclude changed"), std::string::npos) << message;
    EXPECT_NE(message.find("--state-reset"), std::string::npos) << message;
    EXPECT_TRUE(changed.streamed.empty()) << "nothing was fetched";
}

TEST_F(durable_crawl, a_budget_may_change_between_runs) {
    ASSERT_FALSE(run(10).failure);
    const auto second = run(std::nullopt, false, [](crawler_config& c) {
        c.max_tasks = 2;
        c.max_pages = 100'000;
    });
    ASSERT_FALSE(second.failure) << second.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
}

TEST_F(durable_crawl, state_reset_starts_over) {
    ASSERT_FALSE(run().failure);
    const auto changed = run(std::nullopt, false, [](crawler_config& c) {
        c.exclude = {"never-matches"};
        c.state.reset = true;
    });
    ASSERT_FALSE(changed.failure) << changed.detail;
    EXPECT_EQ(changed.result->runs, 1u);
    EXPECT_EQ(changed.result->done, site.expected_requests.size());
    EXPECT_EQ(fetched_twice(), site.expected_requests.size()) << "everything fetched again, once";
}

TEST_F(durable_crawl, a_directory_that_holds_something_else_is_refused_untouched) {
    fs::create_directories(state_dir);
    std::ofstream(state_dir / "thesis.tex") << "precious";
    for (const bool reset : {false, true}) {
        const auto refused = run(std::nullopt, false, [reset](crawler_config& c) { c.state.reset = reset; });
        ASSERT_TRUE(refused.failure);
        EXPECT_EQ(refused.failure, error::state_unusable);
        EXPECT_NE(refused.detail.find("holds no crawl state"), std::string::npos) << refused.detail;
        EXPECT_TRUE(fs::exists(state_dir / "thesis.tex"));
    }
    EXPECT_TRUE(requests.empty());
}

TEST_F(durable_crawl, a_damaged_database_is_a_clear_error) {
    ASSERT_FALSE(run(10).failure);
    for (const auto& entry : fs::directory_iterator(state_dir / "db"))
        if (entry.path().filename().string().starts_with("CURRENT"))
            std::ofstream(entry.path(), std::ios::trunc) << "garbage\n";
    const auto damaged = run();
    ASSERT_TRUE(damaged.failure);
    EXPECT_EQ(damaged.failure, error::store_damaged);
    EXPECT_NE(damaged.detail.find("damaged"), std::string::npos) << damaged.detail;
}

TEST_F(durable_crawl, a_held_directory_is_refused_to_a_second_crawler_until_the_first_has_run) {
    asio::io_context ctx;
    demo::http_server server{ctx.get_executor(), demo::serve_site(site)};
    auto config = config_for(server.port());
    std::optional<crawler> first;
    first.emplace(ctx.get_executor(), config);
    for (const bool reset : {false, true}) {
        auto second = config;
        second.state.reset = reset;
        try {
            crawler refused{ctx.get_executor(), second};
            ADD_FAILURE() << "a second crawler took a held directory";
        } catch (const crawl_error& e) {
            EXPECT_EQ(e.code(), error::state_locked);
            const std::string message = e.detail();
            EXPECT_NE(message.find("is in use by another crawl (pid " + std::to_string(::getpid()) + ")"),
                      std::string::npos)
                << message;
            EXPECT_EQ(message.find("--state-reset"), std::string::npos) << message;
        }
    }
    // Held from construction, and released when the crawl is over, though the crawler object lives on.
    boost::system::error_code failure;
    std::string detail;
    first->async_run([&](boost::system::error_code ec, report r) {
        failure = ec;
        detail = r.failure;
        server.stop();
    });
    run_bounded(ctx);
    ASSERT_FALSE(failure) << detail;
    EXPECT_NO_THROW((crawler{ctx.get_executor(), config}));
}
