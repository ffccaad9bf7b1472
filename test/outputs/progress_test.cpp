#include <asiocrawl/outputs/progress.hpp>

#include "support/loopback.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <pty.h>
#include <unistd.h>

#include <optional>

namespace {

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::outputs;
using namespace std::chrono_literals;

crawl_progress snapshot(std::size_t records, std::uint64_t bytes, std::chrono::milliseconds elapsed,
                        std::size_t queued = 0, std::size_t in_flight = 0, std::size_t hosts = 0,
                        std::size_t failures = 0, std::size_t robots = 0) {
    crawl_progress p;
    p.records = records;
    p.bytes = bytes;
    p.elapsed = elapsed;
    p.queued = queued;
    p.in_flight = in_flight;
    p.hosts = hosts;
    p.failures = failures;
    p.robots_denied = robots;
    return p;
}

struct line_case {
    const char* name;
    crawl_progress now;
    std::optional<crawl_progress> previous;
    const char* line;
};

class ProgressLine : public testing::TestWithParam<line_case> {};

TEST_P(ProgressLine, Formats) {
    const auto& c = GetParam();
    EXPECT_EQ(progress_line(c.now, c.previous ? &*c.previous : nullptr), c.line);
}

INSTANTIATE_TEST_SUITE_P(
    Snapshots, ProgressLine,
    testing::Values(
        line_case{
            "start", snapshot(0, 0, 0ms), std::nullopt,
            "pages 0 | queued 0 | in flight 0 | 0.0 pages/s | 0.00 MB/s | errors 0 | hosts 0 | 0:00:00"},
        line_case{
            "whole_crawl_rate", snapshot(120, 3'750'000, 3000ms, 35, 10, 3, 2), std::nullopt,
            "pages 120 | queued 35 | in flight 10 | 40.0 pages/s | 1.25 MB/s | errors 2 | hosts 3 | 0:00:03"},
        line_case{
            "rate_since_previous", snapshot(150, 3'000'000, 10'000ms, 5, 2, 1),
            snapshot(100, 1'000'000, 9'500ms),
            "pages 150 | queued 5 | in flight 2 | 100.0 pages/s | 4.00 MB/s | errors 0 | hosts 1 | 0:00:10"},
        line_case{
            "stalled_since_previous", snapshot(150, 3'000'000, 10'000ms), snapshot(150, 3'000'000, 9'500ms),
            "pages 150 | queued 0 | in flight 0 | 0.0 pages/s | 0.00 MB/s | errors 0 | hosts 0 | 0:00:10"},
        line_case{
            "previous_from_another_crawl_is_ignored", snapshot(10, 0, 2000ms), snapshot(50, 0, 5000ms),
            "pages 10 | queued 0 | in flight 0 | 5.0 pages/s | 0.00 MB/s | errors 0 | hosts 0 | 0:00:02"},
        line_case{
            "robots_denials_shown_apart", snapshot(7, 0, 1000ms, 0, 0, 1, 1, 4), std::nullopt,
            "pages 7 | queued 0 | in flight 0 | 7.0 pages/s | 0.00 MB/s | errors 1 | robots 4 | hosts 1 | "
            "0:00:01"},
        line_case{
            "hours", snapshot(0, 0, 3'725'400ms), std::nullopt,
            "pages 0 | queued 0 | in flight 0 | 0.0 pages/s | 0.00 MB/s | errors 0 | hosts 0 | 1:02:05"}),
    [](const testing::TestParamInfo<line_case>& info) { return info.param.name; });

TEST(ProgressSummary, Formats) {
    EXPECT_EQ(progress_summary(snapshot(500, 14'400'000, 12'000ms, 0, 0, 3, 2)),
              "done: 500 pages in 0:00:12 (41.7 pages/s, 1.20 MB/s), 2 errors, 3 hosts");
    EXPECT_EQ(progress_summary(snapshot(1, 0, 0ms, 0, 0, 1, 1, 2)),
              "done: 1 page in 0:00:00 (0.0 pages/s, 0.00 MB/s), 1 error, 2 denied by robots.txt, 1 host");
}

struct enabled_case {
    progress_mode mode;
    bool tty;
    bool quiet;
    bool enabled;
};

class ProgressEnabled : public testing::TestWithParam<enabled_case> {};

TEST_P(ProgressEnabled, Decides) {
    const auto& c = GetParam();
    EXPECT_EQ(progress_enabled(c.mode, c.tty, c.quiet), c.enabled);
}

INSTANTIATE_TEST_SUITE_P(Modes, ProgressEnabled,
                         testing::Values(enabled_case{progress_mode::automatic, true, false, true},
                                         enabled_case{progress_mode::automatic, false, false, false},
                                         enabled_case{progress_mode::automatic, true, true, false},
                                         enabled_case{progress_mode::always, false, true, true},
                                         enabled_case{progress_mode::never, true, false, false}),
                         [](const testing::TestParamInfo<enabled_case>& info) {
                             const enabled_case& c = info.param;
                             const char* mode = c.mode == progress_mode::automatic ? "automatic"
                                                : c.mode == progress_mode::always  ? "always"
                                                                                   : "never";
                             return std::string(mode) + (c.tty ? "_tty" : "_notty") +
                                    (c.quiet ? "_quiet" : "");
                         });

// The driver, writing to a real pseudo-terminal: what a user's terminal receives.
TEST(ProgressReporter, RedrawsOnATerminalAtMostTwiceASecondThenSummarizes) {
    int master = -1;
    int slave = -1;
    ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
    EXPECT_TRUE(isatty(slave));
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    EXPECT_FALSE(isatty(pipe_fds[1])); // the CLI's automatic mode would draw nothing there
    EXPECT_TRUE(progress_enabled(progress_mode::automatic, isatty(slave), false));
    EXPECT_FALSE(progress_enabled(progress_mode::automatic, isatty(pipe_fds[1]), false));
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);

    asio::io_context ctx;
    std::size_t polls = 0;
    std::vector<std::chrono::steady_clock::time_point> writes;
    std::string written;
    const auto start = std::chrono::steady_clock::now();
    progress_reporter reporter{ctx.get_executor(),
                               [&] {
                                   ++polls;
                                   return snapshot(polls * 10, polls * 1000,
                                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                                       std::chrono::steady_clock::now() - start),
                                                   1, 1, 1);
                               },
                               [&](std::string bytes) {
                                   writes.push_back(std::chrono::steady_clock::now());
                                   written += bytes;
                                   ASSERT_EQ(::write(slave, bytes.data(), bytes.size()),
                                             static_cast<ssize_t>(bytes.size()));
                               },
                               100ms}; // asks for 10 a second; gets at most 2
    reporter.start();
    asio::steady_timer end{ctx, 1600ms};
    end.async_wait([&](auto) { reporter.stop(); });
    test::run_bounded(ctx, std::chrono::seconds{20});

    ASSERT_GE(writes.size(), 3u); // at least two redraws and the summary
    for (std::size_t i = 1; i + 1 < writes.size(); ++i)
        EXPECT_GE(writes[i] - writes[i - 1], 490ms) << "redraw " << i;

    // Read back what the terminal got. Raw mode: no newline translation by the line discipline.
    termios raw{};
    tcgetattr(slave, &raw);
    cfmakeraw(&raw);
    tcsetattr(slave, TCSANOW, &raw);
    std::string seen;
    fcntl(master, F_SETFL, O_NONBLOCK);
    char buffer[4096];
    for (ssize_t n; (n = ::read(master, buffer, sizeof buffer)) > 0;)
        seen.append(buffer, static_cast<std::size_t>(n));
    ::close(master);
    ::close(slave);
    // ONLCR may have turned the final "\n" into "\r\n" before raw mode applied.
    if (seen.size() >= 2 && seen.compare(seen.size() - 2, 2, "\r\n") == 0)
        seen.replace(seen.size() - 2, 2, "\n");
    EXPECT_EQ(seen, written);

    // Every redraw overwrites the line in place; only the summary ends it.
    EXPECT_EQ(written.front(), '\r');
    EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 1);
    EXPECT_EQ(std::count(written.begin(), written.end(), '\r'), static_cast<long>(writes.size()));
    EXPECT_THAT(written, testing::HasSubstr("pages 20 | queued 1 | in flight 1 | "));
    EXPECT_THAT(written,
                testing::HasSubstr("\x1b[K\rdone: " + std::to_string(polls * 10) + " pages in 0:00:01 ("));
    EXPECT_THAT(written, testing::EndsWith(" 1 host\x1b[K\n"));
}

TEST(ProgressReporter, DestroyedWithoutStopWritesNoSummaryAndReleasesTheContext) {
    asio::io_context ctx;
    std::string written;
    {
        progress_reporter reporter{ctx.get_executor(), [] { return crawl_progress{}; },
                                   [&](std::string bytes) { written += bytes; }};
        reporter.start();
    }
    test::run_bounded(ctx, std::chrono::seconds{10});
    EXPECT_EQ(written, "");
}

} // namespace
