// Per-host politeness in front of the work queue: which waiting URL may start now without overloading a host.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace asiocrawl::detail {

/// Items wait here, grouped by host, until their host may take another request: fewer than `max_per_host`
/// requests handed out to it, and at least its delay since the previous request started. Items retried after
/// a backoff wait here too, until their time. pop() hands out the next eligible item, taking hosts in turn,
/// so a busy host never makes a worker idle while another host has work: the work queue only ever holds
/// items that can start at once.
///
/// Sans-io: the caller passes the time in and asks next_wakeup() when to call pop() again. Costs are
/// O(log n) per operation in the number of hosts and delayed items, never a scan of all hosts.
template <class Item>
class host_frontier {
public:
    using clock_type = std::chrono::steady_clock;
    using time_point = clock_type::time_point;
    using duration = clock_type::duration;

    host_frontier(std::size_t max_per_host, duration default_delay)
        : max_per_host_(max_per_host < 1 ? 1 : max_per_host)
        , default_delay_(default_delay) {}

    /// Queues an item that may start as soon as its host allows.
    void push(const std::string& host, Item item, time_point now) {
        auto& h = state(host);
        h.waiting.push_back(std::move(item));
        ++waiting_;
        refresh(host, h, now);
    }

    /// Queues an item that must not start before `not_before` (a retry after a backoff).
    void push_later(const std::string& host, Item item, time_point not_before) {
        state(host); // the host counts as known from now on
        delayed_.push(delayed_item{not_before, sequence_++, host, std::move(item)});
        ++waiting_;
    }

    /// Sets a host's least time between request starts (robots.txt Crawl-delay, already combined with the
    /// configured delay by the caller).
    void set_delay(const std::string& host, duration delay, time_point now) {
        auto& h = state(host);
        h.delay = delay;
        refresh(host, h, now);
    }

    /// The next item that may start now, with its host; counted as in flight for that host until finished().
    std::optional<std::pair<std::string, Item>> pop(time_point now) {
        release_due(now);
        while (!ready_.empty()) {
            std::string host = std::move(ready_.front());
            ready_.pop_front();
            auto& h = hosts_.at(host);
            h.in_ready = false;
            if (!eligible(h, now)) {
                refresh(host, h, now);
                continue;
            }
            Item item = std::move(h.waiting.front());
            h.waiting.pop_front();
            --waiting_;
            ++h.active;
            if (h.delay > duration::zero())
                h.awaiting_start = true;
            refresh(host, h, now); // back of the line: hosts take turns
            return std::pair{std::move(host), std::move(item)};
        }
        return std::nullopt;
    }

    /// The request of a popped item started: the host's delay counts from now.
    void started(const std::string& host, time_point now) {
        auto& h = state(host);
        h.awaiting_start = false;
        h.next_start = now + h.delay;
        refresh(host, h, now);
    }

    /// The request of a popped item is over (whatever its outcome): the host has a free slot again.
    void finished(const std::string& host, time_point now) {
        auto& h = state(host);
        if (h.active > 0)
            --h.active;
        h.awaiting_start = false;
        refresh(host, h, now);
    }

    /// When pop() may next return something that it cannot return now; nullopt when only finished() or
    /// push() can change that. A time at or before `now` means: call pop() at once.
    std::optional<time_point> next_wakeup(time_point now) const {
        if (!ready_.empty())
            return now;
        std::optional<time_point> earliest;
        if (!delayed_.empty())
            earliest = delayed_.top().not_before;
        if (!timed_.empty() && (!earliest || timed_.top().first < *earliest))
            earliest = timed_.top().first;
        return earliest;
    }

    /// Items waiting (for a host slot, a delay or a backoff), not counting those handed out.
    std::size_t waiting() const noexcept { return waiting_; }
    /// Requests handed out and not yet finished.
    std::size_t active(const std::string& host) const {
        auto it = hosts_.find(host);
        return it == hosts_.end() ? 0 : it->second.active;
    }
    /// Hosts ever seen.
    std::size_t hosts() const noexcept { return hosts_.size(); }

    /// Removes every waiting item (a stopping crawl drops them; they stay counted as its todo).
    std::size_t clear() {
        const std::size_t dropped = waiting_;
        for (auto& [name, h] : hosts_)
            h.waiting.clear();
        delayed_ = {};
        timed_ = {};
        ready_.clear();
        for (auto& [name, h] : hosts_)
            h.in_ready = false;
        waiting_ = 0;
        return dropped;
    }

private:
    struct host_state {
        std::deque<Item> waiting;
        std::size_t active = 0;
        duration delay{};
        time_point next_start{};
        // With a delay, one request at a time is handed out until it starts: two handed out together could
        // both start at once, however long the delay.
        bool awaiting_start = false;
        bool in_ready = false;
        std::optional<time_point> timed_at; // the wake-up already scheduled for this host
    };

    struct delayed_item {
        time_point not_before;
        std::size_t sequence; // FIFO among equal times
        std::string host;
        Item item;
    };
    struct later_first {
        bool operator()(const delayed_item& a, const delayed_item& b) const {
            return a.not_before != b.not_before ? a.not_before > b.not_before : a.sequence > b.sequence;
        }
    };
    using timed_entry = std::pair<time_point, std::string>;
    struct earlier_on_top {
        bool operator()(const timed_entry& a, const timed_entry& b) const { return a.first > b.first; }
    };

    host_state& state(const std::string& host) {
        auto [it, inserted] = hosts_.try_emplace(host);
        if (inserted)
            it->second.delay = default_delay_;
        return it->second;
    }

    bool has_slot(const host_state& h) const noexcept {
        return h.active < max_per_host_ && !(h.delay > duration::zero() && h.awaiting_start);
    }

    bool eligible(const host_state& h, time_point now) const noexcept {
        return !h.waiting.empty() && has_slot(h) && now >= h.next_start;
    }

    // Puts a host where it belongs: the ready line when it can start something now, the timed heap when only
    // its delay holds it back. A host waiting for a slot needs nothing: finished() or started() refresh it.
    void refresh(const std::string& host, host_state& h, time_point now) {
        if (h.waiting.empty() || !has_slot(h) || h.in_ready)
            return;
        if (now >= h.next_start) {
            h.in_ready = true;
            ready_.push_back(host);
        } else if (h.timed_at != h.next_start) {
            h.timed_at = h.next_start;
            timed_.emplace(h.next_start, host);
        }
    }

    void release_due(time_point now) {
        while (!delayed_.empty() && delayed_.top().not_before <= now) {
            // priority_queue::top is const: the item is moved out through a copy of the handle's fields.
            auto due = std::move(const_cast<delayed_item&>(delayed_.top()));
            delayed_.pop();
            auto& h = state(due.host);
            h.waiting.push_back(std::move(due.item));
            refresh(due.host, h, now);
        }
        while (!timed_.empty() && timed_.top().first <= now) {
            const std::string host = timed_.top().second;
            timed_.pop();
            auto& h = state(host);
            if (h.timed_at && *h.timed_at <= now)
                h.timed_at.reset();
            refresh(host, h, now);
        }
    }

    std::size_t max_per_host_;
    duration default_delay_;
    std::unordered_map<std::string, host_state> hosts_;
    std::deque<std::string> ready_;
    std::priority_queue<delayed_item, std::vector<delayed_item>, later_first> delayed_;
    std::priority_queue<timed_entry, std::vector<timed_entry>, earlier_on_top> timed_;
    std::size_t sequence_ = 0;
    std::size_t waiting_ = 0;
};

} // namespace asiocrawl::detail
