// The output set on real crawls of a loopback site: JSON Lines records through the same writer class as the
// other outputs, open modes (refuse, replace, append), the durability barrier, one rule for write failures,
// broken links in the summary, and saved pages following the crawl's accept/reject rules.
#include <asiocrawl/outputs/output_set.hpp>

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/outputs/warc.hpp>

#include "support/files.hpp"
#include "support/loopback_crawl.hpp"
#include "support/temp_dir.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using asiocrawl::test::read_file;

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::outputs;
using ::testing::HasSubstr;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in{text};
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

/// "/" links to four pages, one missing; a.txt and b.bin are files; robots.txt is missing (404).
asio::awaitable<std::optional<test::http_response>> small_site(const test::http_request& req) {
    const std::string target{req.target()};
    if (target == "/")
        co_return test::make_response(
            200, "<a href=/page.html>p</a><a href=/missing>m</a><a href=/a.txt>a</a><a href=/b.bin>b</a>");
    if (target == "/page.html")
        co_return test::make_response(200, "<p>a page</p>");
    if (target == "/a.txt")
        co_return test::make_response(200, "text file", "text/plain");
    if (target == "/b.bin")
        co_return test::make_response(200, "binary", "application/octet-stream");
    co_return test::make_response(404, "not here");
}

/// One crawl of small_site with `outputs` attached. `on_record` runs in the record sink with the set.
struct crawl_run {
    std::optional<report> result;
    std::vector<std::string> problems;
    std::vector<std::string> notes;
};

crawl_run crawl_with(const output_config& outputs, crawler_config config = {},
                     std::function<void(output_set&, const record&)> on_record = {}) {
    asio::io_context ctx;
    demo::http_server site{ctx.get_executor(), small_site};
    config.roots = {site.origin() + "/"};
    config.max_tasks = 2;
    crawler crawl{ctx.get_executor(), config};
    output_set out{ctx.get_executor(), outputs};
    out.attach(crawl, [&](const record& r) {
        if (on_record)
            on_record(out, r);
    });
    out.start();
    crawl_run run;
    run.result = test::run_crawl(ctx, crawl, [&] {
        out.stop();
        site.stop();
    });
    run.notes = out.notes();
    if (run.result)
        run.problems = out.finish(*run.result);
    return run;
}

TEST(OutputSetRecords, EveryRecordIsOneLineInAFileWhoseDirectoriesAreCreated) {
    test::temp_dir dir{"output-set-records"};
    output_config outputs;
    outputs.records = (dir.path / "out" / "records.jsonl").string();
    const auto run = crawl_with(outputs);
    ASSERT_TRUE(run.result);
    EXPECT_THAT(run.problems, testing::IsEmpty());
    const auto lines = lines_of(read_file(outputs.records));
    EXPECT_EQ(lines.size(), run.result->done);
    EXPECT_EQ(lines.size(), 5u);
    for (const auto& line : lines)
        EXPECT_NO_THROW(boost::json::parse(line)) << line;
}

TEST(OutputSetModes, ExistingOutputsAreAllNamedAndNothingIsCreated) {
    test::temp_dir dir{"output-set-exists"};
    std::ofstream{dir.path / "records.jsonl"} << "earlier\n";
    std::ofstream{dir.path / "report.json"} << "{}\n";
    std::ofstream{dir.path / "crawl-00000.warc.gz"} << "";
    fs::create_directories(dir.path / "pages" / "old");
    asio::io_context ctx;
    output_config outputs;
    outputs.records = (dir.path / "records.jsonl").string();
    outputs.report_json = (dir.path / "report.json").string();
    outputs.warc.path = (dir.path / "crawl-{serial}.warc.gz").string();
    outputs.save_dir = (dir.path / "pages").string();
    try {
        output_set out{ctx.get_executor(), outputs};
        FAIL() << "existing outputs were accepted";
    } catch (const crawl_error& e) {
        EXPECT_EQ(e.code(), error::output_exists);
        for (const char* named :
             {"output.records", "output.report_json", "output.warc.path", "output.save_dir", "--overwrite"})
            EXPECT_THAT(e.detail(), HasSubstr(named));
    }
    EXPECT_EQ(read_file(dir.path / "records.jsonl"), "earlier\n");

    // One conflict is enough to refuse, and the outputs that were free are not left behind.
    output_config partly;
    partly.records = (dir.path / "new" / "records.jsonl").string();
    partly.warc.path = outputs.warc.path;
    try {
        output_set out{ctx.get_executor(), partly};
        FAIL() << "an existing WARC series was accepted";
    } catch (const crawl_error& e) {
        EXPECT_EQ(e.code(), error::output_exists) << "found by the WARC writer, not by the set's own check";
    }
    EXPECT_FALSE(fs::exists(partly.records));
}

// An output that cannot be opened is error::output_unavailable, named in detail(); a listen address in use
// is one too, and so is one that does not parse.
TEST(OutputSetModes, AnOutputThatCannotBeOpenedIsUnavailable) {
    test::temp_dir dir{"output-set-unavailable"};
    std::ofstream{dir.path / "file"} << "a file, not a directory\n";
    asio::io_context ctx;
    // Below a regular file no directory can be made, even by root: each file output in turn.
    for (auto output : {&output_config::records, &output_config::report_json}) {
        output_config under_a_file;
        under_a_file.*output = (dir.path / "file" / "out").string();
        try {
            output_set out{ctx.get_executor(), under_a_file};
            FAIL() << "a path under a regular file was accepted";
        } catch (const crawl_error& e) {
            EXPECT_EQ(e.code(), error::output_unavailable);
            EXPECT_THAT(e.detail(), HasSubstr((dir.path / "file").string())) << "the path that is in the way";
        }
    }
    output_config warc_under_a_file;
    warc_under_a_file.warc.path = (dir.path / "file" / "crawl.warc").string();
    try {
        output_set out{ctx.get_executor(), warc_under_a_file};
        FAIL() << "a WARC path under a regular file was accepted";
    } catch (const crawl_error& e) {
        EXPECT_EQ(e.code(), error::output_unavailable);
    }
    output_config bad_listen;
    bad_listen.metrics_listen = "not an address";
    try {
        output_set out{ctx.get_executor(), bad_listen};
        FAIL() << "a listen address that does not parse was accepted";
    } catch (const crawl_error& e) {
        EXPECT_EQ(e.code(), error::output_unavailable);
        EXPECT_THAT(e.detail(), HasSubstr("not an address"));
    }
}

TEST(OutputSetModes, OverwriteReplacesAndAppendContinues) {
    test::temp_dir dir{"output-set-modes"};
    output_config outputs;
    outputs.records = (dir.path / "records.jsonl").string();
    outputs.report_json = (dir.path / "report.json").string();
    std::ofstream{outputs.records} << "{\"url\":\"earlier\"}\n{\"url\":\"torn";
    std::ofstream{outputs.report_json} << "old summary";

    outputs.mode = open_mode::append;
    {
        // Opening for a resumed crawl keeps the earlier summary until the new one is written.
        asio::io_context ctx;
        output_set opened{ctx.get_executor(), outputs};
        EXPECT_EQ(read_file(outputs.report_json), "old summary");
    }
    std::ofstream{outputs.records} << "{\"url\":\"earlier\"}\n{\"url\":\"torn";
    const auto appended = crawl_with(outputs);
    ASSERT_TRUE(appended.result);
    ASSERT_EQ(appended.notes.size(), 1u);
    EXPECT_THAT(appended.notes[0], HasSubstr("ended in a torn line: cut 12 bytes"));
    auto lines = lines_of(read_file(outputs.records));
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_EQ(lines[0], "{\"url\":\"earlier\"}");
    EXPECT_NO_THROW(boost::json::parse(read_file(outputs.report_json))) << "the summary is replaced whole";

    outputs.mode = open_mode::overwrite;
    const auto replaced = crawl_with(outputs);
    ASSERT_TRUE(replaced.result);
    lines = lines_of(read_file(outputs.records));
    EXPECT_EQ(lines.size(), 5u);
    EXPECT_THAT(lines[0], testing::Not(HasSubstr("earlier")));
}

TEST(OutputSetFlush, TheBarrierRunsOnceEverythingEarlierIsWritten) {
    test::temp_dir dir{"output-set-flush"};
    output_config outputs;
    outputs.records = (dir.path / "records.jsonl").string();
    outputs.warc.path = (dir.path / "crawl.warc").string();
    outputs.save_dir = (dir.path / "pages").string();
    std::size_t handed = 0;
    std::vector<std::promise<std::pair<std::size_t, std::string>>> seen(5);
    const auto run = crawl_with(outputs, {}, [&](output_set& out, const record&) {
        // The record sink's `also` runs before the set writes the record: the barrier goes after the
        // previous records, and must find every one of them in the file.
        const std::size_t before = handed++;
        out.flush(
            [&, before](const std::string& error) {
                seen[before].set_value({lines_of(read_file(outputs.records)).size(), error});
            },
            before % 2 == 1);
    });
    ASSERT_TRUE(run.result);
    for (std::size_t i = 0; i < seen.size(); ++i) {
        const auto [lines, error] = seen[i].get_future().get();
        EXPECT_GE(lines, i) << "barrier " << i;
        EXPECT_EQ(error, "");
    }
    EXPECT_THAT(run.problems, testing::IsEmpty());
}

TEST(OutputSetBackpressure, ASlowRecordsReaderPausesTheCrawlUntilItDrains) {
    test::temp_dir dir{"output-set-fifo"};
    const fs::path fifo = dir.path / "records.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // A reader end first, so that the set's open for writing does not wait; nothing is read yet.
    const int reader_fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader_fd, 0);
    ::fcntl(reader_fd, F_SETFL, 0);

    asio::io_context ctx;
    constexpr int pages = 1000; // ~250 KB of records: more than the pipe, a 64 KiB block and the limit
    demo::http_server site{
        ctx.get_executor(),
        [](const test::http_request& req) -> asio::awaitable<std::optional<test::http_response>> {
            if (req.target() != "/")
                co_return test::make_response(200, "<p>leaf</p>");
            std::string body;
            for (int i = 0; i < pages; ++i)
                body += "<a href=/p" + std::to_string(i) + ">x</a>";
            co_return test::make_response(200, body);
        }};
    crawler_config config;
    config.roots = {site.origin() + "/"};
    config.max_tasks = 4;
    config.politeness.max_per_host = 4;
    crawler crawl{ctx.get_executor(), config};
    output_config outputs;
    outputs.records = fifo.string();
    outputs.queue_limit_bytes = 4096;
    output_set out{ctx.get_executor(), outputs};
    std::atomic<int> drained{0};
    out.set_on_drained([&] { ++drained; });
    out.attach(crawl);
    out.start();

    // The reader starts only once the set has said it is busy: until then the crawl must hold back.
    std::string received;
    std::thread reader;
    std::size_t records_when_busy = 0;
    asio::steady_timer poll{ctx};
    std::function<void()> watch = [&] {
        if (out.busy()) {
            records_when_busy = crawl.progress().records;
            reader = std::thread{[&] {
                char buffer[65536];
                for (ssize_t n; (n = ::read(reader_fd, buffer, sizeof buffer)) > 0;)
                    received.append(buffer, static_cast<std::size_t>(n));
            }};
            return;
        }
        poll.expires_after(std::chrono::milliseconds{1});
        poll.async_wait([&](boost::system::error_code ec) {
            if (!ec)
                watch();
        });
    };
    watch();
    auto result = test::run_crawl(ctx, crawl, [&] {
        poll.cancel();
        out.stop();
        site.stop();
    });
    ASSERT_TRUE(result);
    EXPECT_THAT(out.finish(*result), testing::IsEmpty());
    ASSERT_TRUE(reader.joinable()) << "the set never became busy";
    reader.join();
    ::close(reader_fd);
    EXPECT_LT(records_when_busy, static_cast<std::size_t>(pages)) << "busy before the crawl was over";
    EXPECT_GE(drained.load(), 1) << "and said so when it caught up";
    EXPECT_EQ(lines_of(received).size(), static_cast<std::size_t>(pages + 1)) << "no record lost";
}

TEST(OutputSetFlush, WithoutWriterThreadsTheBarrierRunsInline) {
    asio::io_context ctx;
    output_set out{ctx.get_executor(), output_config{}};
    bool ran = false;
    out.flush([&](const std::string& error) { ran = error.empty(); });
    EXPECT_TRUE(ran);
    EXPECT_FALSE(out.busy());
}

TEST(OutputSetFailures, EveryOutputThatCannotBeWrittenIsAProblem) {
    test::temp_dir dir{"output-set-full"};
    output_config outputs;
    outputs.records = "/dev/full";
    outputs.report_json = "/dev/full";
    const auto run = crawl_with(outputs);
    ASSERT_TRUE(run.result);
    ASSERT_EQ(run.problems.size(), 2u) << testing::PrintToString(run.problems);
    EXPECT_THAT(run.problems[0],
                HasSubstr("output.records: cannot write /dev/full: No space left on device"));
    EXPECT_THAT(run.problems[1],
                HasSubstr("output.report_json: cannot write /dev/full: No space left on device"));
}

TEST(OutputSetSummary, ListsBrokenLinks) {
    test::temp_dir dir{"output-set-broken"};
    output_config outputs;
    outputs.report_json = (dir.path / "report.json").string();
    const auto run = crawl_with(outputs);
    ASSERT_TRUE(run.result);
    const auto summary = boost::json::parse(read_file(outputs.report_json)).as_object();
    const auto& broken = summary.at("broken_links").as_array();
    ASSERT_EQ(broken.size(), 1u);
    EXPECT_THAT(std::string(broken[0].at("url").as_string()), testing::EndsWith("/missing"));
    EXPECT_EQ(broken[0].at("status").to_number<int>(), 404);
    EXPECT_EQ(summary.at("broken_links_omitted").to_number<int>(), 0);
    // Plain decimals, never an exponent.
    EXPECT_EQ(read_file(outputs.report_json).find("E-"), std::string::npos);
}

TEST(OutputSetSavedPages, FollowTheAcceptRulesAsWgetDoes) {
    test::temp_dir dir{"output-set-accept"};
    output_config outputs;
    outputs.save_dir = (dir.path / "pages").string();
    crawler_config config;
    config.accept = {"txt"};
    const auto run = crawl_with(outputs, config);
    ASSERT_TRUE(run.result);
    std::set<std::string> saved;
    for (const auto& entry : fs::recursive_directory_iterator(dir.path / "pages"))
        if (entry.is_regular_file())
            saved.insert(entry.path().filename().string());
    // "/" and page.html were fetched to find links, then not kept; b.bin and "missing" (a name without
    // the .html/.htm that marks a page for wget) were never fetched.
    EXPECT_EQ(saved, std::set<std::string>{"a.txt"});
    EXPECT_EQ(run.result->stats.at("skipped_rejected_file"), 2u);
    EXPECT_EQ(run.result->done, 3u);
}

} // namespace
