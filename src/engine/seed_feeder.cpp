// The seed feeder: the seed file (crawler_config::input_file) is read on a thread of its own, a chunk at a
// time, when the crawl state asks for more.
#include "engine/crawler_impl.hpp"

namespace asiocrawl::detail {

namespace asio = boost::asio;

seed_feeder::seed_feeder(engine& e)
    : e_(e)
    , wanted_(e.executor) {}

void seed_feeder::want() {
    if (e_.seeds && !reading_ && !closed_ && e_.state.wants_seeds(e_.queue.unfinished()))
        wanted_.notify();
}

void seed_feeder::close() {
    closed_ = true;
    wanted_.notify();
}

asio::awaitable<void> seed_feeder::run() {
    if (!e_.seeds)
        co_return;
    auto read = [reader = e_.seeds.get()]() -> asio::awaitable<seed_chunk> { co_return reader->next(); };
    while (!closed_) {
        if (!e_.state.wants_seeds(e_.queue.unfinished())) {
            co_await wanted_.wait();
            continue;
        }
        if (!e_.seed_thread) {
            e_.seed_thread.emplace(1);
            e_.seeds->start_at(e_.state.seeds_read()); // after a resume: where the previous runs stopped
        }
        reading_ = true;
        auto chunk = co_await asio::co_spawn(e_.seed_thread->get_executor(), read, asio::use_awaitable);
        reading_ = false;
        e_.state.on_seeds(std::move(chunk));
        e_.pump.pump();
    }
}

} // namespace asiocrawl::detail
