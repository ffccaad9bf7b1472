// The worker pool: max_tasks workers, started together by run() and joined by it. Each takes a
// ticket from the work queue, fetches it, hands the answer to the crawl state and calls task_done once.
#include "engine/crawler_impl.hpp"
#include "engine/fetch_outcome.hpp"

#include "html/page_links.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/url/parse.hpp>

#include <exception>
#include <memory>

namespace asiocrawl::detail {

namespace asio = boost::asio;

namespace {

/// In flight from the request's start to the end of the fetch, however it ends.
struct in_flight_guard {
    crawl_state& state;
    crawl_state::ticket& t;
    ~in_flight_guard() { state.fetch_finished(t); }
};

} // namespace

worker_pool::worker_pool(engine& e)
    : outputs_drained(e.executor)
    , e_(e)
    , joined_(e.executor, asio::steady_timer::time_point::max()) {}

void worker_pool::worker_exited::operator()(std::exception_ptr) const {
    // A worker ends when the queue closes, or with the operation_aborted of a terminal cancellation
    // (abort()): either way its URL is accounted for (done, or left unfinished: todo), so what it ended with
    // is dropped.
    if (--pool->live_ == 0)
        pool->joined_.cancel();
}

asio::awaitable<void> worker_pool::run() {
    const std::size_t n = e_.config.max_tasks;
    signals_ = std::make_unique<asio::cancellation_signal[]>(n);
    std::exception_ptr failed;
    try {
        // A worker's completion is never invoked from inside co_spawn (co_spawn posts it), so live_ counts
        // each one before it can end.
        for (; started_ < n; ++started_) {
            asio::co_spawn(e_.executor, work(),
                           asio::bind_cancellation_slot(signals_[started_].slot(), worker_exited{this}));
            ++live_;
        }
    } catch (...) {
        // The workers already started still hold this pool: they are stopped and joined before the failure
        // goes on.
        failed = std::current_exception();
        for (std::size_t i = 0; i < started_; ++i)
            signals_[i].emit(asio::cancellation_type::terminal);
    }
    // Joined whatever the awaiting coroutine's cancellation says: an unconnected slot, so that the pool is
    // never left with workers running.
    if (live_ > 0)
        co_await joined_.async_wait(
            asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable)));
    if (failed)
        std::rethrow_exception(failed);
}

void worker_pool::abort() {
    if (aborted_)
        return;
    aborted_ = true;
    for (std::size_t i = 0; i < started_; ++i)
        signals_[i].emit(asio::cancellation_type::terminal);
}

fetch_options worker_pool::options_for(const work_item& item) const {
    fetch_options options;
    options.capture = static_cast<bool>(e_.exchanges);
    if (item.kind == item_kind::robots)
        options.truncate_body_at = e_.config.robots.max_bytes;
    if (item.kind == item_kind::page && !e_.config.accept_types.empty())
        options.accept_types = &e_.config.accept_types;
    options.extra_fields = e_.state.rule_fields(item.url);
    if (item.kind != item_kind::robots) {
        if (const auto* before = e_.state.conditional_basis(item.url)) {
            // A re-crawl asks whether the page changed since (RFC 9110 13.1.1, 13.1.3). The views stay valid
            // until the URL's record is made, after this attempt.
            options.if_none_match = before->etag;
            options.if_modified_since = before->last_modified;
        }
    }
    return options;
}

void worker_pool::report_exchange(const crawl_state::ticket& t, const fetch_result& response) {
    if (!e_.exchanges || (response.raw_request.empty() && response.raw_response.empty()))
        return;
    const auto& item = t.item;
    http_exchange x;
    x.kind = item.kind == item_kind::robots    ? http_exchange::purpose::robots
             : item.kind == item_kind::sitemap ? http_exchange::purpose::sitemap
                                               : http_exchange::purpose::page;
    x.url = item.url;
    x.remote_ip = response.remote_ip;
    x.started = response.started;
    x.protocol = response.protocol;
    x.request = response.raw_request;
    x.response = response.raw_response;
    x.response_head_bytes = response.raw_head_bytes;
    x.complete = !response.error;
    x.error = response.error;
    if (t.revisit) {
        using profile = http_exchange::earlier_capture::profile;
        x.revisit.why =
            t.revisit->not_modified ? profile::server_not_modified : profile::identical_payload_digest;
        x.revisit.target_uri = item.url;
        x.revisit.date = t.revisit->date;
        x.revisit.payload_digest = t.revisit->payload_digest;
        x.revisit.record_id = t.revisit->record_id;
    }
    x.record_id = t.capture_record_id;
    e_.exchanges(x);
}

/// An output that fell behind holds new fetches back until it says it drained; the slot stays reserved
/// meanwhile.
asio::awaitable<void> worker_pool::wait_for_outputs() {
    while (e_.busy && e_.busy() && !e_.aborting())
        co_await outputs_drained.wait();
}

// g++ 12 sees this coroutine's frame allocated by Asio's aligned_new (aligned_alloc, for a frame this size)
// and released by Asio's matching operator delete, and warns, wrongly, that they do not match.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
/// What comes of one attempt's answer (or failure). Its frame exists only while the answer is handled.
asio::awaitable<void> worker_pool::handle(crawl_state::ticket& t, fetch_result& response) {
    // The archive learns of the exchange after the state compared it with the previous crawl's capture
    // (t.revisit, set when the record is made).
    record r;
    switch (e_.state.on_response(t, outcome_of(response), r)) {
    case crawl_state::next_step::done:
        break;
    case crawl_state::next_step::parse_page: {
        resolved_links links;
        const bool handed_over = e_.parse_pool && e_.parse_pool->offload();
        if (handed_over) {
            // The body travels to a parse thread and back by move: no copy, and no crawl state leaves this
            // thread.
            links = co_await e_.parse_pool->resolve(t.item.url, std::move(response.body),
                                                    link_options_for(e_.config, r.charset));
        } else {
            links = resolve_links(boost::urls::parse_uri(t.item.url).value(), std::move(response.body),
                                  link_options_for(e_.config, r.charset));
        }
        response.body = std::move(links.body);
        if (e_.aborting()) {
            report_exchange(t, response);
            co_return;
        }
        e_.state.on_links(t, r, links);
        if (handed_over)
            e_.parse_pool->give_back(std::move(links.urls)); // made on a parse thread, freed there
        [[fallthrough]];
    }
    case crawl_state::next_step::record_ready:
        if (e_.bodies && r.status >= 200 && r.status < 300 && !response.body.empty())
            e_.bodies(r, response.body);
        e_.state.finish(t, std::move(r));
        break;
    }
    report_exchange(t, response);
    e_.pump.pump();
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// A worker: one ticket at a time, each to exactly one task_done. This frame is what waits for the server,
/// thousands at once, so it holds the ticket and a pointer to the result and nothing sized by the response
/// (see fetcher::fetch_into); the work on the answer happens in handle().
asio::awaitable<void> worker_pool::work() {
    auto& state = e_.state;
    std::optional<crawl_state::ticket> t;
    while (co_await e_.queue.get(t)) {
        try {
            if (state.begin_attempt(*t)) {
                if (e_.busy && e_.busy() && !e_.aborting())
                    co_await wait_for_outputs();
                std::unique_ptr<fetch_result> response;
                {
                    in_flight_guard guard{state, *t};
                    const bool shared_robots = e_.shared && t->item.kind == item_kind::robots;
                    state.fetch_started(*t, !shared_robots);
                    e_.pump.pump();
                    if (shared_robots)
                        co_await e_.leases.fetch_robots_once(*t, response);
                    else
                        co_await e_.fetch.fetch_into(t->item.url, options_for(t->item), response);
                }
                e_.pump.pump();
                // After an abort the URL stays unfinished: part of the todo.
                if (!e_.aborting())
                    co_await handle(*t, *response);
            }
        } catch (const std::exception& e) {
            if (!e_.aborting())
                state.internal_error(*t, e.what());
        } catch (...) {
            if (!e_.aborting())
                state.internal_error(*t, "unknown exception");
        }
        t.reset(); // the host slot goes back before the commit
        if (e_.aborting())
            continue;
        if (e_.shared) {
            // Done once its changes are in Redis; the committer says so, and this worker fetches the next URL
            // meanwhile instead of idling through the round trip. A kill costs at most the URLs leased here,
            // which these still are.
            e_.commits.done_after_commit();
            continue;
        }
        // With a state dir a kill costs at most the max_tasks URLs in flight: a worker takes its next URL
        // once its last one is written.
        if (state.durable())
            co_await e_.commits.committed();
        if (!e_.aborting()) {
            e_.queue.task_done();
            if (state.wants_wrap_up(e_.queue.unfinished()))
                e_.pump
                    .pump(); // the last URL of a re-crawl that follows links: what it did not reach is gone
        }
    }
}

} // namespace asiocrawl::detail
