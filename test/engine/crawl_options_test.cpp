// Issue 16's crawler-side options against real servers on 127.0.0.1: --limit-rate and --accept-type in the
// fetcher, --quota and --max-time stopping a crawl gracefully, seeds read from a file (-i).
#include <asiocrawl/crawler.hpp>

#include "http/fetcher.hpp"
#include "support/loopback_crawl.hpp"
#include "support/records.hpp"
#include "support/temp_dir.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/url/parse.hpp>

#include <gmock/gmock.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;

namespace {

struct options_fixture : ::testing::Test {
    asio::io_context ctx;
    crawler_config config = loopback_crawl_config();
    loopback_site server{ctx.get_executor()};

    void add(const std::string& target, http_response response) { server.add(target, std::move(response)); }
    std::string url(const std::string& target) const { return server.url(target); }

    report crawl(std::vector<std::string> roots) {
        config.roots = std::move(roots);
        crawler c{ctx.get_executor(), config};
        auto result = run_crawl(ctx, c, [&] { server.stop(); });
        EXPECT_TRUE(result.has_value());
        return result ? std::move(*result) : report{};
    }

    detail::fetch_result fetch(const std::string& target, detail::fetch_options options = {}) {
        detail::fetcher f{ctx.get_executor(), config.fetch, 8};
        std::optional<detail::fetch_result> out;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                out = co_await f.fetch(boost::urls::parse_uri(url(target)).value(), options);
            },
            [&](std::exception_ptr e) {
                f.close_idle();
                server.stop();
                if (e)
                    std::rethrow_exception(e);
            });
        run_bounded(ctx);
        return out ? std::move(*out) : detail::fetch_result{};
    }
};

} // namespace

// ---- --limit-rate ----

TEST_F(options_fixture, limit_rate_holds_the_bytes_read_per_second) {
    constexpr std::size_t body = 200'000;
    add("/big", make_response(200, std::string(body, 'x'), "application/octet-stream"));
    config.fetch.limit_rate = 100'000; // bytes per second
    config.fetch.compression = false;
    const auto began = std::chrono::steady_clock::now();
    const auto result = fetch("/big");
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
    ASSERT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.body_bytes, body);
    // After a burst of at most 16 KiB, the rest comes at 100 kB/s: at least ~1.8 s. Only a lower bound is
    // asserted (a loaded machine may be slower, never faster).
    EXPECT_GE(took.count(), 1.2);
    std::printf("limit_rate 100000 B/s: %zu bytes in %.2f s = %.0f B/s\n", body, took.count(),
                static_cast<double>(body) / took.count());
}

TEST_F(options_fixture, without_limit_rate_the_same_body_comes_at_once) {
    add("/big", make_response(200, std::string(200'000, 'x'), "application/octet-stream"));
    const auto result = fetch("/big");
    ASSERT_FALSE(result.error);
    EXPECT_EQ(result.body_bytes, 200'000u);
}

// ---- --accept-type ----

TEST_F(options_fixture, a_rejected_type_ends_after_the_head_without_its_body) {
    add("/movie", make_response(200, std::string(1 << 20, 'm'), "video/mp4"));
    const std::vector<std::string> accept{"image/*"};
    detail::fetch_options options;
    options.accept_types = &accept;
    const auto result = fetch("/movie", options);
    EXPECT_EQ(result.error, error::type_rejected);
    EXPECT_EQ(result.status, 200);
    EXPECT_EQ(result.content_type, "video/mp4");
    EXPECT_EQ(result.body_bytes, 0u);
    EXPECT_LT(result.wire_bytes, 64u * 1024) << "the body was not read";
    EXPECT_FALSE(detail::is_retryable(result.error));
}

TEST_F(options_fixture, accept_types_still_reads_html_and_error_pages) {
    add("/", make_response(200, links_page({"/a.png", "/b.txt", "/c.html", "/gone.txt"})));
    add("/a.png", make_response(200, "PNG", "image/png"));
    add("/b.txt", make_response(200, std::string(100'000, 't'), "text/plain"));
    add("/c.html", make_response(200, links_page({"/d.png"})));
    add("/d.png", make_response(200, "PNG", "image/png"));
    config.accept_types = {"image/*"};
    const auto r = crawl({url("/")});
    ASSERT_EQ(r.records.size(), 6u);
    EXPECT_FALSE(find(r, url("/a.png"))->failed());
    EXPECT_FALSE(find(r, url("/d.png"))->failed()) << "found through an HTML page, which is read";
    const auto* text = find(r, url("/b.txt"));
    EXPECT_EQ(text->error, error::type_rejected);
    EXPECT_EQ(text->status, 200);
    EXPECT_EQ(text->size, 0u);
    EXPECT_EQ(find(r, url("/gone.txt"))->status, 404) << "a 404 page is an answer, whatever its type";
    EXPECT_EQ(r.stats.at("type_rejected"), 1u);
    EXPECT_EQ(r.stats.count("fail"), 0u) << "not a failure";
}

// ---- --quota, --max-time ----

TEST_F(options_fixture, the_quota_stops_the_crawl_gracefully_with_a_todo) {
    std::vector<std::string> hrefs;
    for (int i = 0; i < 20; ++i) {
        hrefs.push_back("/p" + std::to_string(i));
        add(hrefs.back(), make_response(200, std::string(1000, 'p'), "text/plain"));
    }
    add("/", make_response(200, links_page(hrefs)));
    config.max_tasks = 1;
    config.quota = 3000;
    const auto r = crawl({url("/")});
    EXPECT_EQ(r.stats.at("stopped_quota"), 1u);
    EXPECT_LT(r.done, 21u);
    EXPECT_GE(r.done, 3u);
    EXPECT_EQ(r.done + r.todo, 21u) << "nothing lost: what was not fetched is todo";
}

TEST_F(options_fixture, max_time_stops_the_crawl_gracefully_with_a_todo) {
    std::vector<std::string> hrefs;
    for (int i = 0; i < 50; ++i) {
        hrefs.push_back("/p" + std::to_string(i));
        add(hrefs.back(), make_response(200, "<p>p</p>"));
    }
    add("/", make_response(200, links_page(hrefs)));
    config.politeness.delay = 100ms; // 50 pages would take 5 s
    config.max_time = 500ms;
    const auto r = crawl({url("/")});
    EXPECT_EQ(r.stats.at("stopped_max_time"), 1u);
    EXPECT_LT(r.done, 51u);
    EXPECT_EQ(r.done + r.todo, 51u);
}

// ---- seeds from a file (-i) ----

TEST_F(options_fixture, seeds_come_from_a_file_with_comments_and_bad_lines_skipped) {
    temp_dir dir{"seeds"};
    const auto file = dir.path / "seeds.txt";
    std::ofstream(file) << "# three seeds and a bad line\n"
                        << url("/s1") << "\n\n"
                        << "not a url\n"
                        << url("/s2") << "\r\n"
                        << url("/s3"); // no final line break
    for (const char* target : {"/s1", "/s2", "/s3"})
        add(target, make_response(200, "<p>seed</p>"));
    config.input_file = file.string();
    const auto r = crawl({});
    EXPECT_EQ(r.records.size(), 3u);
    for (const char* target : {"/s1", "/s2", "/s3"}) {
        ASSERT_NE(find(r, url(target)), nullptr) << target;
        EXPECT_EQ(find(r, url(target))->status, 200);
        EXPECT_EQ(find(r, url(target))->depth, 0);
    }
    EXPECT_EQ(r.stats.at("skipped_invalid_seed"), 1u);
}

TEST_F(options_fixture, a_seed_file_that_cannot_be_opened_is_a_config_error) {
    config.roots = {url("/")};
    config.input_file = "/nonexistent/seeds.txt";
    EXPECT_THROW((crawler{ctx.get_executor(), config}), std::invalid_argument);
}

TEST_F(options_fixture, many_seeds_stream_in_and_all_are_crawled) {
    temp_dir dir{"many-seeds"};
    const auto file = dir.path / "seeds.txt";
    constexpr int count = 5000;
    {
        std::ofstream out(file);
        for (int i = 0; i < count; ++i)
            out << url("/n" + std::to_string(i)) << "\n";
    }
    config.input_file = file.string();
    config.max_tasks = 20;
    config.keep_records = false;
    std::size_t records = 0;
    std::size_t most_queued = 0;
    config.roots.clear();
    crawler c{ctx.get_executor(), config};
    c.set_record_sink([&](const record&) {
        ++records;
        most_queued = std::max(most_queued, c.progress().queued);
    });
    auto result = run_crawl(ctx, c, [&] { server.stop(); });
    ASSERT_TRUE(result);
    EXPECT_EQ(records, static_cast<std::size_t>(count)) << "404s, every one recorded";
    EXPECT_EQ(result->todo, 0u);
    // Read as the frontier runs low: never the whole file at once.
    EXPECT_LT(most_queued, static_cast<std::size_t>(count) / 2);
    std::printf("%d seeds: at most %zu URLs waiting at once\n", count, most_queued);
}

TEST_F(options_fixture, a_resumed_crawl_reads_on_where_the_seed_file_was_left) {
    temp_dir dir{"seeds-resume"};
    const auto file = dir.path / "seeds.txt";
    const auto state = dir.path / "state";
    for (const char* target : {"/s1", "/s2", "/s3"})
        add(target, make_response(200, "<p>seed</p>"));
    std::ofstream(file) << url("/s1") << "\n" << url("/s2") << "\n";
    config.input_file = file.string();
    config.state.dir = state.string();
    config.keep_records = false;
    std::vector<std::string> fetched;
    auto run_once = [&] {
        config.roots.clear();
        crawler c{ctx.get_executor(), config};
        c.set_record_sink([&](const record& r) { fetched.push_back(r.url); });
        std::optional<report> result;
        c.async_run([&](boost::system::error_code ec, report r) {
            ctx.stop(); // the server stays up for the next run
            if (ec)
                throw boost::system::system_error(ec, r.failure);
            result = std::move(r);
        });
        ctx.run_for(std::chrono::seconds(30));
        ctx.restart();
        return result;
    };
    ASSERT_TRUE(run_once());
    EXPECT_THAT(fetched, ::testing::UnorderedElementsAre(url("/s1"), url("/s2")));
    // The file grows; the same crawl again reads only what is new.
    std::ofstream(file, std::ios::app) << url("/s3") << "\n";
    fetched.clear();
    ASSERT_TRUE(run_once());
    EXPECT_THAT(fetched, ::testing::ElementsAre(url("/s3")))
        << "the seeds admitted before are not read again";
    server.stop();
    ctx.run_for(std::chrono::seconds(5));
}
