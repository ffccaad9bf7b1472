// The committer: with a state store, the state's changes are written as they come (group commit: whatever
// accumulated while one batch was being written goes in the next), spilled URLs are read back, and a
// worker's URL counts as done only once the commit holding its outcome is written.
#include "engine/crawler_impl.hpp"

#include "state/crawl_definition.hpp"
#include "state/record_codec.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>

#include <filesystem>
#include <tuple>

namespace asiocrawl::detail {

namespace asio = boost::asio;

committer::committer(engine& e)
    : e_(e)
    , phase_(e.state.durable() ? phase::running : phase::idle) // running before run() starts: see committed()
    , wanted_(e.executor)
    , written_(e.executor) {}

void committer::finish() {
    if (phase_ == phase::running) // idle (not durable) and ended stay
        phase_ = phase::finishing;
    wanted_.notify();
}

void committer::done_after_commit() {
    ++done_awaiting_commit_;
    wanted_.notify();
}

asio::awaitable<void> committer::committed() {
    const auto target = commits_started_ + 1;
    wanted_.notify();
    while (commits_done_ < target && !e_.aborting() &&
           (phase_ == phase::running || phase_ == phase::finishing))
        co_await written_.wait();
}

/// The outputs' flush (crawler::set_output_flush) reports from any thread; the answer comes back here on the
/// crawler's executor.
asio::awaitable<std::vector<archived_capture>> committer::flush_outputs() {
    if (!e_.output_flush)
        co_return std::vector<archived_capture>{};
    using signature = void(std::string, std::vector<archived_capture>);
    auto [error, archived] = co_await asio::async_initiate<decltype(asio::use_awaitable), signature>(
        [this](auto handler) {
            auto shared_handler = std::make_shared<decltype(handler)>(std::move(handler));
            e_.output_flush(
                e_.config.state.fsync, [shared_handler, ex = e_.executor](
                                           const std::string& error, std::vector<archived_capture> archived) {
                    asio::post(ex, [shared_handler, error, archived = std::move(archived)]() mutable {
                        std::move (*shared_handler)(error, std::move(archived));
                    });
                });
        },
        asio::use_awaitable);
    if (!error.empty())
        throw crawl_error(asiocrawl::error::output_failed,
                          "an output could not be written (" + error +
                              "): the crawl stops rather than count URLs whose output was lost as done");
    co_return std::move(archived);
}

asio::awaitable<void> committer::save_known_hosts() {
    const auto* hsts = e_.fetch.hsts();
    if (hsts == nullptr || e_.config.state.dir.empty())
        co_return;
    const auto changes = hsts->store().changes();
    if (!known_hosts_saved_) // the hosts loaded at the start are in the file already
        known_hosts_saved_ = changes;
    if (changes == *known_hosts_saved_)
        co_return;
    known_hosts_saved_ = changes;
    auto write = [path = (std::filesystem::path(e_.config.state.dir) / state_hsts_file).string(),
                  text = hsts->known_hosts_text()] { return hsts_transport::write_known_hosts(path, text); };
    if (auto problem = co_await e_.on_storage(write))
        e_.log(log_level::error, *problem);
}

asio::awaitable<void> committer::run() {
    if (phase_ == phase::idle)
        co_return; // not durable: nothing to write
    auto& state = e_.state;
    try {
        for (;;) {
            auto batch = state.take_batch();
            auto refills = state.take_refills();
            // Taken with the batch: the read sees every change to the due-time index made before it.
            const auto due_read = state.take_due_read();
            const auto hint_read = state.take_hint_read();
            if (batch.empty() && refills.empty() && !due_read && hint_read.empty() &&
                done_awaiting_commit_ == 0) {
                if (phase_ == phase::finishing)
                    break;
                co_await wanted_.wait();
                continue;
            }
            const auto generation = ++commits_started_;
            const auto done_here = std::exchange(done_awaiting_commit_, 0);
            if (!batch.empty()) {
                // The outputs first: a URL the state counts as done must have its record written. The
                // batch's history then says where the archive put each capture.
                state.place_captures(batch, co_await flush_outputs());
                if (e_.shared) {
                    co_await e_.leases.commit(batch);
                } else {
                    auto write = [store = e_.store.get(), &batch, sync = e_.config.state.fsync] {
                        store->write(batch, sync);
                    };
                    co_await e_.on_storage(write);
                    co_await save_known_hosts();
                }
            }
            for (const auto& refill : refills) {
                auto read = [store = e_.store.get(), &refill] {
                    return store->read_waiting(refill.host, refill.from_seq, refill.count);
                };
                auto items = co_await e_.on_storage(read);
                state.on_refill(refill.host, std::move(items));
            }
            if (due_read) {
                auto read = [store = e_.store.get(), &due_read] {
                    return store->read_due(due_read->from, due_read->count);
                };
                auto rows = co_await e_.on_storage(read);
                state.on_due_read(std::move(rows));
            }
            if (!hint_read.empty()) {
                auto read = [store = e_.store.get(), &hint_read] { return store->read_history(hint_read); };
                auto entries = co_await e_.on_storage(read);
                state.on_hint_read(std::move(entries));
            }
            commits_done_ = generation;
            written_.notify();
            for (std::size_t i = 0; i < done_here && !e_.aborting(); ++i)
                e_.queue.task_done();
            if (e_.shared)
                e_.leases.poke();
            e_.pump.pump();
        }
    } catch (...) {
        e_.fail(std::current_exception());
    }
    phase_ = phase::ended;
    written_.notify();
}

asio::awaitable<void> committer::open_state() {
    auto& config = e_.config;
    auto& state = e_.state;
    e_.storage.emplace(1);
    const std::string definition = crawl_definition_json(config);
    const std::uint64_t fresh_seed = state.seed();
    auto& seen = state.seen_set();
    auto open = [&]() {
        const std::filesystem::path dir = config.state.dir;
        if (config.state.reset)
            state_store::reset(dir);
        auto s = state_store::open(dir);
        auto meta = s->meta();
        if (!meta) {
            s->write_meta({fresh_seed, definition});
            state_store::recrawl_history history;
            if (config.continuous) // its schedule goes to disk from the first fetch on
                history = s->load_history(1, true, fresh_seed, seen);
            return std::tuple{std::move(s),     fresh_seed, restored_state{},
                              std::uint32_t{1}, false,      std::move(history)};
        }
        if (auto change = describe_definition_change(meta->definition, definition))
            throw crawl_error(asiocrawl::error::state_mismatch,
                              "state directory " + dir.string() + " belongs to another crawl: " + *change +
                                  " (use --state-reset to start over, or another state directory)");
        // A re-crawl begins a new generation over a finished crawl; an unfinished one is resumed, so that the
        // same command resumes a killed re-crawl.
        auto generation = s->generation();
        const bool new_generation = config.state.recrawl && s->finished();
        if (new_generation)
            s->begin_generation(++generation);
        auto loaded = s->load(seen);
        // Continuous mode keeps its schedule in the store's due-time index; a re-crawl whose history has
        // outlinks leaves it in the store too (docs/RECRAWL.md, "Memory during a re-crawl").
        state_store::recrawl_history history;
        if (generation > 1 || config.continuous)
            history = s->load_history(generation, config.continuous, meta->seed, seen);
        return std::tuple{std::move(s), meta->seed,     std::move(loaded),
                          generation,   new_generation, std::move(history)};
    };
    auto [opened, seed, restored, generation, new_generation, history] = co_await e_.on_storage(open);
    e_.store = std::move(opened);
    state.set_seed(seed);
    state.restore(restored);
    if (history.due_indexed) {
        e_.log(log_level::info, "continuous, generation " + std::to_string(generation) +
                                    ": the revisit schedule and the fetch history stay on disk");
    } else if (generation > 1 || config.continuous) {
        e_.log(log_level::info,
               std::string(new_generation ? "re-crawl: generation " : "resuming generation ") +
                   std::to_string(generation) + ", " + std::to_string(history.known) +
                   " URLs known from the previous one" +
                   (history.not_admitted ? " (their history stays on disk)" : ""));
    }
    if (generation > 1 || config.continuous) {
        if (history.due_indexed)
            state.set_schedule_in_store(generation);
        else if (history.not_admitted)
            state.set_history_in_store(std::move(*history.not_admitted), generation);
        else
            state.set_history(std::move(history.whole), generation, new_generation);
    }
    if (state.result().runs > 0)
        e_.log(log_level::info, "resuming the crawl from " + config.state.dir + ": " +
                                    std::to_string(state.result().done) + " URLs done, " +
                                    std::to_string(e_.queue.unfinished()) + " waiting");
}

asio::awaitable<void> committer::close_state() {
    std::vector<record> records;
    const bool keep = e_.config.keep_records;
    auto read_and_close = [&] {
        if (keep) {
            e_.store->for_each_record([&](std::string_view url, std::string_view bytes) {
                auto r = decode_record(bytes);
                if (!r)
                    throw crawl_error(asiocrawl::error::store_damaged,
                                      "state directory " + e_.config.state.dir + ": the record of " +
                                          std::string(url) + " does not decode (damaged)");
                records.push_back(std::move(*r));
            });
        }
        e_.store.reset();
    };
    co_await e_.on_storage(read_and_close);
    e_.state.result().records = std::move(records);
}

} // namespace asiocrawl::detail
