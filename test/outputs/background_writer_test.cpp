// The one writer-thread class of every output, and the text writer (records, logs) built on it: order,
// bounds, back-pressure with hysteresis and its drained signal, durability barriers, failures.
#include "outputs/background_writer.hpp"

#include "outputs/text_writer.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using asiocrawl::test::read_file;

namespace {

using asiocrawl::outputs::detail::background_writer;
using asiocrawl::outputs::detail::text_writer;

/// A job that holds the writer thread until released.
struct gate {
    std::promise<void> open;
    std::shared_future<void> opened = open.get_future().share();
    std::function<void()> job() {
        return [opened = opened] { opened.wait(); };
    }
};

TEST(BackgroundWriter, BusyPastTheHighWaterMarkUntilBelowTheLowOne) {
    background_writer writer{100};
    std::promise<void> drained;
    std::atomic<int> drained_calls{0};
    writer.set_on_drained([&] {
        if (drained_calls++ == 0)
            drained.set_value();
    });
    gate first, second;
    writer.post(60, first.job());
    EXPECT_FALSE(writer.busy());
    writer.post(60, second.job());
    EXPECT_TRUE(writer.busy()) << "120 bytes waiting, the first job holds the thread";
    first.open.set_value();
    // 60 bytes left: under the high mark (100) but not under the low one (50): still busy.
    while (writer.pending_bytes() > 60)
        std::this_thread::yield();
    EXPECT_TRUE(writer.busy());
    EXPECT_EQ(drained_calls.load(), 0);
    second.open.set_value();
    drained.get_future().wait();
    EXPECT_FALSE(writer.busy());
    writer.finish();
    EXPECT_EQ(writer.pending_bytes(), 0u);
    EXPECT_EQ(drained_calls.load(), 1) << "one drained signal per busy period";
}

TEST(BackgroundWriter, AFailingJobIsReportedAndLaterJobsStillRun) {
    background_writer writer{1 << 20};
    int ran = 0;
    writer.post(1, [] { throw std::runtime_error("disk full"); });
    writer.post(1, [&] { ++ran; });
    writer.finish();
    EXPECT_EQ(writer.error(), "disk full");
    EXPECT_EQ(ran, 1);
}

TEST(BackgroundWriter, ABarrierComesAfterEveryEarlierJobAndFlushes) {
    std::vector<std::string> events; // touched by the writer thread only until finish()
    background_writer writer{1 << 20, [&](bool sync) { events.push_back(sync ? "flush sync" : "flush"); }};
    gate held;
    writer.post(1, held.job());
    writer.post(1, [&] { events.push_back("job 1"); });
    std::promise<void> arrived;
    writer.barrier(true, [&] {
        events.push_back("barrier");
        arrived.set_value();
    });
    writer.post(1, [&] { events.push_back("job 2"); });
    held.open.set_value();
    arrived.get_future().wait();
    writer.finish();
    // The idle flushes come and go with timing; the order of the rest is fixed.
    std::vector<std::string> ordered;
    for (const auto& e : events)
        if (e != "flush")
            ordered.push_back(e);
    EXPECT_THAT(ordered, testing::ElementsAre("job 1", "flush sync", "barrier", "job 2"));
    EXPECT_EQ(events.back(), "flush") << "finish() flushes last";
}

TEST(BackgroundWriter, AfterFinishJobsAndBarriersRunOnTheCaller) {
    int flushes = 0;
    background_writer writer{1 << 20, [&](bool) { ++flushes; }};
    writer.finish();
    const int after_finish = flushes;
    const auto caller = std::this_thread::get_id();
    std::thread::id ran_on;
    bool done = false;
    writer.post(1, [&] { ran_on = std::this_thread::get_id(); });
    writer.barrier(false, [&] { done = true; });
    EXPECT_EQ(ran_on, caller);
    EXPECT_TRUE(done);
    EXPECT_GT(flushes, after_finish);
}

TEST(TextWriter, WritesEveryLineInOrderAndClosesTheFile) {
    asiocrawl::test::temp_dir dir{"text-writer"};
    const auto path = dir.path / "records.jsonl";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    ASSERT_GE(fd, 0);
    std::string expected;
    {
        text_writer writer{fd, true, "records"};
        for (int i = 0; i < 20'000; ++i) { // several 64 KiB blocks
            std::string line = "{\"n\":" + std::to_string(i) + "}\n";
            expected += line;
            writer.write(std::move(line));
        }
        EXPECT_EQ(writer.close(), "");
        EXPECT_EQ(writer.close(), "") << "idempotent";
    }
    EXPECT_EQ(read_file(path), expected);
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "an owned descriptor is closed";
}

TEST(TextWriter, ABarrierSeesTheLinesInTheFile) {
    asiocrawl::test::temp_dir dir{"text-writer-barrier"};
    const auto path = dir.path / "records.jsonl";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    ASSERT_GE(fd, 0);
    text_writer writer{fd, true, "records"};
    writer.write("one\n");
    writer.write("two\n");
    std::promise<std::string> seen;
    writer.barrier(true, [&] { seen.set_value(read_file(path)); });
    EXPECT_EQ(seen.get_future().get(), "one\ntwo\n");
    EXPECT_EQ(writer.close(), "");
}

TEST(TextWriter, AWriteFailureIsReportedOnceAndLaterTextDropped) {
    const int fd = ::open("/dev/full", O_WRONLY);
    ASSERT_GE(fd, 0);
    text_writer writer{fd, true, "output.records: cannot write /dev/full"};
    writer.write("a line\n");
    std::promise<void> arrived;
    writer.barrier(false, [&] { arrived.set_value(); });
    arrived.get_future().wait();
    EXPECT_EQ(writer.error(), "output.records: cannot write /dev/full: No space left on device");
    writer.write("dropped\n");
    EXPECT_EQ(writer.close(), "output.records: cannot write /dev/full: No space left on device");
}

TEST(TextWriter, AsSlowReaderHoldsItBackWithBoundedMemory) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    // A one-page pipe: once the queue is over the mark, the writer can never take it back under half the mark
    // into the pipe before a reader comes (a 64 KiB pipe could: a writer thread scheduled late would drain
    // the queue into it, and report drained before the callback below was set, TSan run of 2026-11-28).
    ASSERT_GE(::fcntl(pipe_fds[1], F_SETPIPE_SZ, 4096), 4096);
    text_writer writer{pipe_fds[1], true, "pipe", 1 << 16};
    // Nobody reads: the pipe fills, the thread blocks in write(2), the queue grows to the mark.
    const std::string line(1000, 'x');
    int written = 0;
    while (!writer.busy() && written < 100'000) {
        writer.write(line + "\n");
        ++written;
    }
    EXPECT_TRUE(writer.busy()) << "back-pressure, not unbounded memory";
    EXPECT_LT(written, 1000) << "busy once a page of pipe and 64 KiB of queue are held";
    std::promise<void> drained;
    writer.set_on_drained([&] { drained.set_value(); });
    // A reader comes: the queue drains and the writer says so.
    std::thread reader{[fd = pipe_fds[0]] {
        char buffer[65536];
        while (::read(fd, buffer, sizeof buffer) > 0) {
        }
    }};
    drained.get_future().wait();
    EXPECT_FALSE(writer.busy());
    EXPECT_EQ(writer.close(), "");
    reader.join();
    ::close(pipe_fds[0]);
}

} // namespace
