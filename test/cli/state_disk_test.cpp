// The state directory's lock, and full disks: the asiocrawl command as a child process against a generated
// site with ground truth, on real small tmpfs mounts that fill up.
// - A crawl holding a state directory refuses a second one in it, with --state-reset or without: exit 2
//   naming the holder's pid, no output of its own created, and the first crawl finishes exactly.
// - A full disk under the state directory is a clean error (exit 1, "no space", the directory named), and
//   once space is freed the same command resumes and finishes with the exact page set.
// - A full disk under the outputs of a memory-only crawl stops the crawl, and each file ends at its last
//   whole record.
#include "support/files.hpp"
#include "support/loopback.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "support/tmpfs.hpp"

#include <asiocrawl/outputs/warc.hpp>
#include <asiocrawl_demo/site.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

using asiocrawl::test::read_file;

// Named, so that a unity build of cli_tests keeps this file's helpers apart from its neighbours'.
namespace state_disk_test {
namespace {

const std::string cli = ASIOCRAWL_CLI_PATH;
constexpr int max_tasks = 4;

/// The generated site on a thread of its own, each answer a little late, logging every request. A closed
/// gate holds every answer until open_gate(): a crawl waiting there is certainly running.
struct site_server {
    explicit site_server(std::uint32_t pages, bool gated = false)
        : site(demo::generate_site({.pages = pages, .seed = 21}))
        , gate_open(!gated) {}

    demo::site site;
    demo::request_handler serve = demo::serve_site(site);
    asio::io_context ctx;
    std::mutex mutex;
    std::vector<std::string> log; // targets, in order of arrival
    asio::steady_timer gate{ctx, asio::steady_timer::time_point::max()};
    bool gate_open; // on the server's thread
    demo::http_server server{ctx.get_executor(), [this](const http_request& req) {
                                 {
                                     std::lock_guard lock(mutex);
                                     log.emplace_back(req.target());
                                 }
                                 return answer(req);
                             }};
    std::thread thread{[this] { ctx.run(); }};

    asio::awaitable<std::optional<http_response>> answer(const http_request& req) {
        while (!gate_open)
            co_await gate.async_wait(asio::as_tuple(asio::use_awaitable));
        co_await sleep_for(2ms);
        co_return co_await serve(req);
    }
    void open_gate() {
        asio::post(ctx, [this] {
            gate_open = true;
            gate.cancel();
        });
    }
    ~site_server() {
        asio::post(ctx, [this] { server.stop(); });
        thread.join();
    }
    std::string root() const { return server.origin() + "/"; }
    std::size_t requests() {
        std::lock_guard lock(mutex);
        return log.size();
    }
    /// Targets requested from `first` on that were requested in [since, first) too (robots.txt aside).
    std::size_t fetched_again(std::size_t first, std::size_t since = 0) {
        std::lock_guard lock(mutex);
        std::set<std::string> before(log.begin() + static_cast<std::ptrdiff_t>(since),
                                     log.begin() + static_cast<std::ptrdiff_t>(first));
        std::size_t again = 0;
        for (std::size_t i = first; i < log.size(); ++i)
            if (log[i] != "/robots.txt" && before.contains(log[i]))
                ++again;
        return again;
    }
    std::set<std::string> expected_urls() const {
        std::set<std::string> out;
        for (const auto& target : site.expected_requests)
            out.insert(server.origin() + target);
        return out;
    }
};

/// The URLs of a JSON Lines file's records, in order. Every line must be a whole record, the last one
/// included: a torn line fails the test.
std::vector<std::string> record_urls(const fs::path& path) {
    const std::string all = read_file(path);
    EXPECT_TRUE(all.empty() || all.back() == '\n') << path << " ends in a torn line";
    std::vector<std::string> urls;
    std::size_t start = 0;
    for (std::size_t nl; (nl = all.find('\n', start)) != std::string::npos; start = nl + 1) {
        const std::string line = all.substr(start, nl - start);
        try {
            urls.emplace_back(boost::json::parse(line).as_object().at("url").as_string());
        } catch (const std::exception& e) {
            ADD_FAILURE() << path << ": not a whole record: " << line.substr(0, 200);
        }
    }
    return urls;
}

std::vector<std::string> command(const site_server& site, const fs::path& state, const fs::path& records) {
    return {cli,           "-q",           "--no-report", "--max-tasks",    std::to_string(max_tasks),
            "--state-dir", state.string(), "-o",          records.string(), site.root()};
}

struct state_disk : ::testing::Test {
    temp_dir dir{"state-disk"};
};

} // namespace

TEST_F(state_disk, a_held_state_directory_is_refused_first_with_or_without_reset) {
    site_server site{120, true};
    const fs::path state = dir.path / "state";
    const fs::path records = dir.path / "a" / "records.jsonl";
    child_process a{command(site, state, records)};
    // A locks the directory before its first request, which waits at the gate: A is surely running.
    for (int i = 0; i < 20'000 && site.requests() == 0 && ::kill(a.pid(), 0) == 0; ++i)
        std::this_thread::sleep_for(1ms);
    ASSERT_EQ(site.requests(), 1u) << "crawl A did not start: " << a.stderr_so_far();

    for (const bool reset : {true, false}) {
        SCOPED_TRACE(reset ? "--state-reset" : "no reset");
        const fs::path out = dir.path / (reset ? "b-reset" : "b");
        std::vector<std::string> argv{cli, "--state-dir", state.string()};
        if (reset)
            argv.emplace_back("--state-reset");
        argv.insert(argv.end(),
                    {"-o", (out / "records.jsonl").string(), "--warc", (out / "out.warc.gz").string(),
                     "--save-dir", (out / "pages").string(), site.root()});
        const auto b = run_process(argv, 30s);
        EXPECT_EQ(b.exit_code, 2) << b.err;
        EXPECT_THAT(b.err, HasSubstr("state directory " + state.string() +
                                     ": is in use by another crawl (pid " + std::to_string(a.pid()) + ")"));
        EXPECT_THAT(b.err, Not(HasSubstr("--state-reset")));
        EXPECT_FALSE(fs::exists(out)) << "a refused run creates no output, not even its directory";
    }
    EXPECT_EQ(site.requests(), 1u) << "the refused runs requested nothing";
    EXPECT_TRUE(fs::exists(state / "ASIOCRAWL_STATE")) << "A's state was left alone";

    site.open_gate();
    const auto finished = a.wait(60s);
    ASSERT_EQ(finished.exit_code, 0) << finished.err;
    const auto urls = record_urls(records);
    EXPECT_EQ(std::set<std::string>(urls.begin(), urls.end()), site.expected_urls());
    EXPECT_EQ(urls.size(), site.expected_urls().size()) << "no URL recorded twice";

    // A's state is whole: the same command again finds the crawl finished and fetches nothing.
    const auto before = site.requests();
    const auto again = run_process(command(site, state, records), 60s);
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(site.fetched_again(before), 0u);
    EXPECT_EQ(record_urls(records).size(), urls.size());
}

TEST_F(state_disk, a_full_state_directory_is_a_clean_error_and_the_crawl_resumes_once_space_is_freed) {
    site_server site{250};
    for (const bool records_on_the_full_disk : {false, true}) {
        SCOPED_TRACE(records_on_the_full_disk ? "state and records on the full disk"
                                              : "state on the full disk");
        tmpfs_mount disk{dir.path / (records_on_the_full_disk ? "disk-both" : "disk"), 1u << 20};
        if (!disk.problem.empty())
            GTEST_SKIP() << disk.problem;
        // Room for the database to open and to commit a few dozen pages, not the whole site.
        const fs::path filler = disk.path() / "filler";
        disk.fill_leaving(96 * 1024, filler);
        const fs::path state = disk.path() / "state";
        const fs::path records =
            (records_on_the_full_disk ? disk.path() : dir.path / "out-separate") / "records.jsonl";
        const auto argv = command(site, state, records);

        const auto since = site.requests();
        const auto full = run_process(argv, 60s);
        EXPECT_EQ(full.exit_code, 1) << full.err; // not 134: RocksDB's assertion aborted the process
        // Whichever met the full disk first, RocksDB or the records' writer, says so.
        std::string said = full.err;
        std::transform(said.begin(), said.end(), said.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        EXPECT_THAT(said, HasSubstr("no space left on device")) << full.err;
        if (!records_on_the_full_disk) {
            EXPECT_THAT(full.err,
                        HasSubstr("state directory " + state.string() + ": no space left on device"));
        }
        const auto first = record_urls(records);
        EXPECT_GT(first.size(), 0u) << "the disk filled up during the crawl, not before it";
        EXPECT_LT(first.size(), site.expected_urls().size()) << "the crawl stopped";

        const auto before = site.requests();
        fs::remove(filler);
        const auto resumed = run_process(argv, 60s);
        ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
        const auto all = record_urls(records);
        EXPECT_EQ(std::set<std::string>(all.begin(), all.end()), site.expected_urls());
        // As after a kill: only URLs whose outcome was not committed yet are fetched again, one a worker.
        const auto again = site.fetched_again(before, since);
        EXPECT_LE(again, static_cast<std::size_t>(max_tasks));
        std::printf("%s: %zu of %zu records before the disk was full, %zu fetched again after it\n",
                    records_on_the_full_disk ? "state and records" : "state", first.size(),
                    site.expected_urls().size(), again);
    }
}

TEST_F(state_disk, a_full_disk_under_the_outputs_stops_the_crawl_and_leaves_whole_records) {
    site_server site{600};
    for (const bool warc : {false, true}) {
        SCOPED_TRACE(warc ? "WARC on the full disk" : "records on the full disk");
        tmpfs_mount disk{dir.path / (warc ? "disk-warc" : "disk-records"), warc ? 256u << 10 : 64u << 10};
        if (!disk.problem.empty())
            GTEST_SKIP() << disk.problem;
        const std::size_t first_request = site.requests();
        const fs::path file = disk.path() / (warc ? "out.warc.gz" : "records.jsonl");
        std::vector<std::string> argv{cli, "-q", "--no-report", "--max-tasks", std::to_string(max_tasks)};
        argv.insert(argv.end(), {warc ? "--warc" : "-o", file.string(), site.root()});

        const auto result = run_process(argv, 60s);
        EXPECT_EQ(result.exit_code, 1) << result.err;
        EXPECT_THAT(result.err, HasSubstr("cannot write " + file.string() + ": No space left on device"));
        EXPECT_THAT(result.err, HasSubstr("an output that cannot be written stops the crawl"));
        const std::size_t requested = site.requests() - first_request;
        EXPECT_LT(requested, site.expected_urls().size() / 2) << "the crawl stopped instead of fetching on";
        std::size_t whole = 0;
        if (warc) {
            const auto repair = outputs::repair_warc_tail(file.string());
            EXPECT_EQ(repair.cut_bytes, 0u) << "the WARC ends at its last whole record";
            whole = repair.whole_records;
        } else {
            whole = record_urls(file).size();
        }
        EXPECT_GT(whole, 1u);
        std::printf("%s: %zu whole records on the full disk, %zu requests of %zu\n",
                    warc ? "WARC" : "records", whole, requested, site.expected_urls().size());
    }
}

TEST_F(state_disk, a_disk_full_before_the_crawl_starts_leaves_no_output_in_the_way) {
    site_server site{60};
    tmpfs_mount disk{dir.path / "disk", 256u << 10};
    if (!disk.problem.empty())
        GTEST_SKIP() << disk.problem;
    const fs::path filler = disk.path() / "filler";
    disk.fill_leaving(0, filler);
    const fs::path state = disk.path() / "state";
    const fs::path records = dir.path / "out" / "records.jsonl";
    const auto argv = command(site, state, records);

    const auto full = run_process(argv, 60s);
    EXPECT_EQ(full.exit_code, 1) << full.err;
    EXPECT_THAT(full.err, HasSubstr("state directory " + state.string() + ": no space left on device"));
    EXPECT_FALSE(fs::exists(records)) << "nothing was fetched: the records file it created is gone again";
    EXPECT_EQ(site.requests(), 0u);

    fs::remove(filler);
    const auto again = run_process(argv, 60s);
    ASSERT_EQ(again.exit_code, 0) << again.err; // no "outputs exist already" in its way
    const auto urls = record_urls(records);
    EXPECT_EQ(std::set<std::string>(urls.begin(), urls.end()), site.expected_urls());
    EXPECT_EQ(urls.size(), site.expected_urls().size());
}

} // namespace state_disk_test
