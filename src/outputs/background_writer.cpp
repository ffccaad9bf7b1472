#include "outputs/background_writer.hpp"

#include <exception>
#include <utility>

namespace asiocrawl::outputs::detail {

background_writer::background_writer(std::size_t high_water_bytes, std::function<void(bool sync)> flush)
    : high_water_bytes_(high_water_bytes)
    , flush_(std::move(flush))
    , thread_([this] { loop(); }) {}

background_writer::~background_writer() {
    finish();
}

void background_writer::set_on_drained(std::function<void()> on_drained) {
    std::lock_guard lock{mutex_};
    on_drained_ = std::move(on_drained);
}

void background_writer::set_on_error(std::function<void(const std::string& error)> on_error) {
    std::lock_guard lock{mutex_};
    on_error_ = std::move(on_error);
}

void background_writer::post(std::size_t bytes, std::function<void()> run) {
    {
        std::lock_guard lock{mutex_};
        if (!finishing_) {
            if (pending_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes > high_water_bytes_)
                busy_.store(true, std::memory_order_release);
            queue_.push_back(job{bytes, std::move(run)});
            wake_.notify_one();
            return;
        }
    }
    run_guarded(run);
    if (flush_)
        run_guarded([this] { flush_(false); });
}

void background_writer::barrier(bool sync, std::function<void()> done) {
    auto run = [this, sync, done = std::move(done)] {
        if (flush_)
            run_guarded([&] { flush_(sync); });
        done();
    };
    {
        std::lock_guard lock{mutex_};
        if (!finishing_) {
            queue_.push_back(job{0, std::move(run)});
            wake_.notify_one();
            return;
        }
    }
    run();
}

void background_writer::finish() {
    {
        std::lock_guard lock{mutex_};
        if (finishing_)
            return;
        finishing_ = true;
        wake_.notify_one();
    }
    thread_.join();
}

std::string background_writer::error() const {
    std::lock_guard lock{mutex_};
    return error_;
}

void background_writer::run_guarded(const std::function<void()>& work) {
    try {
        work();
    } catch (const std::exception& e) {
        std::function<void(const std::string&)> on_error;
        std::string first;
        {
            std::lock_guard lock{mutex_};
            if (!error_.empty())
                return;
            error_ = e.what();
            if (error_.empty())
                error_ = "unknown error";
            first = error_;
            on_error = on_error_;
        }
        if (on_error)
            on_error(first);
    }
}

void background_writer::loop() {
    for (;;) {
        job next;
        {
            std::unique_lock lock{mutex_};
            if (queue_.empty() && !finishing_) {
                // Idle: what the jobs buffered goes out now, so a reader (tail -f, a crash) sees it.
                lock.unlock();
                if (flush_)
                    run_guarded([this] { flush_(false); });
                lock.lock();
            }
            wake_.wait(lock, [&] { return finishing_ || !queue_.empty(); });
            if (queue_.empty()) {
                lock.unlock();
                if (flush_)
                    run_guarded([this] { flush_(false); });
                return;
            }
            next = std::move(queue_.front());
            queue_.pop_front();
        }
        run_guarded(next.run);
        // Released after the job ran: its memory (the copied bytes) is only freed now.
        next.run = nullptr;
        const std::size_t left = pending_bytes_.fetch_sub(next.bytes, std::memory_order_relaxed) - next.bytes;
        if (left <= high_water_bytes_ / 2 && busy_.load(std::memory_order_acquire)) {
            std::function<void()> drained;
            {
                // Under the lock post() raises the flag with: a post that crossed the mark meanwhile wins.
                std::lock_guard lock{mutex_};
                if (pending_bytes_.load(std::memory_order_relaxed) <= high_water_bytes_ / 2) {
                    busy_.store(false, std::memory_order_release);
                    drained = on_drained_;
                }
            }
            if (drained)
                drained();
        }
    }
}

} // namespace asiocrawl::outputs::detail
