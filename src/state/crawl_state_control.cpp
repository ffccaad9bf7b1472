// Steering a running crawl (docs/CONTROL.md): pauses and limits per host, seeds added while it runs, and what
// the control API lists. Sans-io like the rest of the state: the crawler calls these on its executor and
// pumps.
#include "state/crawl_state.hpp"

#include "url/url.hpp"
#include "util/human_units.hpp"
#include <asiocrawl/error.hpp>

#include <algorithm>
#include <stdexcept>

namespace asiocrawl::detail {

namespace {

std::chrono::milliseconds millis(std::chrono::steady_clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

} // namespace

void crawl_state::apply_delay(host_id host, bool from_last_start) {
    const auto control = controls_.find(host_names_[host]);
    const host_rule* rule = host_rule_[host];
    const auto base = control != controls_.end() && control->second.delay ? *control->second.delay
                      : rule && rule->delay                               ? clock_type::duration(*rule->delay)
                                                                          : config_.politeness.delay;
    const auto effective = std::max(base, robots_delay_[host]);
    const auto delay = throttle_ ? throttle_->set_floor(host, effective) : effective;
    // The control API's change applies from the host's last request start (a shorter delay at once); a
    // robots.txt Crawl-delay from the next start, as before there was an API.
    if (from_last_start)
        frontier_.reset_delay(host, delay, now_());
    else
        frontier_.set_delay(host, delay, now_());
}

void crawl_state::apply_control(host_id host, const host_control& control) {
    if (control.paused)
        frontier_.pause(host);
    else
        frontier_.resume(host, now_());
    // The API's limits first, then the host's rule (crawler_config::hosts), then the global settings.
    const host_rule* rule = host_rule_[host];
    if (control.max_per_host)
        frontier_.set_max_per_host(host, *control.max_per_host, now_());
    else if (rule && rule->max_per_host)
        frontier_.set_max_per_host(host, *rule->max_per_host, now_());
    if (control.delay || (rule && rule->delay))
        apply_delay(host, true);
}

void crawl_state::pause_host(std::string_view host, std::string_view how) {
    auto& control = controls_[std::string(host)];
    control.paused = true;
    counters_changed_ = true;
    if (const auto it = host_numbers_.find(std::string(host)); it != host_numbers_.end())
        frontier_.pause(it->second);
    say(log_level::info, host, ": paused", how);
}

bool crawl_state::resume_host(std::string_view host, std::string_view how) {
    const auto control = controls_.find(host);
    if (control == controls_.end() || !control->second.paused)
        return false;
    control->second.paused = false;
    if (!control->second.delay && !control->second.max_per_host)
        controls_.erase(control);
    counters_changed_ = true;
    if (const auto it = host_numbers_.find(std::string(host)); it != host_numbers_.end())
        frontier_.resume(it->second, now_());
    say(log_level::info, host, ": resumed", how);
    return true;
}

void crawl_state::set_host_limits(std::string_view host, std::optional<clock_type::duration> delay,
                                  std::optional<std::size_t> max_per_host, std::string_view how) {
    if (delay && *delay < clock_type::duration::zero())
        throw std::invalid_argument("delay must not be negative");
    if (max_per_host && *max_per_host == 0)
        throw std::invalid_argument("max_per_host must be at least 1");
    auto& control = controls_[std::string(host)];
    if (delay)
        control.delay = delay;
    if (max_per_host)
        control.max_per_host = max_per_host;
    counters_changed_ = true;
    if (const auto it = host_numbers_.find(std::string(host)); it != host_numbers_.end())
        apply_control(it->second, control);
    say(log_level::info, host, ": limits set (delay ",
        control.delay ? human_duration(millis(*control.delay)) : std::string("as configured"),
        ", max_per_host ",
        control.max_per_host ? std::to_string(*control.max_per_host) : std::string("as configured"), ")",
        how);
}

void crawl_state::mirror_controls(const std::map<std::string, host_control, std::less<>>& shared,
                                  std::string_view how) {
    std::vector<std::string> resumed;
    for (const auto& [name, control] : controls_) {
        const auto there = shared.find(name);
        if (control.paused && (there == shared.end() || !there->second.paused))
            resumed.push_back(name);
    }
    for (const auto& name : resumed)
        resume_host(name, how);
    for (const auto& [name, wanted] : shared) {
        const auto here = controls_.find(name);
        if (wanted.paused && (here == controls_.end() || !here->second.paused))
            pause_host(name, how);
        // The API sets limits and never clears them: a field set there and not here (or otherwise) is set.
        const auto now = controls_.find(name);
        const bool new_delay = wanted.delay && (now == controls_.end() || now->second.delay != wanted.delay);
        const bool new_max = wanted.max_per_host &&
                             (now == controls_.end() || now->second.max_per_host != wanted.max_per_host);
        if (new_delay || new_max)
            set_host_limits(name, new_delay ? wanted.delay : std::nullopt,
                            new_max ? wanted.max_per_host : std::nullopt, how);
    }
}

std::size_t crawl_state::paused_waiting() const {
    std::size_t n = 0;
    for (const auto& [name, control] : controls_)
        if (control.paused)
            if (const auto it = host_numbers_.find(name); it != host_numbers_.end())
                n += frontier_.held(it->second);
    return n;
}

std::string crawl_state::admit_seed(std::string_view text) {
    if (stopping_)
        return "stopping";
    auto url = parse_root(text);
    if (!url)
        return "invalid_url";
    if (!in_scope(*url))
        return std::string(to_string(scope_.check(*url)));
    if (seen_.contains(url_fingerprint(url->buffer(), seed_)))
        return "already_seen";
    if (config_.max_pages && pages_admitted_ >= *config_.max_pages) {
        skip("max_pages");
        return "max_pages";
    }
    if (!admit(*url, {}, config_.max_redirect, 0, item_kind::page, false))
        return "closing";
    say(log_level::info, url->buffer(), ": added as a seed");
    return {};
}

void crawl_state::count_for_host(const record& r) {
    const auto it = host_numbers_.find(std::string(host_of(r.url)));
    if (it == host_numbers_.end())
        return;
    ++host_done_[it->second];
    if (!r.failed() || r.error == error::robots_denied || r.error == error::type_rejected)
        return;
    ++host_failures_[it->second];
    if (recent_failures_.size() == kept_failures)
        recent_failures_.pop_front();
    recent_failures_.push_back(
        failed_url{r.url, std::string(error_kind(r.error)), r.status, r.error_detail.substr(0, 1000)});
}

std::string_view crawl_state::rule_fields(std::string_view url) const {
    if (rules_.empty())
        return {};
    const auto rule = rules_.index_for_url(url);
    return rule ? std::string_view(rule_fields_[*rule]) : std::string_view{};
}

std::vector<host_status> crawl_state::host_statuses() const {
    std::vector<host_status> out;
    out.reserve(host_names_.size());
    for (host_id id = 0; id < host_names_.size(); ++id) {
        host_status h;
        h.host = host_names_[id];
        h.waiting = frontier_.held(id) + frontier_.spilled(id);
        h.in_flight = frontier_.active(id);
        h.delay = millis(frontier_.delay(id));
        h.max_per_host = frontier_.max_per_host(id);
        h.done = host_done_[id];
        h.failures = host_failures_[id];
        h.paused = frontier_.paused(id);
        out.push_back(std::move(h));
    }
    // Hosts paused or limited before any URL of theirs came.
    for (const auto& [name, control] : controls_) {
        if (host_numbers_.contains(name))
            continue;
        host_status h;
        h.host = name;
        h.delay = millis(control.delay.value_or(config_.politeness.delay));
        h.max_per_host = control.max_per_host.value_or(config_.politeness.max_per_host);
        h.paused = control.paused;
        out.push_back(std::move(h));
    }
    return out;
}

url_page crawl_state::list_urls(const url_query& query) const {
    url_page page;
    const auto take = [&](url_status u) {
        if (page.total++ >= query.offset && page.urls.size() < query.limit)
            page.urls.push_back(std::move(u));
    };
    if (query.state == "failed") {
        for (const auto& f : recent_failures_) {
            if (!query.host.empty() && host_of(f.url) != query.host)
                continue;
            take(url_status{f.url, std::string(host_of(f.url)), "failed", f.error_kind, f.status, f.detail});
        }
        return page;
    }
    if (query.state != "waiting")
        throw std::invalid_argument("state must be \"waiting\" or \"failed\"");
    // Counted by host without a walk: only the page's own items are visited, so a poll costs the page and the
    // number of hosts, not the crawl's size.
    for (host_id id = 0; id < host_names_.size(); ++id) {
        if (!query.host.empty() && host_names_[id] != query.host)
            continue;
        const std::size_t held = frontier_.held(id);
        const std::size_t before = page.total;
        page.total += held;
        if (page.urls.size() >= query.limit || page.total <= query.offset)
            continue;
        const std::size_t skip = query.offset > before ? query.offset - before : 0;
        frontier_.for_each_waiting(id, skip, query.limit - page.urls.size(), [&](const work_item& item) {
            page.urls.push_back(url_status{item.url, host_names_[id], "waiting", {}, 0, {}});
        });
    }
    return page;
}

boost::json::object crawl_state::controls_json() const {
    boost::json::object out;
    for (const auto& [name, control] : controls_) {
        boost::json::object c;
        c["paused"] = control.paused;
        if (control.delay)
            c["delay_ms"] = millis(*control.delay).count();
        if (control.max_per_host)
            c["max_per_host"] = *control.max_per_host;
        out[name] = std::move(c);
    }
    return out;
}

void crawl_state::restore_controls(const boost::json::object& saved) {
    for (const auto& [name, value] : saved) {
        const auto& c = value.as_object();
        const std::string host(name);
        if (controls_.contains(host))
            continue; // set by the embedder before this run: it wins
        host_control control;
        control.paused = c.at("paused").as_bool();
        if (const auto* delay = c.if_contains("delay_ms"))
            control.delay = std::chrono::milliseconds(delay->to_number<std::int64_t>());
        if (const auto* max = c.if_contains("max_per_host"))
            control.max_per_host = max->to_number<std::size_t>();
        const auto& kept = controls_.emplace(host, control).first->second;
        if (const auto it = host_numbers_.find(host); it != host_numbers_.end())
            apply_control(it->second, kept);
        if (control.paused)
            say(log_level::info, host, ": still paused (from the saved state)");
    }
}

} // namespace asiocrawl::detail
