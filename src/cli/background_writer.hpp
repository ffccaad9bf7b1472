// Writes lines to a file descriptor from a thread of its own, so that the crawler's io thread never blocks on
// a slow disk, pipe or terminal. The io thread only appends to an in-memory queue.
#pragma once

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace asiocrawl::cli {

class background_writer {
public:
    /// Takes ownership of `file` when `owns` is true (closes it in close()).
    background_writer(std::FILE* file, bool owns);
    ~background_writer();
    background_writer(const background_writer&) = delete;
    background_writer& operator=(const background_writer&) = delete;

    /// Queues `text` for writing. Never blocks on I/O.
    void write(std::string text);

    /// Writes everything queued, flushes, stops the thread. Idempotent. False if any write failed.
    bool close();

private:
    void run();

    std::FILE* file_;
    bool owns_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::string> pending_;
    bool closing_ = false;
    bool failed_ = false;
    std::thread thread_;
};

} // namespace asiocrawl::cli
