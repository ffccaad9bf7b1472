// The one writer thread class behind every output: JSON Lines records, logs, WARC files and saved pages. Each
// output owns one, so a slow disk under one of them never holds back the others, and the crawler's executor
// never blocks on output: it only queues jobs.
//
// Bounded, with back-pressure: the caller declares what each job holds in memory. Past the high-water mark
// busy() turns true and stays true until the thread has brought the queue down to the low-water mark (half
// the high one); then the on_drained callback runs, on the writer thread. The crawler starts no new fetch
// while an output is busy, and post() itself never waits: the fetches already in flight must be able to hand
// over their results, so memory stays bounded by the mark plus what max_tasks fetches bring.
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

class background_writer {
public:
    /// `flush(sync)` runs on the thread whenever the queue runs empty and at every barrier: it writes out
    /// what the jobs buffered (with write(2)) and, when `sync` is true, makes it durable (fsync). It may
    /// throw; the failure is kept in error().
    explicit background_writer(std::size_t high_water_bytes, std::function<void(bool sync)> flush = {});
    /// Runs what is queued, then stops (as finish()).
    ~background_writer();
    background_writer(const background_writer&) = delete;
    background_writer& operator=(const background_writer&) = delete;

    /// Queues `job`, which holds about `bytes` bytes of memory until it has run. A job that throws is
    /// remembered in error() and the following jobs still run. After finish(), runs `job` on the caller's
    /// thread.
    void post(std::size_t bytes, std::function<void()> job);

    /// Queues a barrier: once every job posted before it has run, flush(sync) runs, then `done` — on the
    /// writer thread (on the caller's thread after finish()). `done` runs even when a write failed; error()
    /// tells.
    void barrier(bool sync, std::function<void()> done);

    /// From the moment the queue exceeded the high-water mark until it is back under the low-water mark.
    bool busy() const noexcept { return busy_.load(std::memory_order_acquire); }
    std::size_t pending_bytes() const noexcept { return pending_bytes_.load(std::memory_order_relaxed); }

    /// Called on the writer thread each time busy() turns false again. Set it before the first post().
    void set_on_drained(std::function<void()> on_drained);

    /// Called once, with error(), when the first job or flush fails: on the writer thread (on the caller's
    /// after finish()). Set it before the first post().
    void set_on_error(std::function<void(const std::string& error)> on_error);

    /// Runs everything queued, flushes, and joins the thread. Idempotent.
    void finish();

    /// The first failure of a job or a flush ("" when none).
    std::string error() const;

private:
    struct job {
        std::size_t bytes = 0;
        std::function<void()> run;
    };
    void loop();
    void run_guarded(const std::function<void()>& work);

    const std::size_t high_water_bytes_;
    std::function<void(bool)> flush_;
    std::function<void()> on_drained_;
    std::function<void(const std::string&)> on_error_;
    std::atomic<std::size_t> pending_bytes_{0};
    std::atomic<bool> busy_{false};
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<job> queue_;
    bool finishing_ = false;
    bool finished_ = false;
    std::string error_;
    std::thread thread_;
};

} // namespace asiocrawl::outputs::detail
