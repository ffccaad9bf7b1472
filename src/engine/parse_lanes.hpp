// crawler_config::parse_threads: the threads that extract and resolve a page's links off the crawl thread,
// and the hand-off to them and back (docs/ARCHITECTURE.md, "Seams and state").
//
// The hand-off is built to cost the crawl thread little, since on a busy crawl the crawl thread is what
// limits it: a page goes into one inbox under a mutex; a sleeping parse thread is woken once for every page
// handed over by the handlers the crawl thread has ready (a wake-up posted to the crawl executor, behind
// them), and a parse thread that finds more pages than it takes wakes its sibling; what a parse thread
// finished goes back in one post to the crawl executor for however many pages finished meanwhile. The link
// strings a parse thread made are handed back to the parse threads to be freed there (give_back), so that the
// crawl thread does not free memory of another thread's malloc arena.
//
// A page handed over costs more CPU than a page parsed where it was fetched (bench/RESULTS.md, "Issue 27,
// fourth pass": its body is read from another core's cache, its link strings come back the same way), so the
// parse threads earn their keep only while the crawl thread is what limits the crawl and another core has
// time for them. offload() asks that of every page: an offload_gauge measures the crawl thread's CPU time
// against the wall clock, and hands pages over only while the crawl thread runs most of the time (a thread
// that waits for its server, or for a core, has no work to give away); on cores shared with the server (or
// with other work) the crawl thread parses its pages itself, as with no parse threads.
#pragma once

#include "html/page_links.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace asiocrawl::detail {

/// What share of the pages goes to the parse threads, from how busy the crawl thread is: its CPU time over
/// the wall time, in windows of `window`. At `raise_at` or busier the share grows by one `steps`-th a window,
/// below `lower_below` it shrinks by one; it starts at nothing. Pure arithmetic on the times it is given.
class offload_gauge {
public:
    using nanoseconds = std::chrono::nanoseconds;
    static constexpr nanoseconds window{10'000'000}; // 10 ms: about a hundred pages on a busy crawl
    static constexpr double raise_at = 0.8;
    static constexpr double lower_below = 0.6;
    static constexpr int steps = 4;

    /// Whether the window that began at the last sample() is over at `now` (or none began): sample() then.
    bool window_over(nanoseconds now) const noexcept { return !started_ || now - wall_ >= window; }
    /// Ends the window at `now`, the measuring thread's CPU time being `cpu`, and begins the next one.
    void sample(nanoseconds now, nanoseconds cpu) noexcept;
    /// Forgets the window (another thread measures from now on); the share stays.
    void restart() noexcept { started_ = false; }
    /// For each page: whether it goes to a parse thread; level() of every `steps` pages do.
    bool take() noexcept;
    int level() const noexcept { return level_; }

private:
    bool started_ = false;
    nanoseconds wall_{};
    nanoseconds cpu_{};
    int level_ = 0; // 0 (every page parsed by the crawl thread) to steps (every page handed over)
    int turn_ = 0;
};

class parse_lanes {
public:
    /// `threads` parse threads (at least one), started here; `crawl` is the executor of the coroutines that
    /// call resolve(), where they resume.
    parse_lanes(std::size_t threads, boost::asio::any_io_executor crawl);
    /// join().
    ~parse_lanes();
    parse_lanes(const parse_lanes&) = delete;
    parse_lanes& operator=(const parse_lanes&) = delete;

    /// Whether the page about to be parsed goes to a parse thread (resolve()) or is parsed by the caller
    /// (resolve_links()): handed over only while the crawl thread runs most of the time (offload_gauge)
    /// and the parse threads are not behind (fewer than four pages a thread waiting or being parsed). Crawl
    /// executor only; one call a page.
    bool offload();

    /// Pages offload() sent to the parse threads, and pages it asked about. Crawl executor only.
    std::size_t pages_handed_over() const noexcept { return handed_over_; }
    std::size_t pages_asked() const noexcept { return asked_; }

    /// resolve_links(page_url, body, options) on a parse thread; resumes on the crawl executor with its
    /// result, or its exception. `page_url` is read on the parse thread: it must stay valid until this
    /// returns. Not cancellable: the page is the parse thread's until it hands it back, which is soon.
    boost::asio::awaitable<resolved_links> resolve(std::string_view page_url, std::string body,
                                                   link_options options);

    /// The link strings of a result, once read: freed on a parse thread, with the next page one takes (or at
    /// join()). Crawl executor only.
    void give_back(std::vector<std::string>&& urls);

    /// Stops the threads once every page handed over is parsed, and joins them. Idempotent.
    void join();

private:
    struct job;
    boost::asio::awaitable<resolved_links> hand_over(std::unique_ptr<job> j);
    void run();   // a parse thread
    void drain(); // on the crawl executor: the finished pages' coroutines resumed

    boost::asio::any_io_executor crawl_;
    offload_gauge gauge_;       // crawl executor only, like the four below
    std::thread::id measured_;  // the thread whose CPU time gauge_ measures
    std::size_t in_flight_ = 0; // handed over, not yet drained
    std::size_t handed_over_ = 0;
    std::size_t asked_ = 0;
    std::mutex inbox_mutex_;
    std::condition_variable inbox_ready_;
    std::deque<job*> inbox_;                          // pages waiting for a parse thread, oldest first
    std::vector<std::vector<std::string>> give_back_; // link strings to free on a parse thread
    std::size_t sleeping_ = 0;                        // parse threads waiting on inbox_ready_
    bool wake_posted_ = false; // crawl executor only: a wake-up of a sleeping parse thread is on its way
    bool stopping_ = false;
    std::mutex done_mutex_;
    std::vector<job*> done_;     // parsed, not yet drained; a post to the crawl executor is on its way
    std::vector<job*> draining_; // drain()'s, kept for its capacity
    std::vector<std::thread> threads_;
};

} // namespace asiocrawl::detail
