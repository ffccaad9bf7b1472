// Text to a file descriptor from a background_writer thread: JSON Lines records, and the CLI's log lines on
// stderr. Lines are gathered into blocks and written with write(2) when a block fills or the queue runs
// empty, so a reader (tail -f, a crash) sees every line a moment after it was queued.
#pragma once

#include "outputs/background_writer.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace asiocrawl::outputs::detail {

class text_writer {
public:
    /// Writes to `fd`, closing it in close() when `owns_fd`. `name` prefixes error messages
    /// ("output.records: cannot write records.jsonl: No space left on device").
    text_writer(int fd, bool owns_fd, std::string name, std::size_t high_water_bytes = 16u << 20);
    /// Closes (see close()).
    ~text_writer();
    text_writer(const text_writer&) = delete;
    text_writer& operator=(const text_writer&) = delete;

    /// Queues `text`. Never blocks on I/O. After a write failed, text is dropped (close() reports it), and
    /// an owned regular file is cut back to its last whole line (a full disk may take half a line).
    void write(std::string text);

    bool busy() const noexcept;
    void set_on_drained(std::function<void()> on_drained);
    /// See background_writer::set_on_error.
    void set_on_error(std::function<void(const std::string& error)> on_error);
    /// See background_writer::barrier: `done` runs once everything written before has reached write(2)
    /// (and fsync when `sync`).
    void barrier(bool sync, std::function<void()> done);

    /// Writes what is queued, closes an owned descriptor, stops the thread. Idempotent. "" or the first
    /// error.
    std::string close();

    /// The first error so far ("" when none).
    std::string error() const;

private:
    struct state;
    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::outputs::detail
