#include "engine/seed_reader.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace asiocrawl::detail {

namespace {

// How often a reader waiting for input looks at cancel(): a stopping crawl waits at most this long for it.
constexpr int poll_interval_ms = 100;

std::string display(const std::string& path) {
    return path == "-" ? std::string("standard input") : path;
}

} // namespace

seed_reader::seed_reader(std::string path, int fd)
    : path_(std::move(path)) {
    if (fd >= 0) {
        fd_ = fd;
        return;
    }
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
        throw std::invalid_argument("input_file " + path_ + ": cannot open: " + std::strerror(errno));
    owns_fd_ = true;
}

seed_reader::~seed_reader() {
    if (owns_fd_)
        ::close(fd_);
}

void seed_reader::start_at(seed_position position) {
    start_ = position;
    splitter_ = seed_splitter(position);
}

/// Waits until the descriptor has bytes or is at its end (a regular file always is), or cancel().
static bool wait_readable(int fd, const std::atomic<bool>& cancelled) {
    while (!cancelled) {
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, poll_interval_ms);
        if (ready > 0 || (ready < 0 && errno != EINTR))
            return true; // readable, closed, or an error that read() will name
    }
    return false;
}

bool seed_reader::skip_to_start(seed_chunk& out) {
    started_ = true;
    if (start_.offset == 0)
        return true;
    if (::lseek(fd_, static_cast<off_t>(start_.offset), SEEK_SET) >= 0)
        return true;
    // A pipe: the bytes read by the previous runs come again, and are passed over.
    std::vector<char> buffer(64 * 1024);
    std::uint64_t left = start_.offset;
    while (left > 0) {
        if (!wait_readable(fd_, cancelled_)) {
            started_ = false;
            return false;
        }
        const auto n = ::read(fd_, buffer.data(), std::min<std::uint64_t>(left, buffer.size()));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            out.problems.push_back(display(path_) + " ends before byte " + std::to_string(start_.offset) +
                                   ", where the previous run stopped reading");
            out.failed = true;
            out.end = true;
            return false;
        }
        left -= static_cast<std::uint64_t>(n);
    }
    return true;
}

seed_chunk seed_reader::next(std::size_t max_bytes) {
    seed_chunk out;
    out.position = splitter_.position();
    if (!started_ && !skip_to_start(out))
        return out;
    std::vector<char> buffer(max_bytes);
    for (;;) {
        if (!wait_readable(fd_, cancelled_))
            return out;
        const auto n = ::read(fd_, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            out.problems.push_back(display(path_) + ": read failed: " + std::strerror(errno));
            out.failed = true;
            splitter_.finish(out);
            return out;
        }
        if (n == 0) {
            splitter_.finish(out);
            return out;
        }
        splitter_.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)), out);
        return out;
    }
}

} // namespace asiocrawl::detail
