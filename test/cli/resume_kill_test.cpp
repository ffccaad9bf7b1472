// The asiocrawl command with a state directory, killed with SIGKILL at 20 moments spread over a crawl
// (chosen by a seeded generator) and started again each time with the same command: the union of its JSON
// Lines records is exactly the site's ground truth, and what a kill costs is bounded by what was in flight
// (at most max_tasks URLs fetched again per kill). A SIGTERM'd run, started again, fetches nothing twice.
#include "support/loopback.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <asiocrawl_demo/site.hpp>

#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;

// Named, so that a unity build of cli_tests keeps this file's helpers apart from its neighbours'.
namespace resume_kill_test {
namespace {

const std::string cli = ASIOCRAWL_CLI_PATH;
constexpr int max_tasks = 4;

/// The generated site on a thread of its own, each answer a little late (so that fetches overlap and a kill
/// finds some in flight), logging every request.
struct site_server {
    demo::site site = demo::generate_site({.pages = 250, .seed = 11});
    demo::request_handler serve = demo::serve_site(site);
    asio::io_context ctx;
    std::mutex mutex;
    std::vector<std::string> log; // targets, in order of arrival
    demo::http_server server{ctx.get_executor(), [this](const http_request& req) {
                                 {
                                     std::lock_guard lock(mutex);
                                     log.emplace_back(req.target());
                                 }
                                 return late(req);
                             }};
    std::thread thread{[this] { ctx.run(); }};

    asio::awaitable<std::optional<http_response>> late(const http_request& req) {
        co_await sleep_for(2ms);
        co_return co_await serve(req);
    }
    ~site_server() {
        asio::post(ctx, [this] { server.stop(); });
        thread.join();
    }
    std::size_t requests() {
        std::lock_guard lock(mutex);
        return log.size();
    }
    std::vector<std::string> requests_from(std::size_t first) {
        std::lock_guard lock(mutex);
        return {log.begin() + static_cast<std::ptrdiff_t>(first), log.end()};
    }
    std::set<std::string> expected_urls() const {
        std::set<std::string> out;
        for (const auto& target : site.expected_requests)
            out.insert(server.origin() + target);
        return out;
    }
};

struct resume_kill : ::testing::Test {
    site_server site;
    temp_dir dir{"resume-kill"};
    fs::path records = dir.path / "out" / "records.jsonl";

    std::vector<std::string> command() const {
        return {cli,
                "-qq",
                "--max-tasks",
                std::to_string(max_tasks),
                "--state-dir",
                (dir.path / "state").string(),
                "-o",
                records.string(),
                site.server.origin() + "/"};
    }

    /// Lines of the records file so far (a line the kill cut short counts as not there).
    std::vector<std::string> lines() const {
        std::ifstream in{records};
        std::vector<std::string> out;
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::size_t start = 0;
        for (std::size_t nl; (nl = all.find('\n', start)) != std::string::npos; start = nl + 1)
            out.push_back(all.substr(start, nl - start));
        return out;
    }

    static std::string url_of(const std::string& line) {
        return std::string(boost::json::parse(line).as_object().at("url").as_string());
    }

    /// Targets requested in [from, to) of the server's log that were also requested before `from`.
    std::size_t fetched_again(std::size_t from, std::size_t to) {
        const auto all = site.requests_from(0);
        std::set<std::string> before(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(from));
        std::size_t again = 0;
        for (std::size_t i = from; i < to; ++i)
            if (all[i] != "/robots.txt" && before.contains(all[i]))
                ++again;
        return again;
    }
};

} // namespace

TEST_F(resume_kill, twenty_kills_lose_nothing_and_cost_at_most_what_was_in_flight) {
    const std::size_t total = site.site.expected_requests.size();
    // 20 kill points spread over the crawl: after k records, k drawn without repeats from the whole range.
    std::mt19937 random{20261124};
    std::set<std::size_t> points;
    while (points.size() < 20)
        points.insert(std::uniform_int_distribution<std::size_t>(1, total - 5)(random));

    struct run_info {
        std::size_t first_request, end_request, first_line, end_line;
    };
    std::vector<run_info> runs;
    for (const std::size_t point : points) {
        run_info run{site.requests(), 0, lines().size(), 0};
        child_process crawl{command()};
        // Poll until the records reach the kill point, or the run ended on its own.
        for (int i = 0; i < 20'000 && lines().size() < point; ++i) {
            if (::kill(crawl.pid(), 0) != 0)
                break;
            std::this_thread::sleep_for(500us);
        }
        crawl.signal(SIGKILL);
        const auto killed = crawl.wait(30s);
        ASSERT_FALSE(killed.timed_out);
        run.end_request = site.requests();
        run.end_line = lines().size();
        runs.push_back(run);
    }
    run_info last{site.requests(), 0, lines().size(), 0};
    const auto finished = run_process(command(), 60s);
    ASSERT_EQ(finished.exit_code, 0) << finished.err;
    last.end_request = site.requests();
    last.end_line = lines().size();
    runs.push_back(last);

    // Nothing lost: every line is a whole record, and the records cover the ground truth exactly.
    const auto all_lines = lines();
    std::map<std::string, std::vector<std::size_t>> runs_recording; // url -> the runs that recorded it
    for (std::size_t r = 0; r < runs.size(); ++r) {
        for (std::size_t i = runs[r].first_line; i < runs[r].end_line && i < all_lines.size(); ++i) {
            std::string url;
            ASSERT_NO_THROW(url = url_of(all_lines[i])) << "line " << i << ": " << all_lines[i];
            runs_recording[url].push_back(r);
        }
    }
    std::set<std::string> recorded;
    for (const auto& [url, by] : runs_recording)
        recorded.insert(url);
    EXPECT_EQ(recorded, site.expected_urls());

    // What each kill cost: URLs recorded before it and again after it, and targets fetched again in the next
    // run. Both bounded by what can be in flight: max_tasks.
    std::size_t duplicates = 0, refetched = 0;
    for (std::size_t r = 0; r + 1 < runs.size(); ++r) {
        std::size_t recorded_again = 0;
        for (const auto& [url, by] : runs_recording)
            if (std::count(by.begin(), by.end(), r) > 0 &&
                std::any_of(by.begin(), by.end(), [&](auto x) { return x > r; }))
                ++recorded_again;
        const auto again = fetched_again(runs[r + 1].first_request, runs[r + 1].end_request);
        EXPECT_LE(recorded_again, static_cast<std::size_t>(max_tasks)) << "kill " << r;
        EXPECT_LE(again, static_cast<std::size_t>(max_tasks)) << "run after kill " << r;
        duplicates += recorded_again;
        refetched += again;
    }
    std::printf("20 kills: %zu records over %zu runs, %zu recorded twice, %zu fetched again\n",
                all_lines.size(), runs.size(), duplicates, refetched);
}

TEST_F(resume_kill, a_sigterm_then_a_restart_fetches_nothing_twice) {
    {
        child_process crawl{command()};
        for (int i = 0; i < 20'000 && lines().size() < 60; ++i)
            std::this_thread::sleep_for(500us);
        crawl.signal(SIGTERM);
        const auto stopped = crawl.wait(30s);
        EXPECT_EQ(stopped.exit_code, 143) << stopped.err;
    }
    const auto first_run_requests = site.requests();
    const auto finished = run_process(command(), 60s);
    ASSERT_EQ(finished.exit_code, 0) << finished.err;
    EXPECT_EQ(fetched_again(first_run_requests, site.requests()), 0u);
    std::set<std::string> recorded;
    std::size_t count = 0;
    for (const auto& line : lines()) {
        recorded.insert(url_of(line));
        ++count;
    }
    EXPECT_EQ(recorded, site.expected_urls());
    EXPECT_EQ(count, recorded.size()) << "no record twice";
}

} // namespace resume_kill_test
