// One thread that runs queued jobs in order, so that file writes and compression never run on the crawler's
// executor. The queue is bounded by a byte budget the callers declare: past it, busy() turns true and the
// crawler (through crawler::set_backpressure) starts no new fetches until the thread catches up. post()
// itself never waits: the fetches already in flight must be able to hand over their results.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace asiocrawl::outputs::detail {

class background_worker {
public:
    explicit background_worker(std::size_t high_water_bytes);
    /// Runs what is queued, then stops (as finish()).
    ~background_worker();
    background_worker(const background_worker&) = delete;
    background_worker& operator=(const background_worker&) = delete;

    /// Queues `job`, which holds about `bytes` bytes of memory until it has run. A job that throws is
    /// remembered in error() and the following jobs still run.
    void post(std::size_t bytes, std::function<void()> job);

    /// More than the high-water mark is waiting.
    bool busy() const noexcept { return pending_bytes_.load(std::memory_order_relaxed) > high_water_bytes_; }
    std::size_t pending_bytes() const noexcept { return pending_bytes_.load(std::memory_order_relaxed); }

    /// Runs everything queued and joins the thread. Idempotent; post() after it runs the job inline,
    /// on the caller's thread.
    void finish();

    /// The first failure of a job ("" when none).
    std::string error() const;

private:
    struct job {
        std::size_t bytes;
        std::function<void()> run;
    };
    void loop();
    void run_one(job& j);

    const std::size_t high_water_bytes_;
    std::atomic<std::size_t> pending_bytes_{0};
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<job> queue_;
    bool finishing_ = false;
    std::string error_;
    std::thread thread_;
};

} // namespace asiocrawl::outputs::detail
