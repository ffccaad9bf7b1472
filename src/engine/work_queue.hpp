// A joinable work queue for coroutines on one executor, in the shape of Python's asyncio.Queue (get /
// task_done / join), used as the dispatch buffer behind the crawl state's frontier: an item is counted when
// the frontier admits it (hold(), the design card's put) and queued when it may start (put_held()), because a
// URL waits in the frontier for its host's delay, a backoff or robots.txt before any worker may take it. So
// the count join() waits on is every admitted URL, wherever it waits. Single-threaded by design: all calls
// happen on the queue's executor.
#pragma once

#include "engine/async_event.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstddef>
#include <deque>
#include <optional>
#include <stdexcept>
#include <utility>

namespace asiocrawl::detail {

/// Items wait in a deque; an unbuffered channel hands an item straight to a worker that is already waiting.
/// So put_held() never suspends: the workers are the producers, and a bounded queue whose every consumer is
/// blocked on a put would deadlock. A worker waits in the channel only when the deque is empty, which keeps
/// the order FIFO: put_held() hands over through the channel only when nothing is queued ahead.
template <class T>
class work_queue {
public:
    explicit work_queue(boost::asio::any_io_executor executor)
        : handoff_(executor, 0)
        , all_done_(executor) {}

    /// Counts one unfinished item that is not in the queue yet (it waits elsewhere: for a host slot, a
    /// backoff or robots.txt). Later either put_held() it or release() it. Refused (false) after close().
    /// Never suspends.
    bool hold() {
        if (closed_)
            return false;
        ++unfinished_;
        return true;
    }

    /// Queues an item already counted by hold(). Never suspends. Dropped after close() (it stays counted:
    /// todo).
    void put_held(T item) {
        if (closed_)
            return;
        if (backlog_.empty() && handoff_.try_send(boost::system::error_code{}, std::move(item)))
            return;
        backlog_.push_back(std::move(item));
    }

    /// Marks an item counted by hold() as finished without it ever passing through the queue.
    void release() { task_done(); }

    /// Takes the oldest item, waiting for one if the queue is empty. nullopt once the queue is closed: that
    /// is how idle workers learn to exit.
    boost::asio::awaitable<std::optional<T>> get() {
        std::optional<T> item;
        co_await get(item);
        co_return item;
    }

    /// The same into `item` (reset to nullopt once the queue is closed): a worker keeps one item slot in its
    /// own frame instead of receiving a new optional each time. True when an item came.
    boost::asio::awaitable<bool> get(std::optional<T>& item) {
        item.reset();
        if (closed_)
            co_return false;
        if (!backlog_.empty()) {
            item.emplace(std::move(backlog_.front()));
            backlog_.pop_front();
            co_return true;
        }
        auto [ec, received] =
            co_await handoff_.async_receive(boost::asio::as_tuple(boost::asio::use_awaitable));
        if (ec)
            co_return false;
        item.emplace(std::move(received));
        co_return true;
    }

    /// Marks one item taken by get() as finished. Every get() that returned an item must be matched by
    /// exactly one task_done(), whatever happened while processing it.
    void task_done() {
        if (unfinished_ == 0)
            throw std::logic_error("work_queue::task_done called more times than items were held");
        if (--unfinished_ == 0)
            all_done_.notify();
    }

    /// Completes when every item held so far has been marked done or released (at once if there are none),
    /// or on close().
    boost::asio::awaitable<void> join() {
        while (unfinished_ > 0 && !closed_)
            co_await all_done_.wait();
    }

    /// Stops the queue: waiting and future get() calls return nullopt, hold() is refused, and queued items
    /// are dropped (they remain counted as unfinished, which is the "todo" of an interrupted crawl). Wakes
    /// join()ers.
    void close() {
        if (closed_)
            return;
        closed_ = true;
        backlog_.clear();
        handoff_.close();
        all_done_.notify();
    }

    /// Items queued and not yet taken.
    std::size_t size() const noexcept { return backlog_.size(); }
    /// Items held and not yet marked done or released (waiting in the frontier, queued, in progress).
    std::size_t unfinished() const noexcept { return unfinished_; }
    bool closed() const noexcept { return closed_; }

private:
    boost::asio::experimental::channel<void(boost::system::error_code, T)> handoff_;
    async_event all_done_; // notified when unfinished_ reaches zero and on close(); join() re-checks
    std::deque<T> backlog_;
    std::size_t unfinished_ = 0;
    bool closed_ = false;
};

} // namespace asiocrawl::detail
