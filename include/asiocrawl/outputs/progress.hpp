// The progress line on a terminal: a sans-io formatter and a timer that redraws it at most twice a second.
#pragma once

#include <asiocrawl/outputs/output_config.hpp>
#include <asiocrawl/sink.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace asiocrawl::outputs {

/// One line, without line ending or terminal codes:
/// "pages 120 | queued 35 | in flight 10 | 40.0 pages/s | 1.25 MB/s | errors 2 | hosts 3 | 0:00:03".
/// The rates are measured since `previous` (a snapshot taken earlier in the same crawl), or over the whole
/// crawl when there is none. Robots denials are not errors (they appear as "robots 4" when there are any).
std::string progress_line(const crawl_progress& now, const crawl_progress* previous = nullptr);

/// The last line: "done: 500 pages in 0:00:12 (41.7 pages/s, 1.20 MB/s), 2 errors, 3 hosts".
std::string progress_summary(const crawl_progress& final_snapshot);

/// Whether a progress line should be drawn: `always`, or `automatic` with stderr a terminal and not quiet.
/// (The asiocrawl command also logs a heartbeat line off a terminal in `automatic`: docs/OUTPUTS.md.)
bool progress_enabled(progress_mode mode, bool stderr_is_tty, bool quiet) noexcept;

/// Redraws the progress line on a timer running on the crawler's executor. On a terminal the writer receives
/// bytes that overwrite the line in place ("\r", the line, erase-to-end-of-line), and after stop() the
/// summary with a newline. Elsewhere (`terminal` false: a file, a pipe, a container log) it receives plain
/// lines, "progress: " and the line and a newline, one every `interval`, and then the summary line:
/// no carriage return or escape code ever reaches a log. The writer is called on the executor and must not
/// block: the CLI hands the bytes to its stderr writer thread.
class progress_reporter {
public:
    using snapshot_fn = std::function<crawl_progress()>;
    using writer_fn = std::function<void(std::string)>;

    /// `interval` below 500 ms is raised to 500 ms: a terminal needs no more than two redraws a second.
    /// `interval` below 100 ms is raised to 100 ms when `terminal` is false.
    progress_reporter(boost::asio::any_io_executor executor, snapshot_fn snapshot, writer_fn writer,
                      std::chrono::milliseconds interval = std::chrono::milliseconds{500},
                      bool terminal = true);
    /// Stops without writing a summary.
    ~progress_reporter();
    progress_reporter(const progress_reporter&) = delete;
    progress_reporter& operator=(const progress_reporter&) = delete;

    /// Starts redrawing. Call on the executor.
    void start();
    /// Stops the timer and writes the summary line from a last snapshot. Idempotent. Call on the executor.
    void stop();

private:
    struct state;
    static boost::asio::awaitable<void> redraw_loop(std::shared_ptr<state> s);
    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::outputs
