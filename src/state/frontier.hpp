// Per-host politeness in front of the work queue: which waiting URL may start now without overloading a host.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

namespace asiocrawl::detail {

/// A host's number in a crawl: hosts are numbered densely from 0 as they are first seen.
using host_id = std::uint32_t;

/// Items wait here, grouped by host, until their host may take another request: fewer than `max_per_host`
/// requests handed out to it, and at least its delay since the previous request started. Items retried after
/// a backoff wait here too, until their time. pop() hands out the next eligible item, taking hosts in turn,
/// so a busy host never makes a worker idle while another host has work: the work queue only ever holds
/// items that can start at once.
///
/// With a window (a crawl whose waiting URLs live on disk), at most `window` items of a host are held in
/// memory; the others are only counted ("spilled") and the frontier asks for them back in order
/// (take_refills / refill) before the host runs dry.
///
/// Sans-io: the caller passes the time in and asks next_wakeup() when to call pop() again. Costs are
/// O(log n) per operation in the number of hosts and delayed items, never a scan of all hosts.
template <class Item>
class host_frontier {
public:
    using clock_type = std::chrono::steady_clock;
    using time_point = clock_type::time_point;
    using duration = clock_type::duration;

    /// A host slot taken by pop(): given back exactly once, when the slot is destroyed or release()d,
    /// however the fetch it was taken for ends. Movable, not copyable.
    class slot {
    public:
        slot() = default;
        slot(host_frontier* owner, host_id host, time_point (*now)())
            : owner_(owner)
            , host_(host)
            , now_(now) {}
        slot(slot&& other) noexcept
            : owner_(std::exchange(other.owner_, nullptr))
            , host_(other.host_)
            , now_(other.now_) {}
        slot& operator=(slot&& other) noexcept {
            if (this != &other) {
                release();
                owner_ = std::exchange(other.owner_, nullptr);
                host_ = other.host_;
                now_ = other.now_;
            }
            return *this;
        }
        slot(const slot&) = delete;
        slot& operator=(const slot&) = delete;
        ~slot() { release(); }

        host_id host() const noexcept { return host_; }
        bool held() const noexcept { return owner_ != nullptr; }
        /// The request started now: the host's delay counts from here.
        void started() {
            if (owner_)
                owner_->started(host_, now_());
        }
        /// Gives the slot back now rather than at destruction.
        void release() {
            if (auto* owner = std::exchange(owner_, nullptr))
                owner->finished(host_, now_());
        }

    private:
        host_frontier* owner_ = nullptr;
        host_id host_ = 0;
        time_point (*now_)() = nullptr;
    };

    struct popped {
        host_id host;
        Item item;
        slot taken;
    };

    /// `now` is the clock the slots read when they are given back (tests pass a manual clock).
    host_frontier(std::size_t max_per_host, duration default_delay, std::size_t window = 0,
                  time_point (*now)() = &steady_now)
        : max_per_host_(max_per_host < 1 ? 1 : max_per_host)
        , default_delay_(default_delay)
        , window_(window)
        , now_(now) {}

    host_frontier(const host_frontier&) = delete;
    host_frontier& operator=(const host_frontier&) = delete;

    /// Queues an item that may start as soon as its host allows. False when the window is full: the item is
    /// then only counted as spilled (its owner keeps it elsewhere and hands it back through refill()).
    bool push(host_id host, Item item, time_point now) {
        auto& h = state(host);
        ++waiting_;
        if (window_ != 0 && (h.spilled > 0 || h.waiting.size() >= window_)) {
            ++h.spilled;
            ++spilled_;
            return false;
        }
        h.waiting.push_back(std::move(item));
        refresh(host, h, now);
        return true;
    }

    /// Queues an item ahead of the host's others, even of a blocked host (robots.txt before the pages it
    /// governs, and its redirects); never spilled.
    void push_urgent(host_id host, Item item, time_point now) {
        auto& h = state(host);
        ++waiting_;
        h.urgent.push_back(std::move(item));
        refresh(host, h, now);
    }

    /// Counts `n` items of a host that wait elsewhere (a resumed crawl's, on disk) and come through refill().
    void add_spilled(host_id host, std::size_t n) {
        auto& h = state(host);
        h.spilled += n;
        spilled_ += n;
        waiting_ += n;
        want_refill(host, h);
    }

    /// Queues an item that must not start before `not_before` (a retry after a backoff); `urgent`: then it
    /// goes ahead of the others, as push_urgent().
    void push_later(host_id host, Item item, time_point not_before, bool urgent = false) {
        state(host); // the host counts as known from now on
        delayed_.push(delayed_item{not_before, sequence_++, host, urgent, std::move(item)});
        ++waiting_;
    }

    /// Sets a host's least time between request starts (robots.txt Crawl-delay, already combined with the
    /// configured delay by the caller).
    void set_delay(host_id host, duration delay, time_point now) {
        auto& h = state(host);
        h.delay = delay;
        refresh(host, h, now);
    }

    /// The same, and the wait after the host's last request start becomes the new delay too (autothrottle:
    /// a delay measured on an answer applies from the request's start, sooner or later than planned).
    void reset_delay(host_id host, duration delay, time_point now) {
        auto& h = state(host);
        h.delay = delay;
        if (h.last_start)
            h.next_start = *h.last_start + (spread_ && delay > duration::zero() ? spread_(delay) : delay);
        refresh(host, h, now);
    }

    /// The wait after a request start is drawn by `spread` from the host's delay (wget --random-wait)
    /// rather than the delay itself. Empty: the delay.
    void set_spread(std::function<duration(duration)> spread) { spread_ = std::move(spread); }

    /// A paused host hands nothing out, not even urgent items, until resume() (the control API's pause).
    void pause(host_id host) { state(host).paused = true; }
    void resume(host_id host, time_point now) {
        auto& h = state(host);
        h.paused = false;
        refresh(host, h, now);
    }
    bool paused(host_id host) const { return host < hosts_.size() && hosts_[host].paused; }

    /// A host's own limit of requests in flight (at least 1), instead of the frontier's.
    void set_max_per_host(host_id host, std::size_t n, time_point now) {
        auto& h = state(host);
        h.max_active = n < 1 ? 1 : n;
        refresh(host, h, now);
    }
    std::size_t max_per_host(host_id host) const {
        return host < hosts_.size() && hosts_[host].max_active != 0 ? hosts_[host].max_active : max_per_host_;
    }
    /// The host's delay in force.
    duration delay(host_id host) const { return host < hosts_.size() ? hosts_[host].delay : default_delay_; }
    /// Items of a host held in memory and not waiting for a backoff (urgent ones included).
    std::size_t held(host_id host) const {
        return host < hosts_.size() ? hosts_[host].urgent.size() + hosts_[host].waiting.size() : 0;
    }
    /// Calls `f(item)` for at most `count` items of a host held in memory, from the `skip`th, in the order
    /// they would start (urgent ones first; those waiting for a backoff are not listed). Costs `skip` +
    /// `count` steps at most (deques index in constant time).
    template <class F>
    void for_each_waiting(host_id host, std::size_t skip, std::size_t count, F&& f) const {
        if (host >= hosts_.size())
            return;
        const auto& h = hosts_[host];
        for (std::size_t i = skip; i < h.urgent.size() + h.waiting.size() && count > 0; ++i, --count)
            f(i < h.urgent.size() ? h.urgent[i] : h.waiting[i - h.urgent.size()]);
    }

    /// A blocked host hands nothing out (its robots.txt is being fetched) until unblock().
    void block(host_id host) { state(host).blocked = true; }
    void unblock(host_id host, time_point now) {
        auto& h = state(host);
        h.blocked = false;
        refresh(host, h, now);
    }

    /// The next item that may start now, with its host slot.
    std::optional<popped> pop(time_point now) {
        release_due(now);
        while (!ready_.empty()) {
            const host_id host = ready_.front();
            ready_.pop_front();
            auto& h = hosts_[host];
            h.in_ready = false;
            if (!eligible(h, now)) {
                refresh(host, h, now);
                continue;
            }
            auto& line = h.urgent.empty() ? h.waiting : h.urgent;
            Item item = std::move(line.front());
            line.pop_front();
            --waiting_;
            ++h.active;
            if (h.delay > duration::zero())
                h.awaiting_start = true;
            want_refill(host, h);
            refresh(host, h, now); // back of the line: hosts take turns
            return popped{host, std::move(item), slot(this, host, now_)};
        }
        return std::nullopt;
    }

    /// Puts a popped item back at the head of its host's line (it may not start yet: its robots.txt is
    /// unknown). Its slot is given back by the caller.
    void unpop(host_id host, Item item) {
        auto& h = state(host);
        ++waiting_;
        h.waiting.push_front(std::move(item));
    }

    /// Hosts whose in-memory line runs low while items of theirs are spilled, with how many to hand back;
    /// each is asked for once until its refill() arrives.
    std::vector<std::pair<host_id, std::size_t>> take_refills() {
        std::vector<std::pair<host_id, std::size_t>> out;
        out.swap(refills_);
        return out;
    }

    /// Hands back spilled items of a host, in their order. Fewer than asked for (even none) is fine: the
    /// host's spilled count drops by what came.
    void refill(host_id host, std::vector<Item> items, time_point now) {
        auto& h = state(host);
        h.refill_pending = false;
        const std::size_t n = std::min(items.size(), h.spilled);
        for (std::size_t i = 0; i < n; ++i)
            h.waiting.push_back(std::move(items[i]));
        h.spilled -= n;
        spilled_ -= n;
        if (items.empty() && h.spilled > 0) {
            // The owner has nothing more: what was counted is gone (it finished elsewhere).
            waiting_ -= h.spilled;
            spilled_ -= h.spilled;
            h.spilled = 0;
        }
        refresh(host, h, now);
    }

    /// The request of a popped item started: the host's delay counts from now.
    void started(host_id host, time_point now) {
        auto& h = state(host);
        h.awaiting_start = false;
        h.last_start = now;
        h.next_start = now + (spread_ && h.delay > duration::zero() ? spread_(h.delay) : h.delay);
        refresh(host, h, now);
    }

    /// The request of a popped item is over (whatever its outcome): the host has a free slot again.
    void finished(host_id host, time_point now) {
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

    /// Items waiting (for a host slot, a delay, a backoff or robots.txt; spilled ones included), not counting
    /// those handed out.
    std::size_t waiting() const noexcept { return waiting_; }
    /// Items held in memory, all hosts together.
    std::size_t in_memory() const noexcept { return waiting_ - spilled_; }
    /// Items of a host held in memory.
    std::size_t in_memory(host_id host) const {
        return host < hosts_.size() ? hosts_[host].waiting.size() : 0;
    }
    /// Items of a host counted but held elsewhere.
    std::size_t spilled(host_id host) const { return host < hosts_.size() ? hosts_[host].spilled : 0; }
    /// Requests handed out and not yet finished.
    std::size_t active(host_id host) const { return host < hosts_.size() ? hosts_[host].active : 0; }
    /// Hosts ever seen.
    std::size_t hosts() const noexcept { return hosts_.size(); }

    /// Removes every waiting item (a stopping crawl drops them; they stay counted as its todo).
    std::size_t clear() {
        const std::size_t dropped = waiting_;
        for (auto& h : hosts_) {
            h.urgent.clear();
            h.waiting.clear();
            h.spilled = 0;
            h.in_ready = false;
            h.refill_pending = false;
        }
        delayed_ = {};
        timed_ = {};
        ready_.clear();
        refills_.clear();
        waiting_ = 0;
        spilled_ = 0;
        return dropped;
    }

    static time_point steady_now() { return clock_type::now(); }

private:
    struct host_state {
        std::deque<Item> urgent; // handed out first, even while blocked
        std::deque<Item> waiting;
        std::size_t spilled = 0;
        std::size_t active = 0;
        duration delay{};
        time_point next_start{};
        std::optional<time_point> last_start;
        // With a delay, one request at a time is handed out until it starts: two handed out together could
        // both start at once, however long the delay.
        bool awaiting_start = false;
        bool in_ready = false;
        bool blocked = false;
        bool paused = false;
        std::size_t max_active = 0; // 0: the frontier's max_per_host
        bool refill_pending = false;
        std::optional<time_point> timed_at; // the wake-up already scheduled for this host
    };
    struct delayed_item {
        time_point not_before;
        std::size_t sequence; // FIFO among equal times
        host_id host;
        bool urgent;
        Item item;
    };
    struct later_first {
        bool operator()(const delayed_item& a, const delayed_item& b) const {
            return a.not_before != b.not_before ? a.not_before > b.not_before : a.sequence > b.sequence;
        }
    };
    using timed_entry = std::pair<time_point, host_id>;
    struct earlier_on_top {
        bool operator()(const timed_entry& a, const timed_entry& b) const { return a.first > b.first; }
    };

    host_state& state(host_id host) {
        while (hosts_.size() <= host) {
            hosts_.emplace_back();
            hosts_.back().delay = default_delay_;
        }
        return hosts_[host];
    }

    bool has_slot(const host_state& h) const noexcept {
        return h.active < (h.max_active != 0 ? h.max_active : max_per_host_) &&
               !(h.delay > duration::zero() && h.awaiting_start);
    }
    static bool has_work(const host_state& h) noexcept {
        return !h.paused && (!h.urgent.empty() || (!h.blocked && !h.waiting.empty()));
    }
    bool eligible(const host_state& h, time_point now) const noexcept {
        return has_work(h) && has_slot(h) && now >= h.next_start;
    }

    // Asks for spilled items once the line is down to half the window, so a refill arrives before it is
    // empty.
    void want_refill(host_id host, host_state& h) {
        if (h.spilled == 0 || h.refill_pending || h.waiting.size() > window_ / 2)
            return;
        h.refill_pending = true;
        refills_.emplace_back(host, std::min(h.spilled, window_ - h.waiting.size()));
    }

    // Puts a host where it belongs: the ready line when it can start something now, the timed heap when only
    // its delay holds it back. A host waiting for a slot needs nothing: finished() or started() refresh it.
    void refresh(host_id host, host_state& h, time_point now) {
        if (!has_work(h) || !has_slot(h) || h.in_ready)
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
            (due.urgent ? h.urgent : h.waiting).push_back(std::move(due.item));
            refresh(due.host, h, now);
        }
        while (!timed_.empty() && timed_.top().first <= now) {
            const host_id host = timed_.top().second;
            timed_.pop();
            auto& h = state(host);
            if (h.timed_at && *h.timed_at <= now)
                h.timed_at.reset();
            refresh(host, h, now);
        }
    }

    std::size_t max_per_host_;
    duration default_delay_;
    std::function<duration(duration)> spread_;
    std::size_t window_;
    time_point (*now_)();
    std::vector<host_state> hosts_;
    std::deque<host_id> ready_;
    std::priority_queue<delayed_item, std::vector<delayed_item>, later_first> delayed_;
    std::priority_queue<timed_entry, std::vector<timed_entry>, earlier_on_top> timed_;
    std::vector<std::pair<host_id, std::size_t>> refills_;
    std::size_t sequence_ = 0;
    std::size_t waiting_ = 0;
    std::size_t spilled_ = 0;
};

} // namespace asiocrawl::detail
