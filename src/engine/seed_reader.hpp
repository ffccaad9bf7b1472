// Reads the seed file (crawler_config::input_file, or the descriptor input_fd) a chunk at a time, blocking,
// on a thread of the crawler's own: never on the io thread. Cut into lines by seed_splitter.
#pragma once

#include "state/seed_lines.hpp"

#include <atomic>
#include <cstddef>
#include <string>

namespace asiocrawl::detail {

class seed_reader {
public:
    /// Opens `path`, or reads the open descriptor `fd` (>= 0; not closed) which `path` then only names.
    /// Throws std::invalid_argument naming the file and the reason when it cannot be opened.
    explicit seed_reader(std::string path, int fd = -1);
    ~seed_reader();
    seed_reader(const seed_reader&) = delete;
    seed_reader& operator=(const seed_reader&) = delete;

    /// Where the first read starts (a resumed crawl's position). Call before the first next().
    void start_at(seed_position position);

    /// The next chunk: at most `max_bytes` read, its complete lines, the position after them. Blocks until
    /// some bytes come, the input ends, or cancel() (then an empty chunk, not the end). Call from one thread
    /// at a time.
    seed_chunk next(std::size_t max_bytes = 16 * 1024);

    /// Any thread: a next() that waits for input returns soon, and so does every later one.
    void cancel() noexcept { cancelled_ = true; }

    const std::string& path() const noexcept { return path_; }

private:
    bool skip_to_start(seed_chunk& out);

    std::string path_;
    int fd_ = -1;
    bool owns_fd_ = false;
    bool started_ = false;
    seed_position start_;
    seed_splitter splitter_;
    std::atomic<bool> cancelled_{false};
};

} // namespace asiocrawl::detail
