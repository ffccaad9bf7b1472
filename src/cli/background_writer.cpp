#include "cli/background_writer.hpp"

namespace asiocrawl::cli {

background_writer::background_writer(std::FILE* file, bool owns)
    : file_(file)
    , owns_(owns)
    , thread_([this] { run(); }) {}

background_writer::~background_writer() {
    close();
}

void background_writer::write(std::string text) {
    {
        std::lock_guard lock{mutex_};
        if (closing_)
            return;
        pending_.push_back(std::move(text));
    }
    wake_.notify_one();
}

bool background_writer::close() {
    {
        std::lock_guard lock{mutex_};
        closing_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable())
        thread_.join();
    if (file_) {
        if (std::fflush(file_) != 0)
            failed_ = true;
        if (owns_ && std::fclose(file_) != 0)
            failed_ = true;
        file_ = nullptr;
    }
    return !failed_;
}

void background_writer::run() {
    std::deque<std::string> batch;
    for (;;) {
        {
            std::unique_lock lock{mutex_};
            wake_.wait(lock, [this] { return closing_ || !pending_.empty(); });
            batch.swap(pending_);
            if (batch.empty() && closing_)
                return;
        }
        for (const auto& text : batch)
            if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
                failed_ = true;
        batch.clear();
        // Flush per batch: a crash or kill must not lose what was already reported.
        if (std::fflush(file_) != 0)
            failed_ = true;
    }
}

} // namespace asiocrawl::cli
