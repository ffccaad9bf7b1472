#include "engine/parse_lanes.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <exception>
#include <utility>

#include <time.h>

namespace asiocrawl::detail {

namespace asio = boost::asio;

/// One page on its way: in the awaiting coroutine's frame, the parse thread's from the inbox until drain().
struct parse_lanes::job {
    job(std::string_view url, std::string page, link_options how, const asio::any_io_executor& crawl)
        : page_url(url)
        , body(std::move(page))
        , options(std::move(how))
        , wake(crawl, asio::steady_timer::time_point::max()) {}

    std::string_view page_url;
    std::string body;
    link_options options;
    resolved_links result;
    std::exception_ptr error;
    asio::steady_timer wake; // on the crawl executor; never expires: drain() cancels the wait
    bool done = false;       // drain()'s, on the crawl executor
};

void offload_gauge::sample(nanoseconds now, nanoseconds cpu) noexcept {
    if (started_ && now > wall_) {
        const double busy =
            static_cast<double>((cpu - cpu_).count()) / static_cast<double>((now - wall_).count());
        if (busy >= raise_at && level_ < steps)
            ++level_;
        else if (busy < lower_below && level_ > 0)
            --level_;
    }
    started_ = true;
    wall_ = now;
    cpu_ = cpu;
}

bool offload_gauge::take() noexcept {
    turn_ = turn_ + 1 == steps ? 0 : turn_ + 1;
    return turn_ < level_;
}

namespace {

std::chrono::nanoseconds thread_cpu_time() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

} // namespace

parse_lanes::parse_lanes(std::size_t threads, asio::any_io_executor crawl)
    : crawl_(std::move(crawl)) {
    threads_.reserve(threads);
    try {
        for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i)
            threads_.emplace_back([this] { run(); });
    } catch (...) {
        join();
        throw;
    }
}

parse_lanes::~parse_lanes() {
    join();
}

void parse_lanes::join() {
    {
        const std::lock_guard lock(inbox_mutex_);
        stopping_ = true;
    }
    inbox_ready_.notify_all();
    for (auto& thread : threads_)
        if (thread.joinable())
            thread.join();
    give_back_.clear();
}

bool parse_lanes::offload() {
    ++asked_;
    // The wall clock is cheap (vDSO); the thread's CPU clock is a system call, read once a window.
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    if (const auto self = std::this_thread::get_id(); self != measured_) {
        measured_ = self;
        gauge_.restart();
    }
    if (gauge_.window_over(now))
        gauge_.sample(now, thread_cpu_time());
    if (in_flight_ >= 4 * threads_.size() || !gauge_.take())
        return false;
    ++handed_over_;
    return true;
}

asio::awaitable<resolved_links> parse_lanes::resolve(std::string_view page_url, std::string body,
                                                     link_options options) {
    // Not a coroutine: the job is made here, and the coroutine's frame holds only its pointer, which the
    // parse threads see.
    return hand_over(std::make_unique<job>(page_url, std::move(body), std::move(options), crawl_));
}

asio::awaitable<resolved_links> parse_lanes::hand_over(std::unique_ptr<job> owned) {
    job& j = *owned;
    ++in_flight_;
    bool wake = false;
    {
        const std::lock_guard lock(inbox_mutex_);
        inbox_.push_back(&j);
        wake = sleeping_ > 0 && !wake_posted_;
    }
    if (wake) {
        // Woken after the handlers ready now have run, which hand over their pages meanwhile: one wake-up for
        // them all, not one a page (the crawl thread's futex calls are what a hand-off costs it).
        wake_posted_ = true;
        asio::post(crawl_, [this] {
            wake_posted_ = false;
            inbox_ready_.notify_one();
        });
    }
    // The frame holds the job until drain() hands it back: the wait ignores the coroutine's cancellation.
    while (!j.done)
        co_await j.wake.async_wait(
            asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable)));
    if (j.error)
        std::rethrow_exception(j.error);
    co_return std::move(j.result);
}

void parse_lanes::give_back(std::vector<std::string>&& urls) {
    if (urls.capacity() == 0)
        return;
    const std::lock_guard lock(inbox_mutex_);
    give_back_.push_back(std::move(urls));
}

void parse_lanes::run() {
    std::vector<std::vector<std::string>> to_free;
    for (;;) {
        job* j = nullptr;
        {
            std::unique_lock lock(inbox_mutex_);
            while (inbox_.empty() && give_back_.empty() && !stopping_) {
                ++sleeping_;
                inbox_ready_.wait(lock);
                --sleeping_;
            }
            if (inbox_.empty() && give_back_.empty())
                return; // stopping, and every page handed over is parsed
            bool sibling = false;
            if (!inbox_.empty()) {
                // The oldest first: pages are parsed in the order they were fetched.
                j = inbox_.front();
                inbox_.pop_front();
                sibling = !inbox_.empty() && sleeping_ > 0;
            }
            to_free.swap(give_back_);
            lock.unlock();
            if (sibling)
                inbox_ready_.notify_one(); // more pages than this thread: a sleeping one takes some
        }
        to_free.clear(); // the strings, on a parse thread that made them or its sibling
        if (j == nullptr)
            continue;
        try {
            j->result =
                resolve_links(boost::urls::parse_uri(j->page_url).value(), std::move(j->body), j->options);
        } catch (...) {
            j->error = std::current_exception();
        }
        bool post = false;
        {
            const std::lock_guard lock(done_mutex_);
            post = done_.empty(); // otherwise a drain is on its way, and takes this page too
            done_.push_back(j);
        }
        if (post)
            asio::post(crawl_, [this] { drain(); });
    }
}

void parse_lanes::drain() {
    {
        const std::lock_guard lock(done_mutex_);
        draining_.swap(done_);
    }
    in_flight_ -= draining_.size();
    for (job* j : draining_) {
        j->done = true;
        j->wake.cancel();
    }
    draining_.clear();
}

} // namespace asiocrawl::detail
