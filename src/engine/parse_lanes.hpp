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
#pragma once

#include "html/page_links.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

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

class parse_lanes {
public:
    /// `threads` parse threads (at least one), started here; `crawl` is the executor of the coroutines that
    /// call resolve(), where they resume.
    parse_lanes(std::size_t threads, boost::asio::any_io_executor crawl);
    /// join().
    ~parse_lanes();
    parse_lanes(const parse_lanes&) = delete;
    parse_lanes& operator=(const parse_lanes&) = delete;

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
