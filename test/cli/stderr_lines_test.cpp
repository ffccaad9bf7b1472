// The progress line and log lines on one terminal: a log line clears the line and the line is drawn again.

#include "cli/stderr_lines.hpp"

#include <gtest/gtest.h>

#include <string>

namespace stderr_lines_test {
namespace {

using asiocrawl::cli::stderr_lines;

TEST(stderr_lines, on_a_terminal_a_log_line_clears_the_progress_line_and_redraws_it) {
    std::string screen;
    stderr_lines lines{[&](std::string bytes) { screen += bytes; }, true};
    lines.log("asiocrawl: before any progress\n");
    EXPECT_EQ(screen, "asiocrawl: before any progress\n");
    screen.clear();
    lines.progress("\rpages 1 | 0:00:01\x1b[K");
    lines.log("asiocrawl: warning: slow\n");
    EXPECT_EQ(screen, "\rpages 1 | 0:00:01\x1b[K"
                      "\r\x1b[Kasiocrawl: warning: slow\n"
                      "\rpages 1 | 0:00:01\x1b[K");
    screen.clear();
    // The summary ends the line: later log lines are plain.
    lines.progress("\rdone: 2 pages\x1b[K\n");
    lines.log("asiocrawl: 1 URL failed\n");
    EXPECT_EQ(screen, "\rdone: 2 pages\x1b[K\nasiocrawl: 1 URL failed\n");
}

TEST(stderr_lines, off_a_terminal_lines_pass_as_they_are) {
    std::string log;
    stderr_lines lines{[&](std::string bytes) { log += bytes; }, false};
    lines.progress("progress: pages 1\n");
    lines.log("asiocrawl: warning: slow\n");
    EXPECT_EQ(log, "progress: pages 1\nasiocrawl: warning: slow\n");
}

} // namespace
} // namespace stderr_lines_test
