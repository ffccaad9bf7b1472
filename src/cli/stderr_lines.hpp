// stderr shared by the progress line and the log lines. On a terminal the progress line is redrawn in place
// ("\r", the line, erase to its end, no newline): a log line written as it is would run on from it
// ("... | 0:00:03asiocrawl: warning: ..."). So a log line first clears the progress line, then the progress
// line is drawn again under it.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace asiocrawl::cli {

class stderr_lines {
public:
    /// `write` takes bytes for stderr (the CLI's writer thread); `terminal`: stderr is a terminal.
    stderr_lines(std::function<void(std::string)> write, bool terminal)
        : write_(std::move(write))
        , terminal_(terminal) {}

    /// The progress reporter's bytes: a redraw ("\r...", no newline) is remembered to be drawn again after a
    /// log line; the summary (ending in a newline) ends the line.
    void progress(std::string bytes) {
        const std::lock_guard lock{mutex_};
        if (terminal_)
            shown_ = !bytes.empty() && bytes.back() != '\n' ? bytes : std::string{};
        write_(std::move(bytes));
    }

    /// One log line, ending in a newline. The logger may be called from parse threads as well.
    void log(std::string line) {
        const std::lock_guard lock{mutex_};
        if (!shown_.empty())
            line = std::string(clear_line) + line + shown_;
        write_(std::move(line));
    }

    /// "\r" and erase to the end of the line.
    static constexpr std::string_view clear_line = "\r\x1b[K";

private:
    std::mutex mutex_;
    std::function<void(std::string)> write_;
    bool terminal_;
    /// The progress line on screen now ("" for none).
    std::string shown_;
};

} // namespace asiocrawl::cli
