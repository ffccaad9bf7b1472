// The frontier pump: tickets the crawl state lets start go into the work queue; the pump sleeps until the
// next delay or backoff ends.
#include "engine/crawler_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

namespace asiocrawl::detail {

namespace asio = boost::asio;

frontier_pump::frontier_pump(engine& e)
    : e_(e)
    , timer_(e.executor)
    , rearm_(e.executor) {}

void frontier_pump::pump() {
    if (closed_ || e_.queue.closed())
        return;
    if (e_.state.out_of_budget()) { // quota or max_time: a graceful stop, as on SIGTERM
        e_.request_stop();
        return;
    }
    while (auto t = e_.state.next())
        e_.queue.put_held(std::move(*t));
    if (e_.state.wants_wrap_up(e_.queue.unfinished()))
        e_.state.wrap_up_generation(); // a re-crawl reached all it will: the rest is gone
    e_.feeder.want();
    if (e_.state.durable())
        e_.commits.want(); // refills may be wanted, denials may have made records
    const auto wake = e_.state.next_wakeup();
    if (wake && *wake < sleeping_until_)
        rearm_.notify(); // run() sleeps until later, or without an end: it looks again
}

asio::awaitable<void> frontier_pump::expiry() {
    co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> frontier_pump::run() {
    using namespace asio::experimental::awaitable_operators;
    while (!closed_) {
        const auto wake = e_.state.next_wakeup();
        if (!wake) {
            sleeping_until_ = crawl_state::time_point::max();
            co_await rearm_.wait();
            continue;
        }
        sleeping_until_ = *wake;
        timer_.expires_at(*wake);
        const auto woke = co_await (rearm_.wait() || expiry());
        sleeping_until_ = crawl_state::time_point::max();
        if (woke.index() == 1)
            pump();
    }
}

void frontier_pump::close() {
    closed_ = true;
    rearm_.notify();
}

} // namespace asiocrawl::detail
