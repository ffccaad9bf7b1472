#include "state/crawl_state.hpp"

#include "http/decoder.hpp"
#include "http/fetch_settings.hpp"
#include "state/record_codec.hpp"

#include "html/charset.hpp"
#include "html/links.hpp"
#include "policy/backoff.hpp"
#include "policy/page_directives.hpp"
#include "policy/redirect.hpp"
#include "policy/sitemap.hpp"
#include "url/url.hpp"
#include "util/digest.hpp"
#include "util/human_units.hpp"
#include <asiocrawl/error.hpp>
#include <asiocrawl/version.hpp>

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace asiocrawl::detail {

namespace {

std::vector<boost::urls::url> parse_roots(const crawler_config& config) {
    std::vector<boost::urls::url> roots;
    for (const auto& root : config.roots) {
        auto parsed = parse_root(root);
        if (!parsed)
            throw std::invalid_argument("root \"" + root + "\": " + parsed.error().message());
        roots.push_back(std::move(*parsed));
    }
    return roots;
}

std::vector<std::string> rule_header_lines(const crawler_config& config) {
    std::vector<std::string> out;
    for (const auto& rule : config.hosts) {
        std::string& lines = out.emplace_back();
        for (const auto& text : rule.headers) {
            auto parsed = parse_header_option(text);
            if (!parsed.field)
                throw std::invalid_argument("hosts: " + parsed.problem);
            lines.append(parsed.field->name).append(": ").append(parsed.field->value).append("\r\n");
        }
    }
    return out;
}

bool is_retry_status(const retry_config& retry, int status) {
    return std::find(retry.statuses.begin(), retry.statuses.end(), status) != retry.statuses.end();
}

std::chrono::microseconds micros(std::chrono::steady_clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

} // namespace

std::string_view host_of(std::string_view url) noexcept {
    auto start = url.find("://");
    if (start == std::string_view::npos)
        return {};
    start += 3;
    const auto end = url.find_first_of("/?#", start);
    std::string_view authority = url.substr(start, end == std::string_view::npos ? url.npos : end - start);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        return authority.substr(0, close == std::string_view::npos ? authority.size() : close + 1);
    }
    return authority.substr(0, authority.find(':'));
}

std::string_view origin_of(std::string_view url) noexcept {
    auto start = url.find("://");
    if (start == std::string_view::npos)
        return url;
    const auto end = url.find_first_of("/?#", start + 3);
    return url.substr(0, end);
}

std::size_t crawl_state::effective_window(const crawler_config& config, std::size_t window) noexcept {
    // A host may have min(max_per_host, max_tasks) fetches in flight; a window smaller than twice that
    // starves it: the workers wait for each refill from disk instead of fetching.
    return std::max(window, 2 * std::min(config.politeness.max_per_host, config.max_tasks));
}

crawl_state::crawl_state(const crawler_config& config, hooks h, bool durable, std::size_t window,
                         time_point (*now)(), std::uint64_t seed, wall_clock_type::time_point (*wall_now)())
    : config_(config)
    , hooks_(std::move(h))
    , durable_(durable)
    , now_(now)
    , seed_(seed)
    , wall_now_(wall_now)
    , roots_(parse_roots(config))
    , scope_(roots_, config)
    , rules_(config.hosts)
    , rule_pages_(config.hosts.size(), 0)
    , rule_fields_(rule_header_lines(config))
    , frontier_(config.politeness.max_per_host,
                config.politeness.autothrottle.enabled
                    ? autothrottle(config.politeness.autothrottle, config.politeness.delay).initial()
                    : config.politeness.delay,
                durable ? effective_window(config, window) : 0, now)
    , agent_(config.fetch.user_agent.empty() ? default_user_agent(config.fetch.contact_url)
                                             : config.fetch.user_agent)
    , random_(seed ^ 0x9e3779b97f4a7c15ull) {
    for (const auto& root : roots_)
        root_origins_.emplace(origin_of(root.buffer()));
    if (config.politeness.autothrottle.enabled)
        throttle_.emplace(config.politeness.autothrottle, config.politeness.delay);
    if (config.continuous) {
        schedule_.emplace(settings_of(config.revisit));
        recrawling_ = true; // every record says how the URL compares with its last fetch
    }
    if (config.politeness.random_wait)
        frontier_.set_spread([this](clock_type::duration delay) {
            return std::chrono::duration_cast<clock_type::duration>(
                delay * std::uniform_real_distribution<double>(0.5, 1.5)(random_));
        });
}

// ---- lifecycle ----

void crawl_state::restore(const restored_state& restored) {
    for (std::size_t id = 0; id < restored.hosts.size(); ++id) {
        const auto number = host_number(restored.hosts[id]);
        if (number != id)
            throw std::runtime_error("crawl state: host numbers are not dense");
    }
    batch_.new_hosts.clear(); // they are in the store already
    for (std::size_t id = 0; id < restored.next_seq.size() && id < next_seq_.size(); ++id)
        next_seq_[id] = restored.next_seq[id];
    for (std::size_t id = 0; id < restored.waiting.size() && id < durable_waiting_.size(); ++id)
        durable_waiting_[id] = restored.waiting[id];
    seed_position_ = seed_position::from_text(restored.seed_position);
    // The counters first: whatever happens next, a commit never writes them back smaller.
    if (!restored.counters.empty()) {
        const auto doc = boost::json::parse(restored.counters).as_object();
        for (const auto& [name, value] : doc.at("stats").as_object())
            result_.stats[std::string(name)] = value.to_number<std::uint64_t>();
        result_.done = doc.at("done").to_number<std::size_t>();
        failures_ = doc.at("failures").to_number<std::size_t>();
        robots_denied_ = doc.at("robots_denied").to_number<std::size_t>();
        retries_ = doc.at("retries").to_number<std::size_t>();
        bytes_ = doc.at("bytes").to_number<std::uint64_t>();
        previous_elapsed_ = std::chrono::microseconds(doc.at("elapsed_us").to_number<std::int64_t>());
        result_.runs = doc.at("runs").to_number<std::size_t>();
        result_.started_at = std::chrono::system_clock::time_point(
            std::chrono::microseconds(doc.at("started_at_us").to_number<std::int64_t>()));
        if (const auto* pages = doc.if_contains("pages_admitted")) {
            pages_admitted_ = pages->to_number<std::size_t>();
            pages_admitted_known_ = true;
        }
        if (const auto* controls = doc.if_contains("host_controls"))
            restore_controls(controls->as_object());
        if (const auto* pages = doc.if_contains("rule_pages")) // the rules are part of the crawl definition
            for (std::size_t i = 0; i < pages->as_array().size() && i < rule_pages_.size(); ++i)
                rule_pages_[i] = pages->as_array()[i].to_number<std::size_t>();
    }
    if (!pages_admitted_known_)
        pages_admitted_ = seen_.size(); // a state from before the count was kept: robots.txt included
    for (std::size_t id = 0; id < restored.waiting.size() && id < host_names_.size(); ++id) {
        const auto n = restored.waiting[id];
        if (n == 0)
            continue;
        std::size_t held = 0;
        while (held < n && !stopping_ && hooks_.hold())
            ++held;
        // Stopped while loading: what could not be counted waits for the next run, as the report's todo.
        deferred_ += n - held;
        if (held == 0)
            continue;
        refill_from_[id] = 0;
        frontier_.add_spilled(static_cast<host_id>(id), held);
    }
}

void crawl_state::start() {
    started_ = now_();
    if (config_.max_time.count() > 0)
        deadline_ = started_ + config_.max_time;
    result_.stats.erase("stopped_quota"); // a resumed crawl says why this run stopped, if it did
    result_.stats.erase("stopped_max_time");
    ++result_.runs;
    if (result_.runs == 1)
        result_.started_at = wall_now_();
    result_.max_tasks = config_.max_tasks;
    if (config_.fetch.tls.insecure) {
        result_.stats["tls_insecure"] = 1;
        say(log_level::warning,
            "TLS certificate verification is OFF (insecure): https pages are not authenticated");
    }
    if (config_.robots.obey && !robots_rules::valid_product_token(product_token(agent_)))
        say(log_level::warning,
            "the User-Agent's product token \"" + std::string(product_token(agent_)) +
                "\" is not one robots.txt can name (RFC 9309: letters, '_' and '-' only): only the "
                "\"User-agent: *\" groups apply to this crawl");
    for (const auto& root : roots_)
        admit(root, {}, config_.max_redirect, 0, item_kind::page, false);
    if (std::exchange(admit_known_, false) && !follow_links_)
        admit_known();
    if (follow_links_ && !shared_ && !stopping_ && !wrap_up_hold_)
        wrap_up_hold_ = hooks_.hold(); // the unreached known URLs are reported when the rest is done
    if (schedule_ && !stopping_ && !continuous_hold_)
        continuous_hold_ = hooks_.hold(); // the crawl goes on while revisits are scheduled
    if (!config_.input_file.empty() && !seeds_done_ && !seed_hold_)
        seed_hold_ = hooks_.hold();
    if (config_.sitemaps && !config_.robots.obey) {
        for (const auto& origin : root_origins_)
            queue_sitemaps_of(origin, {});
    }
    counters_changed_ = true;
}

void crawl_state::stop() {
    if (stopping_)
        return;
    stopping_ = true;
    frontier_.clear();
    if (std::exchange(seed_hold_, false))
        hooks_.release(); // no more seeds are read
    if (std::exchange(continuous_hold_, false))
        hooks_.release();
    if (schedule_in_store_)
        say(log_level::info, "continuous: at most ", history_held_peak_, " history entries and ",
            due_window_peak_, " due URLs were held in memory at once (the schedule stays on disk)");
}

// ---- admission ----

void crawl_state::skip(std::string_view reason, std::uint64_t n) {
    if (n == 0)
        return;
    result_.stats["skipped_" + std::string(reason)] += n;
    counters_changed_ = true;
}

host_id crawl_state::host_number(std::string_view host) {
    const auto [it, inserted] =
        host_numbers_.try_emplace(std::string(host), static_cast<host_id>(host_names_.size()));
    if (inserted) {
        host_names_.emplace_back(host);
        next_seq_.push_back(1);
        refill_from_.push_back(0);
        durable_waiting_.push_back(0);
        line_changed_.push_back(false);
        robots_delay_.push_back(clock_type::duration::zero());
        host_done_.push_back(0);
        host_failures_.push_back(0);
        const host_rule* rule = rules_.for_host(host);
        host_rule_.push_back(rule);
        obeys_robots_.push_back(rule && rule->obey_robots ? *rule->obey_robots : config_.robots.obey);
        if (durable_)
            batch_.new_hosts.emplace_back(it->second, it->first);
        if (const auto control = controls_.find(host); control != controls_.end())
            apply_control(it->second, control->second);
        else if (rule && (rule->delay || rule->max_per_host))
            apply_control(it->second, host_control{});
    }
    return it->second;
}

bool crawl_state::admit(const boost::urls::url& url, const std::string& referrer, int redirects_left,
                        int depth, item_kind kind, bool from_sitemap, requisite_kind requisite,
                        bool guessed) {
    return admit(url.buffer(), url_fingerprint(url.buffer(), seed_), referrer, redirects_left, depth, kind,
                 from_sitemap, requisite, guessed);
}

bool crawl_state::admit(std::string_view key, std::uint64_t fp, const std::string& referrer,
                        int redirects_left, int depth, item_kind kind, bool from_sitemap,
                        requisite_kind requisite, bool guessed) {
    // A stopping crawl drops what it finds, unless it is durable: then the URL waits on disk for the next
    // run (a link found by a fetch that finished during the stop is not lost).
    if (stopping_ && !durable_)
        return false;
    if (collecting_ != nullptr) {
        if (collecting_->outlinks.size() < max_outlinks_kept)
            collecting_->outlinks.push_back(outlink_fingerprint(key));
        else
            collecting_->outlinks_overflow = true;
    }
    if (seen_.contains(fp))
        return false;
    // max_pages counts what the crawl was asked for (roots, links, redirect targets, requisites), not the
    // robots.txt and sitemap files it reads on the way.
    const bool counted = kind == item_kind::page || kind == item_kind::requisite;
    if (counted && config_.max_pages && pages_admitted_ >= *config_.max_pages) {
        skip("max_pages");
        remember_kept_out(key, fp, referrer, depth, kind, from_sitemap, requisite);
        return false;
    }
    std::optional<std::size_t> rule;
    if (counted && !rules_.empty()) {
        rule = rules_.index_for_url(key);
        if (rule && config_.hosts[*rule].max_pages && rule_pages_[*rule] >= *config_.hosts[*rule].max_pages) {
            skip("rule_max_pages");
            remember_kept_out(key, fp, referrer, depth, kind, from_sitemap, requisite);
            return false;
        }
    }
    const bool for_next_run = stopping_;
    if (!for_next_run && !shared_ && !hooks_.hold())
        return false;
    seen_.insert(fp);
    if (history_in_store_)
        known_.erase(outlink_fingerprint(key)); // reached: a 304's links need not read its entry again
    if (counted) {
        ++pages_admitted_;
        if (rule)
            ++rule_pages_[*rule];
        counters_changed_ = true;
    }
    work_item item;
    item.url = std::string(key);
    item.referrer = referrer;
    item.redirects_left = redirects_left;
    item.depth = depth;
    item.kind = kind;
    item.from_sitemap = from_sitemap;
    item.requisite = requisite;
    item.guessed = guessed && kind == item_kind::sitemap;
    const host_id host = host_number(host_of(item.url));
    item.seq = next_seq_[host]++;
    if (shared_) {
        // The shared frontier numbers it; seq 0 tells the batch's new URLs from retries of leased ones.
        item.seq = 0;
        batch_.fingerprints.push_back(fp);
        batch_.waiting.push_back({host, 0, encode(item)});
        return true;
    }
    if (durable_) {
        batch_.fingerprints.push_back(fp);
        batch_.waiting.push_back({host, item.seq, encode(item)});
        ++durable_waiting_[host];
        line_changed(host);
    }
    if (for_next_run)
        ++deferred_;
    else
        push_waiting(host, std::move(item));
    return true;
}

bool crawl_state::take_leased(std::uint64_t id, work_item item, std::optional<fetch_history> before,
                              std::vector<std::pair<std::string, fetch_history>> known_outlinks) {
    if (stopping_ || !hooks_.hold())
        return false;
    if (before && recrawling_)
        history_.insert_or_assign(item.url, std::move(*before));
    if (follow_links_ && !known_outlinks.empty())
        leased_outlinks_.insert_or_assign(item.url, std::move(known_outlinks));
    note_held();
    seen_.insert(url_fingerprint(item.url, seed_));
    const host_id host = host_number(host_of(item.url));
    item.seq = id;
    ++durable_waiting_[host];
    push_waiting(host, std::move(item));
    return true;
}

void crawl_state::push_waiting(host_id host, work_item item) {
    const auto seq = item.seq;
    if (!frontier_.push(host, std::move(item), now_()) && frontier_.spilled(host) == 1)
        refill_from_[host] = seq; // the first of a run of spilled URLs: where the next refill reads from
}

bool crawl_state::in_scope(boost::urls::url_view url) {
    const auto verdict = scope_.check(url);
    if (verdict == scope_verdict::in_scope)
        return true;
    skip(to_string(verdict));
    say(log_level::debug, "skip ", url.buffer(), ": ", to_string(verdict));
    return false;
}

// ---- the frontier ----

std::optional<crawl_state::ticket> crawl_state::next() {
    if (stopping_)
        return std::nullopt;
    if (schedule_)
        release_due_revisits();
    const auto now = now_();
    while (auto popped = frontier_.pop(now)) {
        ticket t{std::move(popped->item), std::move(popped->taken), {}, std::nullopt, {}, false, {}, {}};
        if (!obeys_robots_[t.slot.host()] || t.item.kind == item_kind::robots)
            return t;
        const std::string origin(origin_of(t.item.url));
        auto [it, inserted] = robots_.try_emplace(origin);
        auto& state = it->second;
        if (state.status == origin_robots::state::known && now >= state.retry_at)
            state.status = origin_robots::state::unknown; // RFC 9309 2.3.1.4 and 2.4: fetch it again
        switch (state.status) {
        case origin_robots::state::unknown: {
            // robots.txt first: the item waits at the head of its host's line, and the robots.txt fetch
            // takes the slot it was given.
            state.status = origin_robots::state::fetching;
            state.blocked.push_back(popped->host);
            frontier_.unpop(popped->host, std::move(t.item));
            frontier_.block(popped->host);
            if (!hooks_.hold())
                return std::nullopt;
            const auto origin_index = static_cast<std::uint32_t>(origin_names_.size());
            origin_names_.push_back(origin);
            work_item robots;
            robots.url = origin + "/robots.txt";
            robots.redirects_left = config_.robots.max_redirects;
            robots.kind = item_kind::robots;
            robots.robots_for = origin_index;
            // The robots.txt URL is never admitted as a page of its own.
            seen_.insert(url_fingerprint(robots.url, seed_));
            t.item = std::move(robots);
            return t;
        }
        case origin_robots::state::fetching:
            state.blocked.push_back(popped->host);
            frontier_.unpop(popped->host, std::move(t.item));
            frontier_.block(popped->host);
            continue; // the ticket's slot goes back here
        case origin_robots::state::known:
            break;
        }
        if (state.unavailable) {
            deny(std::move(t.item), popped->host,
                 state.unreachable ? state.unreachable : make_error_code(error::robots_unavailable),
                 state.cause);
            continue;
        }
        const auto path = std::string_view(t.item.url).substr(origin.size());
        if (!state.rules.allowed(path.empty() ? std::string_view("/") : path)) {
            deny(std::move(t.item), popped->host, error::robots_denied);
            continue;
        }
        return t;
    }
    return std::nullopt;
}

std::optional<crawl_state::time_point> crawl_state::next_wakeup() const {
    if (stopping_)
        return std::nullopt;
    auto wake = frontier_.next_wakeup(now_());
    std::optional<std::chrono::sys_seconds> first_due;
    if (!due_.empty())
        first_due = due_.begin()->first;
    if (!due_window_.empty())
        first_due = std::chrono::sys_seconds(std::chrono::seconds(due_window_.begin()->first.due));
    if (schedule_ && first_due) {
        // The schedule is in calendar time; the frontier waits on the steady clock.
        const auto until_due =
            std::max(clock_type::duration::zero(),
                     std::chrono::duration_cast<clock_type::duration>(*first_due - wall_now_()));
        const auto due = now_() + until_due;
        if (!wake || due < *wake)
            wake = due;
    }
    if (deadline_ && !budget_spent_ && (!wake || *deadline_ < *wake))
        wake = deadline_; // the loop looks at out_of_budget() when it wakes
    return wake;
}

std::vector<crawl_state::refill_request> crawl_state::take_refills() {
    std::vector<refill_request> out;
    for (const auto& [host, count] : frontier_.take_refills())
        out.push_back({host, refill_from_[host], count});
    return out;
}

void crawl_state::on_refill(host_id host, std::vector<std::pair<std::uint64_t, std::string>> items) {
    std::vector<work_item> decoded;
    decoded.reserve(items.size());
    for (auto& [seq, bytes] : items) {
        auto item = decode_work_item(bytes);
        if (!item)
            throw std::runtime_error("crawl state: a waiting URL of host " + host_names_.at(host) +
                                     " does not decode (corrupt state)");
        item->seq = seq;
        refill_from_[host] = seq + 1;
        decoded.push_back(std::move(*item));
    }
    frontier_.refill(host, std::move(decoded), now_());
}

void crawl_state::deny(work_item item, host_id host, boost::system::error_code why, std::string_view detail) {
    remember_unanswered(item);
    record r;
    r.url = std::move(item.url);
    r.referrer = std::move(item.referrer);
    r.depth = item.depth;
    r.from_sitemap = item.from_sitemap;
    r.requisite = requisite_name(item);
    r.error = why;
    if (why == error::robots_denied)
        ++robots_denied_;
    else
        r.error_detail = detail; // what robots.txt answered, or how its fetch failed, and the tries
    say(log_level::debug, r.url, ": ", error_kind(r.error));
    item.url.clear();
    finished(item, host);
    emit(std::move(r));
    hooks_.release();
}

void crawl_state::write_unanswered(const work_item& item) {
    record unanswered;
    unanswered.url = item.url;
    auto bytes = encode(history_of(unanswered, item, nullptr, generation_));
    // With the history in the store, whether the URL is known is the store's to tell: it writes the entry
    // only where there is none.
    (history_in_store_ ? batch_.history_if_absent : batch_.history).emplace_back(item.url, std::move(bytes));
}

void crawl_state::remember_unanswered(const work_item& item) {
    // Denied without a request (robots.txt): known to the next generation as unanswered, so that it asks
    // again, through a 304 page's links too. A URL the history knows keeps its last answer.
    if (!durable_ || schedule_ || item.kind == item_kind::robots)
        return;
    if (history_in_store_) {
        write_unanswered(item); // if absent
        return;
    }
    if (const auto found = history_.find(item.url); found != history_.end()) {
        forget_known(found); // reached in this generation
        return;
    }
    write_unanswered(item);
}

namespace {
// A budget that keeps out more URLs than this remembers only the first ones: the next generation reaches the
// others through the pages it fetches in full (8 bytes a URL in memory, an entry each in the state).
constexpr std::size_t max_kept_out_remembered = 1'000'000;
} // namespace

void crawl_state::remember_kept_out(std::string_view url, std::uint64_t fp, const std::string& referrer,
                                    int depth, item_kind kind, bool from_sitemap, requisite_kind requisite) {
    // A budget (max_pages) kept the URL out: the next generation must still know it, so that a 304 page's
    // links (which name URLs by fingerprint) lead to it when that generation's budget has room. Known to the
    // history already: it keeps its last answer.
    if (!durable_ || schedule_ || (!history_in_store_ && history_.contains(url)) ||
        kept_out_.size() >= max_kept_out_remembered || !kept_out_.insert(fp))
        return;
    work_item item;
    item.url = std::string(url);
    item.referrer = referrer;
    item.redirects_left = -1; // the config's max_redirect
    item.depth = depth;
    item.kind = kind;
    item.from_sitemap = from_sitemap;
    item.requisite = requisite;
    write_unanswered(item);
}

// ---- records and durability ----

void crawl_state::emit(record r) {
    ++result_.done;
    if (r.failed() && r.error != error::robots_denied && r.error != error::type_rejected)
        ++failures_;
    count_record(result_.stats, r);
    count_for_host(r);
    counters_changed_ = true;
    if (hooks_.emit)
        hooks_.emit(r);
    if (r.failed())
        say(r.error == error::robots_denied || r.error == error::type_rejected ? log_level::debug
                                                                               : log_level::warning,
            r.url, ": ", error_kind(r.error), " (", r.error.message(), r.error_detail.empty() ? "" : ": ",
            r.error_detail, ")");
    else
        say(log_level::debug, r.url, " ", r.status, " ", r.size, " bytes");
    if (!config_.keep_records)
        return;
    if (durable_)
        batch_.records.emplace_back(r.url, encode(r));
    else if (!schedule_) // a continuous crawl never ends: its records are the sinks' to keep
        result_.records.push_back(std::move(r));
}

void crawl_state::finished(const work_item& item, host_id host) {
    if ((history_in_store_ || (shared_ && schedule_)) && !item.url.empty())
        history_.erase(item.url); // whatever ended it, its entry was held for this attempt only
    if (shared_ && !leased_outlinks_.empty() && !item.url.empty())
        leased_outlinks_.erase(item.url);
    if (!durable_ || item.seq == 0)
        return;
    batch_.finished.emplace_back(host, item.seq);
    --durable_waiting_[host];
    line_changed(host);
}

void crawl_state::line_changed(host_id host) {
    if (line_changed_[host])
        return;
    line_changed_[host] = true;
    changed_lines_.push_back(host);
}

state_batch crawl_state::take_batch() {
    if (durable_ && counters_changed_) {
        batch_.counters = counters_json();
        counters_changed_ = false;
    }
    for (const auto host : changed_lines_) {
        batch_.lines.push_back({host, durable_waiting_[host], next_seq_[host]});
        line_changed_[host] = false;
    }
    changed_lines_.clear();
    state_batch out;
    std::swap(out, batch_);
    return out;
}

std::string crawl_state::counters_json() const {
    boost::json::object doc;
    boost::json::object stats;
    for (const auto& [name, value] : result_.stats)
        stats[name] = value;
    doc["stats"] = std::move(stats);
    doc["done"] = result_.done;
    doc["failures"] = failures_;
    doc["robots_denied"] = robots_denied_;
    doc["pages_admitted"] = pages_admitted_;
    doc["retries"] = retries_;
    doc["bytes"] = bytes_;
    doc["elapsed_us"] = (previous_elapsed_ + micros(now_() - started_)).count();
    doc["runs"] = result_.runs;
    doc["started_at_us"] =
        std::chrono::duration_cast<std::chrono::microseconds>(result_.started_at.time_since_epoch()).count();
    if (!controls_.empty())
        doc["host_controls"] = controls_json();
    if (!rule_pages_.empty()) {
        boost::json::array pages;
        for (const auto n : rule_pages_)
            pages.emplace_back(n);
        doc["rule_pages"] = std::move(pages);
    }
    return boost::json::serialize(doc);
}

// ---- re-crawls ----

void crawl_state::set_history(history_map history, std::uint32_t generation, bool new_generation) {
    history_ = std::move(history);
    note_held();
    generation_ = generation;
    recrawling_ = true;
    admit_known_ = new_generation;
    // Links are followed when the history knows them: written by a durable crawl of this version (one entry
    // is enough; an entry whose outlinks overflowed is fetched in full instead, see conditional_basis).
    follow_links_ = durable_ && !shared_ && !schedule_ &&
                    std::any_of(history_.begin(), history_.end(),
                                [](const auto& entry) { return entry.second.outlinks_known; });
    if (follow_links_) {
        known_by_fingerprint_.reserve(history_.size());
        for (const auto& entry : history_)
            known_by_fingerprint_.emplace(outlink_fingerprint(entry.first), entry.first);
    }
    if (schedule_ && !new_generation) {
        // A resumed continuous crawl: what waited for its revisit waits again; what was in the frontier is
        // there again (read back from disk).
        for (const auto& [url, h] : history_)
            if (h.revisit && !h.revisit_queued)
                due_.emplace(h.revisit->due, url);
    }
}

void crawl_state::set_shared_history(std::uint32_t generation, bool follows_links) {
    if (!shared_)
        throw std::logic_error("crawl state: set_shared_history() is for a shared crawl");
    history_.clear();
    generation_ = generation;
    recrawling_ = true;
    admit_known_ = false;
    follow_links_ = follows_links;
}

void crawl_state::set_history_in_store(fingerprint_set known, std::uint32_t generation) {
    if (!durable_ || shared_ || schedule_)
        throw std::logic_error(
            "crawl state: only a local durable one-shot re-crawl keeps its history in the store");
    history_.clear();
    known_by_fingerprint_.clear();
    known_ = std::move(known);
    generation_ = generation;
    recrawling_ = true;
    admit_known_ = false;
    follow_links_ = true;
    history_in_store_ = true;
}

std::vector<std::uint64_t> crawl_state::on_history(ticket& t, std::optional<fetch_history> before) {
    std::vector<std::uint64_t> wanted;
    t.known_outlinks.clear();
    if (schedule_in_store_) {
        // Continuous mode: the URL's last fetch, whatever generation wrote it, with its schedule.
        if (before) {
            history_.insert_or_assign(t.item.url, std::move(*before));
            note_held();
        }
        return wanted;
    }
    if (!before || before->generation >= generation_)
        return wanted; // unknown, or this generation's own entry (an unanswered one): nothing to compare with
    // A 304 needs the entries of the links it stands for that this generation has not admitted yet; only an
    // entry with validators can get one.
    if (before->outlinks_known && (!before->etag.empty() || !before->last_modified.empty()))
        for (const auto fp : before->outlinks)
            if (known_.contains(fp))
                wanted.push_back(fp);
    history_.insert_or_assign(t.item.url, std::move(*before));
    note_held();
    return wanted;
}

void crawl_state::on_known_outlinks(ticket& t, std::vector<std::pair<std::string, fetch_history>> known) {
    t.known_outlinks.clear();
    for (auto& entry : known)
        if (entry.second.generation < generation_ && entry.second.kind != item_kind::robots)
            t.known_outlinks.push_back(std::move(entry));
}

const fetch_history* crawl_state::previous(std::string_view url) const {
    const auto found = history_.find(url);
    return found == history_.end() ? nullptr : &found->second;
}

const fetch_history* crawl_state::conditional_basis(std::string_view url) const {
    const auto* before = previous(url);
    if (before != nullptr && follow_links_ && !before->outlinks_known)
        return nullptr;
    return before;
}

void crawl_state::forget_known(history_map::iterator entry) {
    if (follow_links_ && !history_in_store_)
        known_by_fingerprint_.erase(outlink_fingerprint(entry->first));
    history_.erase(entry);
}

void crawl_state::replay_outlinks(ticket& t, const fetch_history& before, record& r) {
    // A 304 stands for the stored response (RFC 9110 15.4.5), links included: the URLs it led to last time
    // are admitted again as they were, from this page. Those fetched already in this generation are seen.
    std::size_t in_scope_links = 0;
    auto replay = [&](std::string_view url_text, const fetch_history& h) {
        auto url = boost::urls::parse_uri(url_text);
        if (!url || h.kind == item_kind::robots)
            return;
        if (h.kind == item_kind::page && !in_scope(*url))
            return;
        const int depth = h.kind == item_kind::sitemap ? h.depth : t.item.depth + 1;
        if (h.kind == item_kind::page && config_.max_depth && depth > *config_.max_depth) {
            skip("max_depth");
            return;
        }
        if (h.kind == item_kind::page)
            ++in_scope_links;
        if (admit(*url, t.item.url, config_.max_redirect, depth, h.kind, h.from_sitemap, h.requisite) &&
            h.kind == item_kind::page)
            ++r.num_new_urls;
    };
    if (history_in_store_) {
        // Read from the store with the ticket's own entry (on_known_outlinks): the links not admitted then.
        for (const auto& [url, h] : t.known_outlinks)
            replay(url, h);
        t.known_outlinks = {};
    } else if (shared_) {
        // Leased with the URL (shared_store::lease): its links the crawl had not admitted then.
        if (const auto found = leased_outlinks_.find(t.item.url); found != leased_outlinks_.end()) {
            for (const auto& [url, h] : found->second)
                replay(url, h);
            leased_outlinks_.erase(found);
        }
    } else {
        for (const auto fp : before.outlinks) {
            const auto known = known_by_fingerprint_.find(fp);
            if (known == known_by_fingerprint_.end())
                continue; // fetched in this generation already, or never fetched (robots.txt, a budget)
            const auto found = history_.find(known->second);
            if (found != history_.end())
                replay(found->first, found->second);
        }
    }
    r.num_urls = in_scope_links;
}

bool crawl_state::wants_wrap_up(std::size_t unfinished) const noexcept {
    return wrap_up_hold_ && !stopping_ && !seed_hold_ && unfinished == 1;
}

void crawl_state::wrap_up_generation() {
    if (history_in_store_)
        return; // the loop reads what was not fetched from the store, for the overload below
    std::vector<std::pair<std::string_view, const fetch_history*>> unreached;
    for (const auto& [url, h] : history_)
        if (unreached_now(url, h))
            unreached.emplace_back(url, &h);
    std::sort(unreached.begin(), unreached.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    report_unreached(std::move(unreached));
}

void crawl_state::wrap_up_generation(std::vector<std::pair<std::string, fetch_history>> not_fetched) {
    std::vector<std::pair<std::string_view, const fetch_history*>> unreached;
    for (const auto& [url, h] : not_fetched)
        if (h.generation < generation_ && unreached_now(url, h))
            unreached.emplace_back(url, &h);
    report_unreached(std::move(unreached)); // in URL order: the store's key order
}

bool crawl_state::unreached_now(std::string_view url, const fetch_history& h) const {
    return h.kind != item_kind::robots && !seen_.contains(url_fingerprint(url, seed_));
}

void crawl_state::report_gone(std::string_view url, const fetch_history& h) {
    record r;
    r.url = std::string(url);
    r.referrer = h.referrer;
    r.depth = h.depth;
    r.from_sitemap = h.from_sitemap;
    if (h.kind == item_kind::requisite)
        r.requisite = std::string(requisite_kind_name(h.requisite));
    r.change = change_kind::gone; // status 0, tries 0: not requested, no page leads to it
    if (durable_)
        batch_.history.emplace_back(r.url, std::string()); // forgotten: reported once
    emit(std::move(r));
}

void crawl_state::report_gone_shared(const std::vector<std::pair<std::string, fetch_history>>& unreached) {
    for (const auto& [url, h] : unreached)
        report_gone(url, h);
}

bool unreached_are_gone(const counters& stats) {
    const auto skipped = stats.find("skipped_max_pages");
    return skipped == stats.end() || skipped->second == 0;
}

bool crawl_state::wrap_up_reports_gone() const {
    return unreached_are_gone(result_.stats);
}

void crawl_state::report_unreached(std::vector<std::pair<std::string_view, const fetch_history*>> unreached) {
    if (!std::exchange(wrap_up_hold_, false))
        return;
    if (!wrap_up_reports_gone()) {
        say(log_level::info, "re-crawl, generation ", generation_,
            ": max_pages skipped URLs, so the known URLs not reached are not reported gone");
    } else {
        for (const auto& [url, entry] : unreached)
            report_gone(url, *entry);
        if (!unreached.empty())
            say(log_level::info, "re-crawl, generation ", generation_, ": ", unreached.size(),
                " known URLs no page links to any more, reported gone");
        ++result_.stats["generation_complete"];
    }
    say(log_level::info, "re-crawl, generation ", generation_, ": at most ", history_held_peak_,
        " history entries were held in memory at once",
        history_in_store_ ? " (the rest stayed on disk)" : "");
    history_.clear();
    known_by_fingerprint_.clear();
    known_ = fingerprint_set{};
    counters_changed_ = true;
    hooks_.release();
}

void crawl_state::admit_known() {
    const auto admitted = admit_known_from(history_);
    say(log_level::info, "re-crawl, generation ", generation_, ": ", admitted, " known URLs to fetch again");
}

std::size_t crawl_state::admit_known_from(const history_map& known_urls) {
    // Shallow URLs first, as the crawl that found them went: a budget (max_pages) keeps the same pages.
    std::vector<const history_map::value_type*> known;
    known.reserve(known_urls.size());
    for (const auto& entry : known_urls)
        known.push_back(&entry);
    std::sort(known.begin(), known.end(), [](const auto* a, const auto* b) {
        return std::tie(a->second.depth, a->first) < std::tie(b->second.depth, b->first);
    });
    std::size_t admitted = 0;
    for (const auto* entry : known) {
        const auto& [url_text, h] = *entry;
        if (h.kind == item_kind::robots)
            continue;
        auto url = boost::urls::parse_uri(url_text);
        if (!url || (h.kind != item_kind::requisite && !in_scope(*url)))
            continue;
        if (admit(*url, h.referrer, h.redirects_left >= 0 ? h.redirects_left : config_.max_redirect, h.depth,
                  h.kind, h.from_sitemap, h.requisite))
            ++admitted;
    }
    return admitted;
}

void crawl_state::compare_with_history(ticket& t, record& r) {
    const auto found = recrawling_ ? history_.find(r.url) : history_.end();
    const fetch_history* before = found == history_.end() ? nullptr : &found->second;
    if (recrawling_) {
        r.change = compare(before, r);
        const bool same_payload = r.change == change_kind::unchanged && r.status >= 200 && r.status < 300 &&
                                  !r.payload_digest.empty() && r.payload_digest == before->payload_digest;
        if (before != nullptr && before->captured_at_us != 0 && (r.not_modified || same_payload))
            t.revisit = ticket::earlier_capture{
                r.not_modified,
                wall_clock_type::time_point(std::chrono::microseconds(before->captured_at_us)),
                before->archived_payload_digest(), capture_record_id(before->capture_id)};
    }
    if (schedule_) {
        // Continuous mode: the URL's last fetch stays known, with when it is due again.
        fetch_history after;
        if (r.status == 0 && before != nullptr)
            after = *before; // no answer: the validators and payload of the last one still stand
        else
            after = history_of(r, t.item, before, generation_);
        schedule_revisit(r, before, after);
        if (r.status != 0)
            name_capture(t, before, after);
        if (durable_)
            batch_.history.emplace_back(r.url, encode(after));
        if (shared_) {
            // The schedule is Redis's: the batch says when the URL is due and how to queue it then.
            if (after.revisit) {
                work_item item = revisit_item(after);
                item.url = r.url;
                batch_.shared_due.push_back({r.url,
                                             std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 after.revisit->due.time_since_epoch())
                                                 .count(),
                                             std::string(host_of(r.url)), encode(item)});
            }
            if (found != history_.end())
                history_.erase(found);
            return;
        }
        if (schedule_in_store_) {
            index_due(r.url, before, after); // the entry itself goes with the record (finished())
            return;
        }
        history_.insert_or_assign(r.url, std::move(after));
        note_held();
        return;
    }
    // No answer says nothing about a URL the history knows, which keeps its last answer. One it does not know
    // becomes known as unanswered (status 0): the next generation asks again, through a 304 page's links too.
    if (durable_ && (r.status != 0 || before == nullptr)) {
        auto after = history_of(r, t.item, before, generation_);
        if (r.not_modified && before != nullptr) {
            after.outlinks = before->outlinks; // followed again from the history
            after.outlinks_known = before->outlinks_known;
        } else {
            after.outlinks = std::move(t.outlinks);
            after.outlinks_known = !t.outlinks_overflow;
        }
        if (r.status != 0)
            name_capture(t, before, after);
        batch_.history.emplace_back(r.url, encode(after));
    }
    if (found != history_.end())
        forget_known(found); // fetched in this generation: its entry is in the batch
}

void crawl_state::place_captures(state_batch& batch, const std::vector<archived_capture>& archived) {
    if (archived.empty())
        return;
    std::unordered_map<std::string_view, const archived_capture*> by_url;
    by_url.reserve(archived.size());
    for (const auto& a : archived)
        by_url[a.url] = &a;
    for (auto& [url, bytes] : batch.history) {
        const auto found = by_url.find(url);
        if (bytes.empty() || found == by_url.end())
            continue;
        auto entry = decode_fetch_history(bytes);
        if (!entry || !entry->place(*found->second))
            continue;
        bytes = encode(*entry);
        if (schedule_) // continuous mode: the next fetch keeps the place from the entry in memory
            if (const auto kept = history_.find(url); kept != history_.end())
                kept->second.place(*found->second);
    }
}

void crawl_state::name_capture(ticket& t, const fetch_history* before, fetch_history& after) {
    // A revisit refers to the capture it repeats; anything else is archived in full under a new id, which the
    // history keeps for the next generation's revisits (WARC-Refers-To).
    if (t.revisit) {
        after.capture_id = before != nullptr ? before->capture_id : std::string();
        return;
    }
    after.capture_id = new_capture_id();
    t.capture_record_id = capture_record_id(after.capture_id);
}

std::chrono::sys_seconds crawl_state::wall_seconds() const {
    return std::chrono::floor<std::chrono::seconds>(wall_now_());
}

void crawl_state::schedule_revisit(const record& r, const fetch_history* before, fetch_history& after) {
    revisit_change found = revisit_change::failed;
    switch (r.change) {
    case change_kind::added:
        found = revisit_change::added;
        break;
    case change_kind::changed:
        found = revisit_change::changed;
        break;
    case change_kind::unchanged:
        found = revisit_change::unchanged;
        break;
    case change_kind::gone:
        found = revisit_change::gone;
        break;
    case change_kind::none:
        break;
    }
    // A server error or a failure says nothing about the page: the schedule backs off without adapting.
    if (r.status == 0 || r.status >= 500 || (r.failed() && found != revisit_change::gone))
        found = revisit_change::failed;
    std::optional<revisit_entry> previous;
    if (before != nullptr)
        previous = before->revisit;
    sitemap_hints hints;
    if (const auto listed = sitemap_hints_.find(r.url); listed != sitemap_hints_.end()) {
        hints = listed->second; // read once: after its first interval the page's own changes count
        sitemap_hints_.erase(listed);
    }
    const auto entry = schedule_->next_visit(previous, found, hints, wall_seconds());
    after.revisit = entry;
    after.revisit_queued = false;
    if (!schedule_in_store_ && !shared_)
        due_.emplace(entry.due, r.url);
}

void crawl_state::apply_sitemap_hints(std::string_view url, const sitemap_hints& hints) {
    // A <lastmod> after the last visit makes a known URL due now (never sooner than revisit.min after it); a
    // <changefreq> gives a URL not fetched yet its first interval.
    // With the schedule in the store, the entries in memory are those being fetched: a <lastmod> waits for
    // the committer to read the URL's entry (take_hint_read); a changefreq is kept as a new URL's would be
    // (a known URL's is ignored when it is visited). With the schedule in Redis (a shared crawl) a <lastmod>
    // of a known URL is not read (docs/RECRAWL.md, "Not done yet"); a changefreq waits in the memory of the
    // instance that read the sitemap, and applies when that instance fetches the URL.
    constexpr std::size_t max_pending_hints = 100'000;
    if (schedule_in_store_ && hints.lastmod) {
        if (lastmod_hints_.size() < max_pending_hints || lastmod_hints_.contains(url))
            lastmod_hints_.insert_or_assign(std::string(url), hints);
        else
            ++result_.stats["revisit_hints_dropped"];
    }
    const auto found = schedule_in_store_ || shared_ ? history_.end() : history_.find(url);
    if ((found == history_.end() || !found->second.revisit) && hints.changefreq) {
        // Not fetched yet: its changefreq gives its first interval. Bounded: a URL the crawl never fetches
        // (out of scope, over a budget) keeps its entry, so past the bound new hints are dropped.
        if (sitemap_hints_.size() < max_pending_hints || sitemap_hints_.contains(url))
            sitemap_hints_.insert_or_assign(std::string(url), hints);
        else
            ++result_.stats["revisit_hints_dropped"];
        return;
    }
    if (found == history_.end() || !found->second.revisit || found->second.revisit_queued || !hints.lastmod)
        return;
    auto& entry = *found->second.revisit;
    const auto hinted = schedule_->with_sitemap_hints(entry, hints, wall_seconds());
    if (hinted.due == entry.due)
        return;
    entry = hinted;
    due_.emplace(entry.due, found->first);
    if (durable_)
        batch_.history.emplace_back(found->first, encode(found->second));
    ++result_.stats["revisits_hinted"];
}

void crawl_state::release_due_revisits() {
    if (schedule_in_store_) {
        release_due_from_window();
        return;
    }
    const auto now = wall_seconds();
    while (!due_.empty() && due_.begin()->first <= now && !stopping_) {
        auto node = due_.extract(due_.begin());
        const auto found = history_.find(node.mapped());
        if (found == history_.end())
            continue;
        auto& h = found->second;
        if (!h.revisit || h.revisit->due != node.key() || h.revisit_queued)
            continue; // stale: the URL was scheduled again since
        if (!hooks_.hold())
            return;
        work_item item = revisit_item(h);
        item.url = found->first;
        const host_id host = host_number(host_of(item.url));
        item.seq = next_seq_[host]++;
        h.revisit_queued = true;
        if (durable_) {
            batch_.waiting.push_back({host, item.seq, encode(item)});
            ++durable_waiting_[host];
            line_changed(host);
            batch_.history.emplace_back(item.url, encode(h));
        }
        ++result_.stats["revisits"];
        counters_changed_ = true;
        push_waiting(host, std::move(item));
    }
}

void crawl_state::count_shared_revisits(std::size_t n) {
    if (n == 0)
        return;
    result_.stats["revisits"] += n;
    counters_changed_ = true;
}

work_item crawl_state::revisit_item(const fetch_history& h) const {
    work_item item;
    item.referrer = h.referrer;
    item.redirects_left = h.redirects_left >= 0 ? h.redirects_left : config_.max_redirect;
    item.depth = h.depth;
    item.kind = h.kind;
    item.from_sitemap = h.from_sitemap;
    item.requisite = h.requisite;
    return item;
}

// ---- continuous mode with the schedule in the store ----

void crawl_state::set_schedule_in_store(std::uint32_t generation, std::size_t window) {
    if (!durable_ || shared_ || !schedule_)
        throw std::logic_error(
            "crawl state: only a local durable continuous crawl keeps its schedule in the store");
    history_.clear();
    due_.clear();
    generation_ = generation;
    recrawling_ = true;
    history_in_store_ = true; // each ticket's entry is read before it is fetched, dropped with its record
    schedule_in_store_ = true;
    due_window_limit_ = std::max<std::size_t>(window, 2);
    due_horizon_ = due_key{std::numeric_limits<std::int64_t>::min(), {}}; // nothing read yet
}

std::optional<crawl_state::due_read> crawl_state::take_due_read() {
    if (!schedule_in_store_ || due_read_from_ || stopping_ || !due_horizon_ ||
        due_window_.size() > due_window_limit_ / 2)
        return std::nullopt;
    due_read_from_ = *due_horizon_;
    due_horizon_lowered_ = false;
    due_read_count_ = due_window_limit_ - due_window_.size();
    return due_read{*due_horizon_, due_read_count_};
}

void crawl_state::on_due_read(std::vector<std::pair<due_key, std::optional<fetch_history>>> rows) {
    if (!due_read_from_)
        return;
    due_read_from_.reset();
    auto changed_meanwhile = std::exchange(due_changed_in_read_, {});
    if (std::exchange(due_horizon_lowered_, false))
        return; // the window dropped keys meanwhile: the next read goes on from its lower horizon
    std::optional<due_key> horizon;
    if (rows.size() >= due_read_count_ && !rows.empty())
        horizon = due_key_after(rows.back().first);
    std::map<due_key, work_item> found;
    for (auto& [key, entry] : rows) {
        if (entry)
            found.emplace(key, revisit_item(*entry));
        else
            batch_.due.push_back({key, false}); // the URL was forgotten: its key goes too
    }
    // What the state scheduled or unscheduled past the old horizon after the read was taken: newer than
    // what the read saw.
    for (auto& [key, item] : changed_meanwhile) {
        if (item)
            found.insert_or_assign(std::move(key), std::move(*item));
        else
            found.erase(key);
    }
    due_horizon_ = std::move(horizon);
    for (auto& [key, item] : found) {
        if (due_horizon_ && key >= *due_horizon_)
            break;
        window_insert(key, std::move(item));
    }
}

std::vector<std::string> crawl_state::take_hint_read() {
    std::vector<std::string> urls;
    if (!schedule_in_store_ || stopping_ || !lastmod_reading_.empty() || lastmod_hints_.empty())
        return urls;
    lastmod_reading_.assign(std::make_move_iterator(lastmod_hints_.begin()),
                            std::make_move_iterator(lastmod_hints_.end()));
    lastmod_hints_.clear();
    urls.reserve(lastmod_reading_.size());
    for (const auto& [url, hints] : lastmod_reading_)
        urls.push_back(url);
    return urls;
}

void crawl_state::on_hint_read(std::vector<std::optional<fetch_history>> entries) {
    auto reading = std::exchange(lastmod_reading_, {});
    auto touched = std::exchange(touched_in_hint_read_, {});
    for (std::size_t i = 0; i < reading.size() && i < entries.size(); ++i) {
        const auto& url = reading[i].first;
        auto& before = entries[i];
        // Not known, never scheduled, or being fetched (its record schedules it), or scheduled or queued
        // since the read was taken (the entry read is not the latest).
        if (!before || !before->revisit || history_.contains(url) || touched.contains(url))
            continue;
        // Queued already: keys below the horizon are all in the window until they are released.
        const due_key key{before->revisit->due.time_since_epoch().count(), url};
        if ((!due_horizon_ || key < *due_horizon_) && !due_window_.contains(key))
            continue;
        const auto hinted =
            schedule_->with_sitemap_hints(*before->revisit, reading[i].second, wall_seconds());
        if (hinted.due == before->revisit->due)
            continue;
        fetch_history after = *before;
        after.revisit = hinted;
        index_due(url, &*before, after);
        batch_.history.emplace_back(url, encode(after));
        ++result_.stats["revisits_hinted"];
        counters_changed_ = true;
    }
}

void crawl_state::window_insert(due_key key, work_item item) {
    due_window_.insert_or_assign(std::move(key), std::move(item));
    while (due_window_.size() > due_window_limit_) {
        // The last keys wait on disk only; the horizon comes down to the first of them.
        auto last = std::prev(due_window_.end());
        due_horizon_ = last->first;
        due_window_.erase(last);
        if (due_read_from_)
            due_horizon_lowered_ = true;
    }
    due_window_peak_ = std::max(due_window_peak_, due_window_.size());
}

void crawl_state::index_due(const std::string& url, const fetch_history* before, const fetch_history& after) {
    // The key the URL had goes (released already, or scheduled again early); the new one is written with the
    // entry, and is in the window when it falls below the horizon.
    if (!lastmod_reading_.empty())
        touched_in_hint_read_.insert(url);
    auto change = [&](due_key key, std::optional<work_item> item) {
        batch_.due.push_back({key, item.has_value()});
        if (!due_horizon_ || key < *due_horizon_) {
            if (item)
                window_insert(std::move(key), std::move(*item));
            else
                due_window_.erase(key);
        } else if (due_read_from_) {
            due_changed_in_read_.emplace_back(std::move(key), std::move(item));
        }
    };
    if (before != nullptr && before->revisit)
        change(due_key{before->revisit->due.time_since_epoch().count(), url}, std::nullopt);
    if (after.revisit)
        change(due_key{after.revisit->due.time_since_epoch().count(), url}, revisit_item(after));
}

void crawl_state::release_due_from_window() {
    const auto now = wall_seconds().time_since_epoch().count();
    while (!due_window_.empty() && due_window_.begin()->first.due <= now && !stopping_) {
        if (!hooks_.hold())
            return;
        auto node = due_window_.extract(due_window_.begin());
        work_item item = std::move(node.mapped());
        item.url = node.key().url;
        if (!lastmod_reading_.empty())
            touched_in_hint_read_.insert(item.url);
        const host_id host = host_number(host_of(item.url));
        item.seq = next_seq_[host]++;
        // Queued: it waits in the frontier now, and its key leaves the index in the same commit, so that a
        // resume finds it in one place only.
        batch_.waiting.push_back({host, item.seq, encode(item)});
        ++durable_waiting_[host];
        line_changed(host);
        batch_.due.push_back({std::move(node.key()), false});
        ++result_.stats["revisits"];
        counters_changed_ = true;
        push_waiting(host, std::move(item));
    }
}

// ---- one attempt ----

std::int64_t crawl_state::micros_since_start() const {
    return micros(now_() - started_).count();
}

bool crawl_state::begin_attempt(ticket& t) {
    if (!boost::urls::parse_uri(t.item.url)) {
        record r;
        r.url = t.item.url;
        r.referrer = t.item.referrer;
        r.depth = t.item.depth;
        r.requisite = requisite_name(t.item);
        r.error = error::invalid_url;
        finished(t.item, t.slot.host());
        emit(std::move(r));
        return false;
    }
    if (t.item.first_started_us < 0)
        t.item.first_started_us = micros_since_start();
    ++t.item.tries;
    return true;
}

void crawl_state::fetch_started(ticket& t, bool request_now) {
    ++in_flight_;
    t.started_at = now_();
    if (request_now)
        t.slot.started();
}

void crawl_state::fetch_finished(ticket& t) {
    --in_flight_;
    t.slot.release();
}

bool crawl_state::retry_later(ticket& t, const fetch_outcome& response) {
    const bool retryable =
        response.error ? response.retryable : is_retry_status(config_.retry, response.status);
    if (!retryable || t.item.tries >= config_.max_tries || (stopping_ && !durable_))
        return false;
    const host_id host = t.slot.host();
    if (stopping_) {
        // The next run makes the next attempt.
        if (t.item.seq == 0)
            return false;
        batch_.waiting.push_back({host, t.item.seq, encode(t.item)});
        ++deferred_;
        return true;
    }
    const double random01 = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
    const auto wait = retry_wait(config_.retry, t.item.tries, response.retry_after, wall_now_(), random01);
    if (!hooks_.hold())
        return false;
    ++retries_;
    ++result_.stats["retries"];
    counters_changed_ = true;
    say(log_level::info, t.item.url, ": attempt ", t.item.tries, " ",
        response.error ? std::string(error_kind(response.error)) : std::to_string(response.status),
        ", retrying in ", human_duration(std::chrono::duration_cast<std::chrono::milliseconds>(wait)));
    if (durable_ && t.item.seq != 0)
        batch_.waiting.push_back({host, t.item.seq, encode(t.item)}); // the attempts made so far survive
    if (history_in_store_)
        history_.erase(t.item.url); // read again when the next attempt comes up
    // A copy: the worker still names the item until it is done with it.
    frontier_.push_later(host, work_item(t.item), now_() + wait, t.item.kind == item_kind::robots);
    return true;
}

crawl_state::next_step crawl_state::on_response(ticket& t, const fetch_outcome& response, record& r) {
    bytes_ += response.body_bytes;
    counters_changed_ = true;
    if (throttle_ && t.started_at != time_point{}) {
        const bool ok = !response.error && response.status >= 200 && response.status < 400;
        frontier_.reset_delay(t.slot.host(), throttle_->observe(t.slot.host(), now_() - t.started_at, ok),
                              now_());
    }
    if (retry_later(t, response))
        return next_step::done;
    if (t.item.kind == item_kind::robots) {
        robots_fetched(t, response);
        return next_step::done;
    }

    r.url = t.item.url;
    r.referrer = t.item.referrer;
    r.depth = t.item.depth;
    r.from_sitemap = t.item.from_sitemap;
    r.requisite = requisite_name(t.item);
    r.started = std::chrono::microseconds(t.item.first_started_us);
    r.elapsed = std::chrono::microseconds(micros_since_start() - t.item.first_started_us);
    r.tries = t.item.tries;
    r.status = response.status;
    r.size = response.body_bytes;
    r.content_type = response.media_type;
    const bool html = is_html_media_type(r.content_type);
    auto charset = detect_charset(response.charset, response.body, html);
    r.charset = std::move(charset.charset);
    r.charset_source = std::move(charset.source);
    r.etag = response.etag;
    r.protocol = std::string(response.protocol);
    r.last_modified = response.last_modified;
    r.fetched_at = response.sent_at;
    if (response.error) {
        r.error = response.error;
        r.error_detail = std::string(response.error_detail);
        complete(t, std::move(r));
        return next_step::done;
    }
    if (is_retry_status(config_.retry, r.status)) {
        r.error = error::retry_limit; // still a retry status (429, 503...) after max_tries attempts
        complete(t, std::move(r));
        return next_step::done;
    }
    if (r.status == 304 && recrawling_) {
        // The answer to the conditional request the worker made from this URL's history (RFC 9110 15.4.5).
        if (const auto* before = previous(r.url);
            before != nullptr && (!before->etag.empty() || !before->last_modified.empty())) {
            r.not_modified = true;
            if (follow_links_)
                replay_outlinks(t, *before, r);
            complete(t, std::move(r));
            return next_step::done;
        }
    }
    if (is_redirect_status(r.status)) {
        follow_redirect(t, response, r);
        complete(t, std::move(r));
        return next_step::done;
    }
    if (t.item.kind == item_kind::sitemap && t.item.guessed && (r.status == 404 || r.status == 410)) {
        // /sitemap.xml was only a guess: a site without one has no broken link. Counted, no record.
        ++result_.stats["sitemaps_absent"];
        counters_changed_ = true;
        say(log_level::info, r.url, ": ", r.status, ": no sitemap (a guess, named by no robots.txt)");
        finished(t.item, t.slot.host());
        return next_step::done;
    }
    if (t.item.kind == item_kind::page)
        read_page_headers(response, r);
    const bool success = r.status >= 200 && r.status < 300;
    // Error pages too: a re-crawl compares them. Not computed when neither the records' reader nor a
    // fetch history wants it (crawler_config::payload_digests).
    if (!response.body.empty() && (config_.payload_digests || durable_ || recrawling_ || schedule_))
        r.payload_digest = sha1_base32(response.body);
    if (t.item.kind == item_kind::sitemap) {
        if (success)
            queue_sitemap(t, response, r);
        return next_step::record_ready;
    }
    if (t.item.kind == item_kind::requisite) {
        if (success)
            read_stylesheet(t, response, r);
        return next_step::record_ready; // a requisite is not read for links
    }
    if (html && success)
        return next_step::parse_page;
    return next_step::record_ready;
}

void crawl_state::complete(ticket& t, record&& r) {
    if (t.item.kind != item_kind::robots)
        compare_with_history(t, r);
    finished(t.item, t.slot.host());
    emit(std::move(r));
}

void crawl_state::finish(ticket& t, record&& r) {
    complete(t, std::move(r));
}

void crawl_state::read_page_headers(const fetch_outcome& response, record& r) {
    const robots_directives said = parse_x_robots_tag(response.x_robots_tag, product_token(agent_));
    r.noindex = said.noindex;
    r.nofollow = said.nofollow;
    if (const auto target = canonical_link_target(response.link)) {
        // Resolved against the URL requested, as a Link header's reference is (RFC 8288 3.2).
        if (auto canonical = normalize_reference(boost::urls::parse_uri(r.url).value(), *target))
            r.canonical = std::string(canonical->buffer());
    }
}

void crawl_state::on_links(ticket& t, record& r, const resolved_links& links) {
    const collect_outlinks collect(*this, t);
    skip("not_http", links.not_http);
    skip("invalid_url", links.invalid);
    skip("rel_nofollow", links.rel_nofollow);
    r.noindex = r.noindex || links.meta_robots.noindex;
    r.nofollow = r.nofollow || links.meta_robots.nofollow;
    if (links.canonical)
        r.canonical = std::string(links.canonical->buffer()); // the page's own word over its header's
    if (links.parser_gave_up) {
        ++result_.stats["html_parser_gave_up"];
        say(log_level::warning, t.item.url, ": the HTML parser gave up on this page (no links taken)");
    }
    if (r.nofollow && obeys_robots_[t.slot.host()]) {
        // The page asks that its links not be followed; its requisites are part of the page, not links.
        std::unordered_set<std::string_view> distinct;
        for (const auto& link : links.urls)
            distinct.emplace(link);
        skip("nofollow", distinct.size());
        say(log_level::debug, t.item.url, ": nofollow: ", distinct.size(), " links not followed");
    } else {
        if (links.over_page_cap > 0) {
            result_.stats["skipped_links_over_page_cap"] += links.over_page_cap;
            r.links_dropped = links.over_page_cap;
            say(log_level::warning, t.item.url, ": ", links.over_page_cap, " links past the first ",
                config_.traps.max_links_per_page, " ignored (traps.max_links_per_page)");
        }
        admit_page_links(links.urls, t.item.url, t.item.depth + 1, r);
    }
    if (config_.requisites.enabled)
        admit_requisites(links.requisites, t.item);
}

void crawl_state::admit_links(const std::vector<boost::urls::url>& urls, const std::string& referrer,
                              int depth, bool from_sitemap, record& r) {
    std::unordered_set<std::string_view> on_page;
    for (const auto& link : urls) {
        if (on_page.contains(link.buffer()))
            continue;
        if (!in_scope(link))
            continue;
        if (config_.max_depth && depth > *config_.max_depth) {
            skip("max_depth");
            continue;
        }
        on_page.emplace(link.buffer());
        if (admit(link, referrer, config_.max_redirect, depth, item_kind::page, from_sitemap))
            ++r.num_new_urls;
    }
    r.num_urls = on_page.size();
}

void crawl_state::admit_page_links(const std::vector<std::string>& urls, const std::string& referrer,
                                   int depth, record& r) {
    // admit_links() on fingerprints: the page's links counted once each, a link whose scope is known skips
    // the scope check, and the check reads the text without a parse (Boost.URL's costs more than the rest of
    // the link's way here).
    fingerprint_set on_page;
    on_page.reserve(2 *
                    urls.size()); // sized to the page: no growth, and no 1,024 slots for a page of 3 links
    for (const auto& text : urls) {
        const auto fp = url_fingerprint(text, seed_);
        if (on_page.contains(fp))
            continue;
        if (!in_scope_memo_.contains(fp)) {
            const auto verdict = scope_.check_text(text);
            if (!verdict) {
                skip("invalid_url");
                continue;
            }
            if (*verdict != scope_verdict::in_scope) {
                skip(to_string(*verdict));
                say(log_level::debug, "skip ", text, ": ", to_string(*verdict));
                continue;
            }
            in_scope_memo_.insert(fp);
        }
        if (config_.max_depth && depth > *config_.max_depth) {
            skip("max_depth");
            continue;
        }
        on_page.insert(fp);
        if (admit(std::string_view(text), fp, referrer, config_.max_redirect, depth, item_kind::page, false))
            ++r.num_new_urls;
    }
    r.num_urls = on_page.size();
}

void crawl_state::follow_redirect(ticket& t, const fetch_outcome& response, record& r) {
    const auto url = boost::urls::parse_uri(t.item.url).value(); // checked by begin_attempt
    auto decision = decide_redirect(url, response.location, t.item.redirects_left);
    if (decision.target)
        r.next_url = decision.target->buffer();
    if (decision.error) {
        r.error = decision.error;
        return;
    }
    // A redirect is not a link hop: the target keeps the depth of the URL that redirected.
    if (t.item.kind == item_kind::requisite ? !requisite_in_scope(*decision.target, url)
                                            : !in_scope(*decision.target)) {
        if (t.item.depth == 0 && t.item.kind == item_kind::page)
            say(log_level::warning, t.item.url, ": a root redirects out of scope, to ", r.next_url,
                ": nothing is crawled from there");
        return;
    }
    if (decision.downgrade)
        note_downgrade(t.item.url, r.next_url);
    r.num_urls = 1;
    if (admit(*decision.target, t.item.url, t.item.redirects_left - 1, t.item.depth, t.item.kind,
              t.item.from_sitemap, t.item.requisite, t.item.guessed))
        r.num_new_urls = 1;
}

void crawl_state::note_downgrade(std::string_view from, std::string_view to) {
    // A hostile site can make endless pairs of origins (one per subdomain): the warnings are bounded.
    constexpr std::size_t max_downgrade_warnings = 100;
    ++result_.stats["redirect_downgrades"];
    counters_changed_ = true;
    if (downgrades_warned_.size() > max_downgrade_warnings)
        return;
    std::string pair(origin_of(from));
    pair.append(" -> ").append(origin_of(to));
    if (!downgrades_warned_.insert(std::move(pair)).second)
        return;
    if (downgrades_warned_.size() > max_downgrade_warnings) {
        say(log_level::warning, "more redirects from https to http: counted (redirect_downgrades), no longer "
                                "logged");
        return;
    }
    say(log_level::warning, "redirect from ", from, " to ", to,
        " downgrades to cleartext (followed: in scope; warned once for these two origins)");
}

// ---- robots.txt and sitemaps ----

void crawl_state::robots_fetched(ticket& t, const fetch_outcome& response) {
    const std::string origin = origin_names_.at(t.item.robots_for);
    const host_id host = t.slot.host();
    // Redirects of robots.txt are followed as items of their own, through the frontier of their host
    // (RFC 9309 2.3.1.2: at least five hops). The origin stays blocked until the chain ends.
    if (!response.error && is_redirect_status(response.status) && t.item.redirects_left > 0 && !stopping_) {
        const auto url = boost::urls::parse_uri(t.item.url).value();
        auto decision = decide_redirect(url, response.location, t.item.redirects_left);
        if (decision.target && !decision.error && hooks_.hold()) {
            if (decision.downgrade)
                note_downgrade(t.item.url, decision.target->buffer());
            work_item hop;
            hop.url = std::string(decision.target->buffer());
            hop.referrer = t.item.url;
            hop.redirects_left = t.item.redirects_left - 1;
            hop.kind = item_kind::robots;
            hop.robots_for = t.item.robots_for;
            const host_id target_host = host_number(host_of(hop.url));
            frontier_.push_urgent(target_host, std::move(hop), now_());
            ++result_.stats["robots_redirects"];
            return;
        }
    }
    ++result_.stats["robots_fetched"];
    counters_changed_ = true;
    auto& state = robots_[origin];
    state.unavailable = false;
    state.unreachable = {};
    state.cause.clear();
    std::string outcome;
    if (response.error) {
        state.unavailable = true;
        outcome = std::string(error_kind(response.error));
        state.cause = t.item.url + ": " + outcome + " (" + response.error.message() +
                      (response.error_detail.empty() ? "" : ": ") + std::string(response.error_detail) + ")";
        // No connection could be made: the pages would fail the same way. Their records say so (connection
        // refused, host not found, certificate invalid...) rather than blaming robots.txt.
        if (response.status == 0 && (!response.connected || response.error == error::tls_handshake_failed ||
                                     response.error == error::certificate_invalid))
            state.unreachable = response.error;
    } else if (is_redirect_status(response.status)) {
        state.rules = robots_rules::allow_all(); // too many redirects: RFC 9309 treats it as unavailable
        outcome = "too many redirects";
    } else {
        outcome = std::to_string(response.status);
        switch (robots_verdict_for_status(response.status)) {
        case robots_fetch_verdict::parse:
            state.rules = robots_rules::parse(response.body, product_token(agent_));
            break;
        case robots_fetch_verdict::allow_all:
            state.rules = robots_rules::allow_all();
            break;
        case robots_fetch_verdict::disallow_all:
            state.unavailable = true;
            break;
        }
    }
    const bool root_origin = root_origins_.contains(origin);
    if (state.unavailable) {
        const std::string tries =
            " after " + std::to_string(t.item.tries) + (t.item.tries == 1 ? " try" : " tries");
        if (state.unreachable)
            // The pages' records carry the network error itself: the detail says where it came from.
            state.cause = "robots.txt could not be fetched" + tries + ": the origin was not reachable" +
                          (response.error_detail.empty() ? "" : ": ") + std::string(response.error_detail);
        else if (state.cause.empty())
            state.cause = t.item.url + " answered " + outcome + tries;
        else
            state.cause += tries;
        state.rules = robots_rules::disallow_all();
        state.retry_at = now_() + config_.robots.unavailable_retry;
        ++result_.stats["robots_unavailable"];
        if (state.unreachable)
            say(root_origin ? log_level::error : log_level::warning, origin,
                " could not be reached: ", state.unreachable.message(),
                response.error_detail.empty() ? "" : " (", response.error_detail,
                response.error_detail.empty() ? "" : ")");
        else
            say(log_level::warning, t.item.url, ": ", outcome, ": the origin is off limits for ",
                human_duration(config_.robots.unavailable_retry), " (RFC 9309)");
    } else {
        say(log_level::info, t.item.url, ": ", outcome);
    }
    state.status = origin_robots::state::known;
    if (!state.unavailable)
        state.retry_at = now_() + robots_cache_lifetime; // RFC 9309 2.4: a cached answer at most 24 hours

    if (const auto delay = state.rules.crawl_delay(); delay && !state.unavailable) {
        const host_id origin_host = host_number(host_of(origin));
        robots_delay_[origin_host] = std::min<clock_type::duration>(*delay, config_.robots.max_crawl_delay);
        apply_delay(origin_host, false);
        // The shared frontier spaces the host's leases, whichever instance takes them: the Crawl-delay is a
        // floor there under the host's delay (the control API's, its rule's or politeness.delay).
        if (shared_)
            batch_.host_delays.emplace_back(
                host_of(origin),
                std::chrono::duration_cast<std::chrono::milliseconds>(robots_delay_[origin_host]));
        say(log_level::info, origin, ": Crawl-delay ", human_duration(*delay));
    }

    if (config_.sitemaps && root_origin && !state.unavailable)
        queue_sitemaps_of(origin, state.rules.sitemaps());

    const auto now = now_();
    for (const host_id blocked : state.blocked)
        frontier_.unblock(blocked, now);
    state.blocked.clear();
    (void)host;
}

void crawl_state::queue_sitemaps_of(const std::string& origin, const std::vector<std::string>& declared) {
    std::vector<std::string> candidates = declared;
    const bool guessed = candidates.empty();
    if (guessed)
        candidates.push_back(origin + "/sitemap.xml");
    const auto base = boost::urls::parse_uri(origin + "/").value();
    const std::string referrer = config_.robots.obey ? origin + "/robots.txt" : std::string();
    for (const auto& location : candidates) {
        auto url = normalize_reference(base, location);
        if (!url) {
            skip("invalid_url");
            continue;
        }
        if (!in_scope(*url))
            continue;
        // A guess has no referrer: no document names it.
        admit(*url, guessed ? std::string() : referrer, config_.max_redirect, 0, item_kind::sitemap, false,
              requisite_kind::image, guessed);
    }
}

void crawl_state::queue_sitemap(ticket& t, const fetch_outcome& response, record& r) {
    const collect_outlinks collect(*this, t);
    std::string inflated;
    std::string_view xml = response.body;
    if (looks_gzipped(response.body)) {
        // A .xml.gz served as a file, not with Content-Encoding: the fetcher left it compressed.
        auto plain = gunzip(response.body, config_.fetch.max_body_bytes);
        if (!plain) {
            r.error = error::decoding_failed;
            return;
        }
        inflated = std::move(*plain);
        xml = inflated;
    }
    auto document = parse_sitemap(xml);
    if (!document) {
        r.error = document.error();
        return;
    }
    if (document->truncated)
        skip("sitemap_truncated");
    const auto sitemap_url = boost::urls::parse_uri(t.item.url).value();
    const boost::urls::url base{sitemap_url};
    std::vector<boost::urls::url> urls;
    urls.reserve(document->locations.size());
    for (std::size_t i = 0; i < document->locations.size(); ++i) {
        auto url = normalize_reference(base, document->locations[i]);
        if (!url) {
            skip(url.error() == error::unsupported_scheme ? "not_http" : "invalid_url");
            continue;
        }
        if (schedule_ && i < document->hints.size())
            apply_sitemap_hints(url->buffer(), document->hints[i]);
        urls.push_back(std::move(*url));
    }
    if (document->is_index) {
        // An index lists sitemaps; an index inside an index is not allowed by the protocol (depth 1).
        if (t.item.depth >= 1)
            return;
        for (const auto& url : urls) {
            if (!in_scope(url))
                continue;
            ++r.num_urls;
            if (admit(url, t.item.url, config_.max_redirect, t.item.depth + 1, item_kind::sitemap, false))
                ++r.num_new_urls;
        }
        return;
    }
    admit_links(urls, t.item.url, 1, true, r);
}

// ---- what the loop reads ----

crawl_progress crawl_state::progress() const {
    crawl_progress p;
    p.records = result_.done;
    p.in_flight = in_flight_;
    p.queued = frontier_.waiting();
    p.hosts = frontier_.hosts();
    p.failures = failures_;
    p.robots_denied = robots_denied_;
    p.retries = retries_;
    p.bytes = bytes_;
    p.elapsed = result_.runs > 0 ? previous_elapsed_ + (now_() - started_) : clock_type::duration{};
    return p;
}

void crawl_state::internal_error(ticket& t, std::string_view failure) {
    say(log_level::error, t.item.url, ": internal error: ", failure);
    if (t.item.kind == item_kind::robots) {
        // The origin's pages must not wait for a robots.txt that will never come.
        fetch_outcome failed;
        failed.error = error::internal_error;
        t.item.redirects_left = 0;
        robots_fetched(t, failed);
        return;
    }
    record r;
    r.url = t.item.url;
    r.referrer = t.item.referrer;
    r.requisite = requisite_name(t.item);
    r.depth = t.item.depth;
    r.tries = t.item.tries;
    r.error = error::internal_error;
    complete(t, std::move(r));
}

} // namespace asiocrawl::detail
