// The Redis side of a shared crawl (state.redis, docs/DEPLOY.md): joining it, committing batches, the lease
// loop that takes URLs from the shared frontier, robots.txt fetched once for all instances, and the end
// (leases given back, the combined report).
#include "engine/crawler_impl.hpp"
#include "engine/lease_pacing.hpp"

#include "policy/backoff.hpp"
#include "state/crawl_definition.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <unistd.h>

namespace asiocrawl::detail {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;
using namespace asio::experimental::awaitable_operators;

lease_loop::lease_loop(engine& e)
    : e_(e)
    , poked_(e.executor) {}

/// A shared crawl's worker named by no one (state.instance empty): 64 random bits, unique enough among the
/// workers of one crawl. The CLI names its workers by host and process id instead.
static std::string random_instance_name() {
    std::random_device random;
    const std::uint64_t bits = (std::uint64_t{random()} << 32) | random();
    char text[17] = {};
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
    return std::string("instance-") + text;
}

asio::awaitable<void> lease_loop::open() {
    auto where = redis::parse_url(e_.config.state.redis, e_.config.state.redis_password);
    if (!where.value)
        throw crawl_error(error::invalid_config, "state.redis: " + where.error);
    e_.redis_name = redis::redacted(*where.value);
    redis::client_options options;
    options.where = *where.value;
    const redis_tls_config& tls = e_.config.state.redis_tls;
    options.tls = {tls.ca_file, tls.cert_file, tls.key_file, tls.insecure};
    if (where.value->tls && tls.insecure)
        e_.log(log_level::warning, "state.redis_tls.insecure: the certificate of " +
                                       redis::redacted(*where.value) + " is not verified");
    options.give_up_after = e_.config.state.redis_timeout;
    options.on_retry = [this](int attempt, const std::string& why) {
        if (attempt == 1 || attempt % 10 == 0)
            e_.log(log_level::warning, "Redis unreachable (attempt " + std::to_string(attempt) + "): " + why);
    };
    try {
        e_.redis_client.emplace(e_.executor, std::move(options));
    } catch (const redis::tls_file_error& e) {
        throw crawl_error(error::invalid_config, "state.redis_tls." + e.which + ": " + e.what());
    }
    const std::string definition = crawl_definition_json(e_.config);
    shared_store::settings settings;
    settings.crawl_id =
        e_.config.state.crawl_id.empty() ? default_crawl_id(definition) : e_.config.state.crawl_id;
    settings.instance = e_.config.state.instance.empty() ? random_instance_name() : e_.config.state.instance;
    settings.lease = e_.config.state.lease;
    settings.max_per_host = e_.config.politeness.max_per_host;
    settings.delay = std::chrono::duration_cast<std::chrono::milliseconds>(e_.config.politeness.delay);
    if (!e_.config.hosts.empty()) {
        rules_.emplace(e_.config.hosts);
        settings.rule_for = [this](const std::string& host) {
            const host_rule* rule = rules_->for_host(host);
            return rule ? shared_store::host_limits{rule->delay, rule->max_per_host}
                        : shared_store::host_limits{};
        };
    }
    e_.shared.emplace(*e_.redis_client, settings);
    // A Redis unreachable from the start (down, or refusing its TLS certificate) is given up like one
    // lost mid-crawl: after state.redis_timeout, exit status 2.
    std::uint64_t seed = 0;
    try {
        seed = co_await e_.shared->join(e_.state.seed(), definition, e_.config.continuous);
    } catch (const redis::unreachable& e) {
        throw e_.gave_up_on_redis(e);
    }
    e_.state.set_seed(seed);
    e_.log(log_level::info, "joined the shared crawl " + settings.crawl_id + " at " +
                                redis::redacted(*where.value) + " as " + settings.instance);
    const auto generation = co_await e_.shared->begin_generation(e_.config.state.recrawl);
    if (generation.generation > 1) {
        // The history stays in Redis: each leased URL brings its own entry (lease with_history), and in a
        // generation that follows links the entries of its links not admitted yet.
        e_.state.set_shared_history(generation.generation, generation.follows_links);
        follows_links_ = generation.follows_links;
        e_.log(log_level::info,
               std::string(e_.config.state.recrawl ? "re-crawl: generation " : "generation ") +
                   std::to_string(generation.generation) + " of the shared crawl" +
                   (generation.follows_links ? ", following links from the history"
                                             : ", every known URL admitted"));
    }
    if (generation.admit)
        admit_from_ = generation.admit_from;
}

asio::awaitable<void> lease_loop::admit_known_urls() {
    if (!admit_from_)
        co_return;
    std::string cursor = std::exchange(admit_from_, std::nullopt).value();
    std::size_t admitted = 0;
    std::size_t known = 0;
    do {
        auto scanned = co_await e_.shared->scan_history(cursor, 1000);
        known += scanned.second.size();
        admitted += e_.state.admit_known_from(scanned.second);
        co_await commit(e_.state.take_batch());
        cursor = std::move(scanned.first);
        if (cursor != "0")
            co_await e_.shared->admitted_to(cursor);
    } while (cursor != "0" && !e_.aborting());
    if (cursor != "0")
        co_return; // aborted: the next instance that joins goes on from the cursor
    co_await e_.shared->end_admission();
    e_.log(log_level::info, "re-crawl, generation " + std::to_string(e_.state.generation()) + ": " +
                                std::to_string(admitted) + " of " + std::to_string(known) +
                                " known URLs admitted to fetch again");
}

/// The start of a generation that follows links: one instance builds the URL index that finds a 304's links
/// (which URL each outlink fingerprint of the history is) from the history, a chunk at a time, before
/// anything of the generation is leased. A killed builder's claim expires after a lease: another instance
/// goes on from its cursor.
asio::awaitable<void> lease_loop::build_url_index() {
    auto cursor = co_await e_.shared->claim_index(); // "0" at the start (as HSCAN's), never at the end
    if (!cursor)
        co_return; // built already, or another instance builds it
    do {
        cursor = co_await e_.shared->index_from(*cursor, e_.state.seed());
    } while (cursor && *cursor != "0" && !e_.aborting() && e_.stopping == stop_level::none);
    if (cursor && *cursor == "0")
        e_.log(log_level::info, "re-crawl, generation " + std::to_string(e_.state.generation()) +
                                    ": the URL index of the history is built");
}

/// The end of a generation that follows links: once nothing waits or is leased anywhere, one instance claims
/// the wrap-up and reports every known URL of an earlier generation that no page of this one led to (the
/// crawl-wide seen set lacks it) as gone, a chunk of the history at a time, then releases the generation's
/// hold. A killed wrap-upper's claim expires after a lease: another instance goes on from its cursor.
asio::awaitable<bool> lease_loop::wrap_up_generation() {
    auto cursor = co_await e_.shared->claim_wrap_up();
    if (!cursor)
        co_return false;
    // A budget that skipped URLs on any instance: none is called gone.
    const auto status = co_await e_.shared->read_status();
    const bool budget_skipped = !unreached_are_gone(combined_report(status.counters).stats);
    std::size_t gone = 0;
    // A stop leaves the rest to another instance (or the next to join) once the claim expires.
    const auto stopped = [this] { return e_.aborting() || e_.stopping != stop_level::none; };
    while (!budget_skipped && !stopped()) {
        auto scanned = co_await e_.shared->scan_history(*cursor, 1000);
        std::vector<std::pair<std::string, fetch_history>> earlier;
        std::vector<std::uint64_t> fingerprints;
        for (auto& [url, h] : scanned.second) {
            if (h.generation >= e_.state.generation() || h.kind == item_kind::robots)
                continue; // fetched (or known unanswered) in this generation: reached
            fingerprints.push_back(url_fingerprint(url, e_.state.seed()));
            earlier.emplace_back(url, std::move(h));
        }
        const auto seen = co_await e_.shared->seen(fingerprints);
        std::vector<std::pair<std::string, fetch_history>> unreached;
        for (std::size_t i = 0; i < earlier.size(); ++i)
            if (!seen.at(i))
                unreached.push_back(std::move(earlier[i]));
        std::sort(unreached.begin(), unreached.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        gone += unreached.size();
        // Recorded before the commit that forgets them: a wrap-upper killed in between leaves them to its
        // successor, which reports them again (at least once, as a killed instance's leased URLs).
        e_.state.report_gone_shared(unreached);
        co_await commit(e_.state.take_batch());
        *cursor = std::move(scanned.first);
        if (*cursor == "0")
            break;
        const bool still_mine = co_await e_.shared->wrapped_up_to(*cursor);
        if (!still_mine)
            co_return false; // the claim expired and another instance took it: it goes on
    }
    if (stopped())
        co_return false; // the claim expires: another instance goes on from the cursor
    const bool ended = co_await e_.shared->end_wrap_up();
    if (!ended)
        co_return false;
    if (budget_skipped)
        e_.log(log_level::info,
               "re-crawl, generation " + std::to_string(e_.state.generation()) +
                   ": max_pages skipped URLs, so the known URLs not reached are not reported gone");
    else
        e_.log(log_level::info, "re-crawl, generation " + std::to_string(e_.state.generation()) + ": " +
                                    std::to_string(gone) +
                                    " known URLs no page links to any more, reported gone");
    co_return true;
}

/// Commits a batch to Redis, again and again while Redis is away (the client reconnects with backoff):
/// the batch is held here meanwhile, and a repeated commit changes nothing that the first one did.
asio::awaitable<void> lease_loop::commit(const state_batch& batch) {
    for (int attempt = 1;; ++attempt) {
        try {
            co_await e_.shared->commit(batch);
            break;
        } catch (const redis::connection_lost& e) {
            if (attempt == 1)
                e_.log(log_level::warning, std::string(e.what()) + ": results held, retrying");
        } catch (const redis::unreachable& e) {
            throw e_.gave_up_on_redis(e);
        }
    }
    for (const auto& finished : batch.finished)
        leased_ids_.erase(finished.second);
}

/// robots.txt of an origin is fetched by one instance of a shared crawl; the others take its answer from
/// Redis (waiting for it at most a lease). Without Redis each instance fetches it itself.
asio::awaitable<void> lease_loop::fetch_robots_once(crawl_state::ticket& t,
                                                    std::unique_ptr<fetch_result>& response) {
    const work_item& item = t.item;
    bool mine = false;
    try {
        const auto give_up_at = clock_type::now() + e_.config.state.lease;
        asio::steady_timer pause(e_.executor);
        while (!e_.aborting()) {
            if (auto cached = co_await e_.shared->cached_robots(item.url, robots_cache_lifetime)) {
                response = std::make_unique<fetch_result>();
                response->status = cached->status;
                response->location = std::move(cached->location);
                response->body = std::move(cached->body);
                co_return;
            }
            if (co_await e_.shared->claim_robots(item.url)) {
                mine = true;
                break;
            }
            if (clock_type::now() >= give_up_at)
                break;
            pause.expires_after(std::chrono::milliseconds(20));
            co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
        }
    } catch (const std::exception& e) {
        e_.log(log_level::warning, item.url + ": robots.txt is not shared (" + e.what() + "): fetched here");
    }
    if (e_.aborting())
        co_return; // the worker leaves the URL unfinished
    e_.state.request_started(t);
    co_await e_.fetch.fetch_into(item.url, e_.workers.options_for(item), response);
    // Only a final answer is shared: a network failure or a 429/503 is this instance's to retry.
    if (!mine || !response || response->error || is_retryable_status(response->status))
        co_return;
    try {
        shared_store::robots_answer answer{response->status, response->location, response->body};
        co_await e_.shared->store_robots(item.url, answer);
    } catch (const std::exception& e) {
        e_.log(log_level::warning, item.url + ": robots.txt answer not shared (" + e.what() + ")");
    }
}

/// After the lease loop: the URLs leased here and not finished are handed back at once (their leases made to
/// expire now), so the other instances take them without waiting a lease.
asio::awaitable<void> lease_loop::give_back_leases() {
    if (leased_ids_.empty())
        co_return;
    const std::vector<std::uint64_t> held(leased_ids_.begin(), leased_ids_.end());
    try {
        co_await e_.shared->give_back(held);
        e_.log(log_level::info,
               "gave back " + std::to_string(held.size()) + " leased URLs to the shared crawl");
        leased_ids_.clear();
    } catch (const redis::unreachable& e) {
        throw e_.gave_up_on_redis(e);
    }
}

/// Every instance's final report counts the whole crawl: the counters of every instance, added up.
asio::awaitable<void> lease_loop::take_combined_report() {
    try {
        const auto status = co_await e_.shared->read_status();
        const auto combined = combined_report(status.counters);
        auto& result = e_.state.result();
        result.stats = combined.stats;
        result.done = combined.done;
        result.runs = combined.runs;
        result.started_at = combined.started_at;
    } catch (const redis::connection_lost& e) {
        e_.log(log_level::warning, std::string(e.what()) + ": the report counts this instance only");
    } catch (const redis::unreachable& e) {
        throw e_.gave_up_on_redis(e);
    }
}

void lease_loop::share_control(control_change change) {
    if (e_.config.state.redis.empty())
        return; // not a shared crawl: the change is this instance's only
    unsent_controls_.push_back(std::move(change));
    poked_.notify();
}

asio::awaitable<void> lease_loop::sync_controls() {
    // Sent one at a time, in the order made, each taken off the list once Redis has it (a lost connection
    // sends it again: pausing, resuming or setting the same limits twice changes nothing more).
    while (!unsent_controls_.empty()) {
        const auto change = unsent_controls_.front();
        switch (change.what) {
        case control_change::kind::pause:
            co_await e_.shared->pause(change.host);
            break;
        case control_change::kind::resume:
            co_await e_.shared->resume(change.host);
            break;
        case control_change::kind::limits:
            co_await e_.shared->set_limits(change.host, change.limits);
            break;
        }
        unsent_controls_.pop_front();
    }
    if (controls_latest_ == controls_read_)
        co_return;
    const auto read = co_await e_.shared->read_controls();
    if (!unsent_controls_.empty())
        co_return; // a change made here meanwhile: sent first, then read again
    std::map<std::string, crawl_state::host_control, std::less<>> controls;
    for (const auto& [host, c] : read.hosts)
        controls[host] = {c.paused, c.limits.delay, c.limits.max_per_host};
    e_.state.mirror_controls(controls, " (crawl-wide, through Redis)");
    controls_read_ = read.version;
    controls_latest_ = std::max(controls_latest_, read.version);
    e_.steered();
}

/// Leases URLs from the shared frontier as workers have room for them, renews the leases held here, and
/// ends when the crawl-wide unfinished counter reaches zero (nothing waits, nothing is leased).
asio::awaitable<void> lease_loop::run() {
    lease_pacing pacing(e_.config.max_tasks);
    // Renewed at once: the seeding mark must be in Redis before another instance could claim a wrap-up.
    auto renewed_at = clock_type::now() - e_.config.state.lease;
    try {
        while (e_.stopping == stop_level::none) {
            shared_store::lease_answer answer;
            lease_pacing::request ask{};
            try {
                if (clock_type::now() - renewed_at > e_.config.state.lease / 3) {
                    const std::vector<std::uint64_t> held(leased_ids_.begin(), leased_ids_.end());
                    co_await e_.shared->renew(held, e_.state.reading_seeds());
                    renewed_at = clock_type::now();
                }
                co_await sync_controls();
                if (e_.stopping != stop_level::none)
                    break;
                // URLs held for a paused host wait for its resume (leased, renewed): others are leased
                // beside them.
                const auto unfinished = e_.queue.unfinished();
                ask = pacing.next(unfinished - std::min(unfinished, e_.state.paused_waiting()),
                                  e_.commits.awaiting_commit());
                answer = co_await e_.shared->lease(ask.room, ask.idle, e_.state.generation(),
                                                   e_.state.recrawling(), follows_links_);
                // The generation's URL index is being built: this instance builds it unless another does
                // (nothing is leased meanwhile; the answer's wait says when to ask again).
                if (answer.indexing)
                    co_await build_url_index();
                // Only the generation's hold is left: the wrap-up is due (one instance does it).
                else if (follows_links_ && answer.unfinished == 1 && answer.items.empty() &&
                         e_.queue.unfinished() == 0) {
                    const bool wrapped_up = co_await wrap_up_generation();
                    if (wrapped_up)
                        continue;
                }
            } catch (const redis::connection_lost& e) {
                e_.log(log_level::warning, std::string(e.what()) + ": retrying");
                continue;
            } catch (const redis::unreachable& e) {
                throw e_.gave_up_on_redis(e);
            }
            if (e_.stopping != stop_level::none)
                break;
            controls_latest_ = answer.controls_version;
            e_.state.count_shared_revisits(answer.revisits);
            if (e_.config.continuous && answer.unfinished <= 0) {
                // Continuous: nothing waits or is leased anywhere, and the crawl goes on until stopped. The
                // next revisit is due in due_ms; an instance that joins may commit new roots meanwhile, so a
                // second at most.
                auto wait = std::chrono::milliseconds(1000);
                if (answer.due_ms >= 0)
                    wait = std::min(wait, std::chrono::milliseconds(answer.due_ms));
                co_await (poked_.wait() || pause(std::max(wait, lease_pacing::idle_poll_min)));
                continue;
            }
            auto wait_ms = answer.wait_ms;
            if (answer.due_ms >= 0 && (wait_ms < 0 || answer.due_ms < wait_ms))
                wait_ms = answer.due_ms; // a revisit due before any host is ready
            const std::size_t leased = answer.items.size();
            for (auto& taken : answer.items) {
                // Held here even when the state refuses it (this instance began to stop meanwhile): the stop
                // gives it back with the others (give_back_leases), not after its lease expires.
                leased_ids_.insert(taken.id);
                e_.state.take_leased(taken.id, std::move(taken.item), std::move(taken.before),
                                     std::move(taken.known_outlinks));
            }
            if (leased > 0)
                e_.pump.pump();
            const auto next = pacing.after(ask, leased, answer.unfinished, wait_ms);
            if (next.what == lease_pacing::then::finished)
                break; // every instance sees the same zero
            if (next.what == lease_pacing::then::ask_again)
                continue;
            // A poke during the round trip (a commit written, a stop) is kept by the event: the wait ends at
            // once.
            co_await (poked_.wait() || pause(next.wait));
        }
    } catch (...) {
        e_.fail(std::current_exception());
    }
}

asio::awaitable<void> lease_loop::pause(std::chrono::milliseconds wait) {
    asio::steady_timer timer(e_.executor, wait);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

} // namespace asiocrawl::detail
