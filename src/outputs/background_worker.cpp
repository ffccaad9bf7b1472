#include "outputs/background_worker.hpp"

#include <exception>
#include <utility>

namespace asiocrawl::outputs::detail {

background_worker::background_worker(std::size_t high_water_bytes)
    : high_water_bytes_(high_water_bytes)
    , thread_([this] { loop(); }) {}

background_worker::~background_worker() {
    finish();
}

void background_worker::post(std::size_t bytes, std::function<void()> run) {
    job j{bytes, std::move(run)};
    {
        std::lock_guard lock{mutex_};
        if (!finishing_) {
            pending_bytes_ += bytes;
            queue_.push_back(std::move(j));
            wake_.notify_one();
            return;
        }
    }
    run_one(j);
}

void background_worker::finish() {
    {
        std::lock_guard lock{mutex_};
        if (finishing_)
            return;
        finishing_ = true;
        wake_.notify_one();
    }
    thread_.join();
}

std::string background_worker::error() const {
    std::lock_guard lock{mutex_};
    return error_;
}

void background_worker::run_one(job& j) {
    try {
        j.run();
    } catch (const std::exception& e) {
        std::lock_guard lock{mutex_};
        if (error_.empty())
            error_ = e.what();
    }
}

void background_worker::loop() {
    for (;;) {
        job next;
        {
            std::unique_lock lock{mutex_};
            wake_.wait(lock, [&] { return finishing_ || !queue_.empty(); });
            if (queue_.empty())
                return;
            next = std::move(queue_.front());
            queue_.pop_front();
        }
        run_one(next);
        // Released after the job ran: its memory (the copied bytes) is only freed now.
        next.run = nullptr;
        pending_bytes_ -= next.bytes;
    }
}

} // namespace asiocrawl::outputs::detail
