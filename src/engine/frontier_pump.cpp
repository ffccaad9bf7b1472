// The frontier pump: tickets the crawl state lets start go into the work queue; the pump sleeps until the
// next delay or backoff ends. A re-crawl whose history stays in the store, and a continuous crawl with a
// state directory, read each ticket's entry on the storage thread first (load_loop): the io_context never
// waits on the disk.
#include "engine/crawler_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace asiocrawl::detail {

namespace asio = boost::asio;

frontier_pump::frontier_pump(engine& e)
    : e_(e)
    , timer_(e.executor)
    , rearm_(e.executor)
    , load_(e.executor) {}

void frontier_pump::pump() {
    if (closed_ || e_.queue.closed())
        return;
    if (e_.state.out_of_budget()) { // quota or max_time: a graceful stop, as on SIGTERM
        e_.request_stop();
        return;
    }
    const bool from_store = e_.state.history_in_store();
    while (auto t = e_.state.next()) {
        if (from_store && t->item.kind != item_kind::robots)
            loading_.push_back(std::move(*t)); // its history entry first
        else
            e_.queue.put_held(std::move(*t));
    }
    if (!loading_.empty())
        load_.notify();
    if (e_.state.wants_wrap_up(e_.queue.unfinished())) {
        // A re-crawl reached all it will: the rest is gone.
        if (!from_store)
            e_.state.wrap_up_generation();
        else if (!wrapping_up_) {
            wrap_up_wanted_ = true;
            load_.notify();
        }
    }
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
    co_await (wake_loop() && load_loop());
}

asio::awaitable<void> frontier_pump::load_loop() {
    try {
        while (!closed_) {
            if (!loading_.empty()) {
                co_await load_history(std::exchange(loading_, {}));
            } else if (wrap_up_wanted_) {
                wrap_up_wanted_ = false;
                wrapping_up_ = true;
                co_await wrap_up_from_store();
                wrapping_up_ = false;
            } else {
                co_await load_.wait();
            }
        }
    } catch (...) {
        e_.fail(std::current_exception()); // a store that cannot be read: the crawl stops
    }
}

asio::awaitable<void> frontier_pump::load_history(std::vector<crawl_state::ticket> tickets) {
    std::vector<std::string> urls;
    urls.reserve(tickets.size());
    for (const auto& t : tickets)
        urls.push_back(t.item.url);
    // One storage call for every ticket handed out since the last one (RocksDB point reads).
    auto entries =
        co_await e_.on_storage([store = e_.store.get(), &urls] { return store->read_history(urls); });
    // A 304 admits the links it stands for that this generation has not reached: their entries, read in a
    // second call for all these tickets together.
    std::vector<std::vector<std::uint64_t>> wanted(tickets.size());
    std::vector<std::uint64_t> all;
    for (std::size_t i = 0; i < tickets.size(); ++i) {
        wanted[i] = e_.state.on_history(tickets[i], std::move(entries[i]));
        all.insert(all.end(), wanted[i].begin(), wanted[i].end());
    }
    entries = {};
    if (!all.empty()) {
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        const auto known = co_await e_.on_storage(
            [store = e_.store.get(), &all] { return store->read_indexed_history(all); });
        for (std::size_t i = 0; i < tickets.size(); ++i) {
            if (wanted[i].empty())
                continue;
            std::vector<std::pair<std::string, fetch_history>> links; // in the order of the page's links
            for (const auto fp : wanted[i]) {
                const auto at = std::lower_bound(all.begin(), all.end(), fp) - all.begin();
                if (const auto& found = known[static_cast<std::size_t>(at)])
                    links.push_back(*found);
            }
            e_.state.on_known_outlinks(tickets[i], std::move(links));
        }
    }
    for (auto& t : tickets)
        e_.queue.put_held(std::move(t));
}

asio::awaitable<void> frontier_pump::wrap_up_from_store() {
    // The entries of an earlier generation (not fetched in this one), read on the storage thread a chunk at a
    // time; only those this generation has not reached (its seen set) are kept: the gone ones, normally few.
    std::vector<std::pair<std::string, fetch_history>> unreached;
    std::optional<std::string> after{std::in_place};
    while (e_.state.wrap_up_reports_gone() && after) {
        // A named lambda: GCC 12 frees a temporary with a std::string inside co_await's arguments wrongly.
        auto read_chunk = [store = e_.store.get(), generation = e_.state.generation(),
                           from = std::move(*after)] {
            return store->history_before(generation, from, 4096);
        };
        auto chunk = co_await e_.on_storage(std::move(read_chunk));
        if (closed_)
            co_return;
        for (auto& entry : chunk.entries)
            if (e_.state.unreached_now(entry.first, entry.second))
                unreached.push_back(std::move(entry));
        after = std::move(chunk.next_after);
    }
    // Work may have come meanwhile (the control API admits a URL): then it is not time yet. The state looks
    // at its seen set again: a URL admitted and fetched between two chunks is not gone.
    if (closed_ || !e_.state.wants_wrap_up(e_.queue.unfinished()))
        co_return;
    e_.state.wrap_up_generation(std::move(unreached));
    e_.commits.want(); // the gone records and the forgotten entries
}

asio::awaitable<void> frontier_pump::wake_loop() {
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
    load_.notify();
}

} // namespace asiocrawl::detail
