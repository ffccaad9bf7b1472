#include "outputs/text_writer.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <sys/stat.h>
#include <unistd.h>

namespace asiocrawl::outputs::detail {

namespace {

// Big enough that a fast crawl makes few write(2) calls, small enough that a line waits little.
constexpr std::size_t block_bytes = 64 * 1024;

} // namespace

struct text_writer::state {
    state(int descriptor, bool owns, std::string what, std::size_t high_water)
        : fd(descriptor)
        , owns_fd(owns)
        , name(std::move(what))
        , worker(high_water, [this](bool sync) { flush(sync); }) {}

    // The rest runs on the worker thread.
    void append(const std::string& text) {
        if (failed.load(std::memory_order_relaxed))
            return;
        block += text;
        if (block.size() >= block_bytes)
            flush(false);
    }

    void flush(bool sync) {
        if (failed.load(std::memory_order_relaxed)) {
            block.clear();
            return;
        }
        std::string_view data = block;
        while (!data.empty()) {
            const ssize_t n = ::write(fd, data.data(), data.size());
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                const int saved = errno;
                failed.store(true, std::memory_order_relaxed);
                cut_torn_line(block.size() - data.size());
                block.clear();
                throw std::runtime_error(name + ": " + std::strerror(saved));
            }
            data.remove_prefix(static_cast<std::size_t>(n));
        }
        block.clear();
        // A pipe or a terminal cannot be synced (EINVAL): there is nothing more to make durable there.
        if (sync && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
            failed.store(true, std::memory_order_relaxed);
            throw std::runtime_error(name + ": fsync: " + std::strerror(errno));
        }
    }

    /// After a write failed with `written` bytes of the block in the file (a full disk takes part of a
    /// write): the file is cut back to its last whole line, so that it ends at its last whole record as a
    /// killed process's file never does (repair_jsonl_tail mends those when a crawl resumes). Only a
    /// regular file of ours: a pipe or a terminal cannot be cut, and stderr is not ours.
    void cut_torn_line(std::size_t written) const {
        struct stat info {};
        if (!owns_fd || ::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
            return;
        const std::size_t last_break = std::string_view(block).substr(0, written).rfind('\n');
        const std::size_t whole = last_break == std::string_view::npos ? 0 : last_break + 1;
        const auto torn = static_cast<off_t>(written - whole);
        if (torn > 0 && info.st_size >= torn && ::ftruncate(fd, info.st_size - torn) == 0)
            ::lseek(fd, info.st_size - torn, SEEK_SET); // never written again; where it would go
    }

    int fd;
    bool owns_fd;
    std::string name;
    std::string block;
    std::atomic<bool> failed{false};
    bool closed = false;
    std::string close_error;
    background_writer worker; // last: its thread uses the members above
};

text_writer::text_writer(int fd, bool owns_fd, std::string name, std::size_t high_water_bytes)
    : state_(std::make_shared<state>(fd, owns_fd, std::move(name), high_water_bytes)) {}

text_writer::~text_writer() {
    close();
}

void text_writer::write(std::string text) {
    if (state_->closed)
        return;
    const std::size_t bytes = text.size();
    state_->worker.post(bytes, [s = state_.get(), text = std::move(text)] { s->append(text); });
}

bool text_writer::busy() const noexcept {
    return state_->worker.busy();
}

void text_writer::set_on_drained(std::function<void()> on_drained) {
    state_->worker.set_on_drained(std::move(on_drained));
}

void text_writer::set_on_error(std::function<void(const std::string& error)> on_error) {
    state_->worker.set_on_error(std::move(on_error));
}

void text_writer::barrier(bool sync, std::function<void()> done) {
    state_->worker.barrier(sync, std::move(done));
}

std::string text_writer::close() {
    if (!state_->closed) {
        state_->closed = true;
        state_->worker.finish();
        state_->close_error = state_->worker.error();
        if (state_->owns_fd && ::close(state_->fd) != 0 && state_->close_error.empty())
            state_->close_error = state_->name + ": close: " + std::strerror(errno);
    }
    return state_->close_error;
}

std::string text_writer::error() const {
    return state_->worker.error();
}

} // namespace asiocrawl::outputs::detail
